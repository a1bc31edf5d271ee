// Copy bandwidth between the host and a simulated device, and between two simulated devices,
// through the device API (copy stream, then synchronize), against a plain memcpy of the same
// bytes between two host buffers in the same run. The sim backend's copy is a memcpy on the
// stream's thread, so the ratio is the cost of the stream machinery at this size.
#include "copies.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/memory/bytes.hpp>

#include <cstring>
#include <vector>

namespace tessera::bench {

void run_copy_benchmarks(Report& report, bool quick) {
  const std::size_t bytes = quick ? (std::size_t{16} << 20) : (std::size_t{64} << 20);
  const int reps = quick ? 5 : 15;
  SimOptions options;
  options.memory_bytes = 4 * bytes;
  auto devices = DeviceSet::simulated(2, options);
  Device& a = devices.accelerator(0);
  Device& b = devices.accelerator(1);
  std::vector<char> host_in(bytes, 'a'), host_out(bytes, 'b');
  void* da = a.allocate(bytes);
  void* db = b.allocate(bytes);

  const double t_memcpy = median_seconds([&] { std::memcpy(host_out.data(), host_in.data(), bytes); }, reps);
  const double memcpy_gbs = static_cast<double>(bytes) / t_memcpy / 1e9;
  const std::string name = "copy-" + format_bytes(bytes);
  report.add({name, "host-memcpy", "bandwidth", memcpy_gbs, "GB/s", "", 0, 0});

  auto measure = [&](const char* variant, void* dst, const void* src, CopyDirection dir, Device& on) {
    Stream& s = on.copy_stream(dir);
    const double t = median_seconds(
        [&] {
          on.copy_async(dst, src, bytes, dir, s);
          s.synchronize();
        },
        reps);
    report.add({name, variant, "bandwidth", static_cast<double>(bytes) / t / 1e9, "GB/s", "host-memcpy", memcpy_gbs, 0});
  };
  measure("host-to-sim", da, host_in.data(), CopyDirection::host_to_device, a);
  measure("sim-to-host", host_out.data(), da, CopyDirection::device_to_host, a);
  measure("sim-to-sim", db, da, CopyDirection::device_to_device, a);

  a.deallocate(da, bytes);
  b.deallocate(db, bytes);
}

}  // namespace tessera::bench
