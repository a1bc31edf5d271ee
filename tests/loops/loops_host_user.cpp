// A loop recorded from a file g++ compiled (no GPU body): on a CUDA device it must refuse,
// naming the loop, rather than run something else. Linked into test_loops_cuda.
#include "loops_host_user.hpp"

void record_host_only_loop(tessera::loops::Block& grid, tessera::loops::Dataset<double>& u) {
  namespace tl = tessera::loops;
  const tl::Stencil site(2, {{0, 0, 0}}, "site");
  tl::par_loop([](tl::Acc<double> v) { v(0, 0) = 1.0; }, "host-only fill", grid, tl::Range::of(2, {0, 8, 0, 8}),
               tl::write(u, site));
}
