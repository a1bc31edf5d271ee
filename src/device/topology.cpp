#include <tessera/device/topology.hpp>

#include <thread>

#if defined(TESSERA_HAVE_HWLOC)
#include <hwloc.h>
#endif

namespace tessera {

std::string describe_topology() {
#if defined(TESSERA_HAVE_HWLOC)
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  // PCI devices are filtered out by default; keep the GPUs so their locality can be shown.
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_load(topo);
  auto count = [&](hwloc_obj_type_t t) { return hwloc_get_nbobjs_by_type(topo, t); };
  std::string out = "topology (hwloc):\n";
  out += "  packages " + std::to_string(count(HWLOC_OBJ_PACKAGE)) + ", NUMA nodes " +
         std::to_string(count(HWLOC_OBJ_NUMANODE)) + ", cores " + std::to_string(count(HWLOC_OBJ_CORE)) +
         ", hardware threads " + std::to_string(count(HWLOC_OBJ_PU)) + "\n";
  for (hwloc_obj_type_t t : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    const int n = count(t);
    if (n > 0) {
      hwloc_obj_t c = hwloc_get_obj_by_type(topo, t, 0);
      out += std::string("  ") + (t == HWLOC_OBJ_L3CACHE ? "L3" : "L2") + ": " + std::to_string(n) + " x " +
             std::to_string(c->attr->cache.size / 1024) + " KiB\n";
    }
  }
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os != nullptr; os = hwloc_get_next_osdev(topo, os)) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU && os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC) continue;
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, os);
    char cpus[256] = "?";
    if (near != nullptr && near->cpuset != nullptr) hwloc_bitmap_list_snprintf(cpus, sizeof cpus, near->cpuset);
    out += "  GPU " + std::string(os->name != nullptr ? os->name : "?") + " near cores " + cpus + "\n";
  }
  hwloc_topology_destroy(topo);
  return out;
#else
  return "topology: hwloc is not part of this build; " + std::to_string(std::thread::hardware_concurrency()) +
         " hardware threads\n";
#endif
}

namespace {

std::size_t query_cache_bytes([[maybe_unused]] int level) {
#if defined(TESSERA_HAVE_HWLOC)
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 0;
  std::size_t bytes = 0;
  if (hwloc_topology_load(topo) == 0) {
    const hwloc_obj_type_t t = level == 3 ? HWLOC_OBJ_L3CACHE : HWLOC_OBJ_L2CACHE;
    if (hwloc_get_nbobjs_by_type(topo, t) > 0) bytes = std::size_t(hwloc_get_obj_by_type(topo, t, 0)->attr->cache.size);
  }
  hwloc_topology_destroy(topo);
  return bytes;
#else
  return 0;
#endif
}

}  // namespace

std::size_t cache_bytes(int level) {
  static const std::size_t l2 = query_cache_bytes(2);
  static const std::size_t l3 = query_cache_bytes(3);
  return level == 3 ? l3 : level == 2 ? l2 : 0;
}

}  // namespace tessera
