#pragma once
// Job: one caller-owned piece of work that the executor's workers run once, without a graph:
// the entry point for front ends that create work one piece at a time (dynamic tasks, dataflow
// firings, message handlers) and cannot afford a graph, an allocation or a future per piece.

#include <tessera/sched/detail/task.hpp>
#include <tessera/sched/exec_kind.hpp>

namespace tessera {

class Executor;

/// Derive from Job and pass the object to Executor::schedule: `run(job)` is then called
/// once on a worker of the job's kind (cpu: any worker; gpu: a GPU-priority worker, which keeps
/// device submission off the CPU workers' queues). The owner keeps the object alive until it has
/// run and tracks its completion itself; a Job may be scheduled again once it has run.
///
///   struct Hello : tessera::Job {
///     Hello() : Job([](tessera::Job&) { std::puts("hi"); }) {}
///   } hello;
///   executor.schedule(hello);
class Job : private detail::Task {
 public:
  using Run = void (*)(Job& self);

  explicit Job(Run run, ExecKind kind = ExecKind::cpu) noexcept : run_(run) {
    execute = [](detail::Task* self, detail::Worker*) {
      auto& job = static_cast<Job&>(*self);
      job.run_(job);
    };
    exec_kind = kind;
  }

  ExecKind job_kind() const noexcept { return exec_kind; }

 protected:
  ~Job() = default;
  Job(const Job&) = default;
  Job& operator=(const Job&) = default;

 private:
  friend class Executor;
  detail::Task& scheduled() noexcept { return *this; }
  Run run_;
};

}  // namespace tessera
