// DOC dist-tensor-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/dist/communicator.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdio>
#include <vector>

// Heat spreading from the hot left edge: the centre and its four neighbours, averaged.
struct Average {
  template <typename In, typename Out>
  void operator()(In in, Out out) const {
    *out = 0.2 * (*in + *in.offset(0, -1) + *in.offset(0, 1) + *in.offset(1, -1) + *in.offset(1, 1));
  }
};
struct HotLeftEdge {
  template <typename It>
  void operator()(It it) const {
    if (it.global_idx(0) == 0) *it.offset(0, -1) = 100.0;  // the padding beyond x = 0
  }
};

// 200 steps of the same graph on the tensors `options` describes; the whole field, on every rank,
// and its hottest value.
std::vector<double> heat(tessera::MemoryManager& memory, tessera::Executor& executor, tessera::TensorOptions<2> options,
                         double& hottest_value) {
  options.with_padding(1);
  tessera::Tensor<double, 2> u(memory, {256, 192}, options.named("u")), v(memory, {256, 192}, options.named("v"));
  tessera::ReductionResult<double> hottest;
  tessera::Graph step("heat step");
  step.split(HotLeftEdge{}, u)
      .then_split(Average{}, tessera::concurrent_padded_access(u), v)  // halos, between ranks too
      .then_split(HotLeftEdge{}, v)
      .then_split(Average{}, tessera::concurrent_padded_access(v), u)
      .then_reduce(u, hottest, tessera::Max{});  // over every rank
  step.run_n(executor, 100).get();
  hottest_value = hottest.value();
  std::vector<double> field(256 * 192);
  u.gather_to(field.data());  // collective: every rank gets the whole field
  return field;
}

int main(int argc, char** argv) {
  tessera::dist::Communicator comm(&argc, &argv);
  tessera::DeviceSet devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  tessera::Executor executor(comm.executor_options());  // this rank's share of the node's cores

  tessera::TensorOptions<2> spread;
  spread.over(comm);               // each rank holds one part of every tensor
  spread.sub_partitions = {1, 4};  // four blocks per rank: the inner ones need no halo
  double hottest = 0, hottest_alone = 0;
  const std::vector<double> distributed = heat(memory, executor, spread, hottest);
  const std::vector<double> alone = heat(memory, executor, {}, hottest_alone);  // each rank on its own
  const bool same = distributed == alone && hottest == hottest_alone;
  std::printf("rank %d of %d: hottest %.6f, %s\n", comm.rank(), comm.size(), hottest,
              same ? "the same bits as one process" : "DIFFERENT from one process");
  return same ? 0 : 1;
}
// DOC dist-tensor-page end
