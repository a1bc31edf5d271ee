#pragma once
// The host's hardware topology as a person reads it: packages, NUMA nodes, cores, caches, and
// which cores each PCI GPU sits near. Uses hwloc when the build has it.

#include <string>

namespace tessera {

/// A multi-line description, or a one-line note when hwloc is not part of the build.
///
///   std::fputs(tessera::describe_topology().c_str(), stdout);
std::string describe_topology();

}  // namespace tessera
