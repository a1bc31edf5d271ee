// (being written)
#include "suites.hpp"
namespace flow_bench {
void overhead(tessera::bench::Report&, const Options&) {}
}  // namespace flow_bench
