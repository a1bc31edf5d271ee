// The nvcc side of the ODR test (odr_doubling.hpp): the same calls as odr_user_host.cpp.
#include "odr_doubling.hpp"

#include <tessera/exec/for_each.hpp>
#include <tessera/graph/graph.hpp>

namespace odr_test {

float double_twice_and_sum_cuda(tessera::Executor& ex, tessera::Tensor<float, 1>& t) {
  tessera::for_each(ex, Doubling{}, t);
  tessera::Graph g("double");
  g.split(Doubling{}, t);
  g.run(ex).get();
  tessera::ReductionResult<float> sum;
  tessera::reduce(ex, t, sum, tessera::Sum{});
  return sum.value();
}

}  // namespace odr_test
