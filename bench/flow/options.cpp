// (being written)
#include "suites.hpp"
namespace flow_bench {
void options(tessera::bench::Report&, const Options&) {}
}  // namespace flow_bench
