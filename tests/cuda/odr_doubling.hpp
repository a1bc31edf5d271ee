#pragma once
// One kernel used from a .cu file (odr_user_cuda.cu) and from a .cpp file (odr_user_host.cpp)
// of one program. for_each, reduce and Graph::split have different bodies under nvcc and a host
// compiler; each carries detail::build_variant, so both instantiations survive the link.

#include <tessera/core/host_device.hpp>
#include <tessera/exec/reduction.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/tensor/tensor.hpp>

namespace odr_test {

struct Doubling {
  template <typename It>
  TESSERA_HOST_DEVICE void operator()(It x) const {
    *x = *x * 2.0f;
  }
};

/// for_each, Graph::split and reduce with Doubling and Sum, compiled by nvcc.
float double_twice_and_sum_cuda(tessera::Executor& ex, tessera::Tensor<float, 1>& t);
/// The same calls compiled by the host compiler.
float double_twice_and_sum_host(tessera::Executor& ex, tessera::Tensor<float, 1>& t);

}  // namespace odr_test
