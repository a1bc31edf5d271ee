// The nvcc side of the ODR test (odr_doubling.hpp); odr_user_host.cpp is the other.
#include "odr_doubling.hpp"

float odr_test::double_twice_and_sum_cuda(tessera::Executor& ex, tessera::Tensor<float, 1>& t) {
  return double_twice_and_sum(ex, t);
}

std::vector<float> odr_test::double_by_task_cuda(tessera::TaskRuntime& rt, std::vector<float> values,
                                                 tessera::TaskKind kind) {
  return double_by_task(rt, std::move(values), kind);
}
