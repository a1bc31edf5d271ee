#pragma once
// One kernel used from a .cu file (odr_user_cuda.cu) and from a .cpp file (odr_user_host.cpp)
// of one program. for_each, reduce, Graph::split and kernel_task have different bodies under nvcc
// and a host compiler; each carries detail::build_variant, so both instantiations survive the link.

#include <tessera/core/host_device.hpp>
#include <tessera/exec/for_each.hpp>
#include <tessera/exec/reduction.hpp>
#include <tessera/graph/graph.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/task/runtime.hpp>
#include <tessera/tensor/tensor.hpp>

#include <vector>

namespace odr_test {

struct Doubling {
  template <typename It>
  TESSERA_HOST_DEVICE void operator()(It x) const {
    *x = *x * 2.0f;
  }
};

/// for_each, Graph::split and reduce with Doubling and Sum. A template with the build variant as
/// its last parameter, as tessera's own are: an inline function here would be one name with two
/// bodies, the very bug this test guards against.
template <typename Variant = tessera::detail::build_variant>
float double_twice_and_sum(tessera::Executor& ex, tessera::Tensor<float, 1>& t) {
  tessera::for_each(ex, Doubling{}, t);
  tessera::Graph g("double");
  g.split(Doubling{}, t);
  g.run(ex).get();
  tessera::ReductionResult<float> sum;
  tessera::reduce(ex, t, sum, tessera::Sum{});
  return sum.value();
}

/// The same doubling as a Group kernel, for kernel_task.
struct DoublingGroups {
  TESSERA_HOST_DEVICE void operator()(const tessera::Group& g, float* x) const {
    g.items([&](const tessera::Item& it) { x[it.global.x] *= 2.0f; });
  }
};

/// Doubles `values` (a multiple of 32 long) with a kernel_task of `kind`; returns the result.
/// Rethrows the task's failure.
template <typename Variant = tessera::detail::build_variant>
std::vector<float> double_by_task(tessera::TaskRuntime& rt, std::vector<float> values, tessera::TaskKind kind) {
  tessera::HeteroObject<float> x(rt, values.size(), "x");
  x.copy_from(values.data(), kind).get();
  rt.submit(tessera::kernel_task("double", kind, tessera::Grid{{values.size() / 32}, {32}}, DoublingGroups{},
                                 tessera::read_write(x)))
      .get();
  x.copy_to(values.data()).get();
  return values;
}

/// double_twice_and_sum and double_by_task compiled by nvcc (odr_user_cuda.cu).
float double_twice_and_sum_cuda(tessera::Executor& ex, tessera::Tensor<float, 1>& t);
std::vector<float> double_by_task_cuda(tessera::TaskRuntime& rt, std::vector<float> values, tessera::TaskKind kind);
/// The same calls compiled by the host compiler.
float double_twice_and_sum_host(tessera::Executor& ex, tessera::Tensor<float, 1>& t);
std::vector<float> double_by_task_host(tessera::TaskRuntime& rt, std::vector<float> values, tessera::TaskKind kind);

}  // namespace odr_test
