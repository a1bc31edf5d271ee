#pragma once
// The unit a worker's deque holds. Graph nodes, graph launches and parallel-loop helpers all
// start with a Task, so one deque and one dispatch serve every front end.

#include <tessera/sched/exec_kind.hpp>

namespace tessera::detail {

class Worker;

struct Task {
  using Execute = void (*)(Task* self, Worker* worker);

  Execute execute = nullptr;
  ExecKind exec_kind = ExecKind::cpu;
};

}  // namespace tessera::detail
