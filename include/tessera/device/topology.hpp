#pragma once
// The host's hardware topology as a person reads it: packages, NUMA nodes, cores, caches, and
// which cores each PCI GPU sits near. Uses hwloc when the build has it.

#include <cstddef>
#include <string>

namespace tessera {

/// A multi-line description, or a one-line note when hwloc is not part of the build.
///
///   std::fputs(tessera::describe_topology().c_str(), stdout);
std::string describe_topology();

/// Bytes of one cache of `level` (2 or 3) as hwloc reports it (the first such cache), or 0 when
/// hwloc is not part of the build or reports none. Cached after the first call.
std::size_t cache_bytes(int level);

}  // namespace tessera
