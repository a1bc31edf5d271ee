// A kernel that throws on one rank, in a graph over a distributed tensor: the other ranks wait
// for that rank's halo messages, so the run must end every rank with the error, not hang.
#include <tessera/device/device_set.hpp>
#include <tessera/dist/communicator.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace {
struct Shift {
  int failing_rank;
  int steps_before;
  int* step;
  template <typename In, typename Out>
  void operator()(In in, Out out) const {
    if (*step >= steps_before && in.global_idx(1) == 0 && in.global_idx(0) == 0 && failing_rank == 0)
      throw std::runtime_error("boom at step " + std::to_string(*step));
    *out = *in.offset(1, -1);
  }
};
}  // namespace

int main(int argc, char** argv) {
  tessera::dist::Communicator comm(&argc, &argv);
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor;
  tessera::TensorOptions<2> o;
  o.over(comm).with_padding(1);
  o.rank_grid = {1, static_cast<std::size_t>(comm.size())};
  tessera::Tensor<double, 2> a(memory, {16, 32}, o.named("a")), b(memory, {16, 32}, o.named("b"));
  int step = 0;
  // Rank 0 holds global row 0; its kernel throws at the third step.
  Shift kernel{comm.rank(), 2, &step};
  tessera::Graph g("shift");
  g.split(kernel, tessera::concurrent_padded_access(a), b)
      .then_split(kernel, tessera::concurrent_padded_access(b), a)
      .then([&] { ++step; });
  g.run_n(executor, 10).get();
  std::printf("rank %d: finished all steps, which it should not have\n", comm.rank());
  return 0;
}
