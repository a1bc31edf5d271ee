// The host compiler's side of the ODR test (odr_doubling.hpp); odr_user_cuda.cu is the other.
#include "odr_doubling.hpp"

float odr_test::double_twice_and_sum_host(tessera::Executor& ex, tessera::Tensor<float, 1>& t) {
  return double_twice_and_sum(ex, t);
}
