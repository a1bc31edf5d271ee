// tessera-pingpong: PREMA's ping-pong (§4.2) between two ranks, 8 B to 64 MiB, through raw MPI
// and through tessera::dist in the same run, alternating so both see the same machine.
//
//   mpirun -np 2 tessera-pingpong [--min-bytes 8] [--max-bytes 67108864] [--seconds 0.05] [--buffer]
//   tessera-pingpong --help | --version
//
// --buffer sends a tessera Buffer's rows (held through the memory layer) instead of plain bytes.
// The program calls MPI itself too (the raw side), on MPI_COMM_WORLD: tessera works on its own
// duplicate, so the two never match each other's messages.

#include "pingpong.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera_app/cli.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) try {
  std::size_t min_bytes = 8, max_bytes = 64u << 20;
  double seconds = 0.05;
  bool use_buffer = false;
  CLI::App app{"PREMA's ping-pong between two ranks: raw MPI against tessera::dist", "tessera-pingpong"};
  tessera_app::add_standard_options(app);
  app.add_option("--min-bytes", min_bytes, "smallest message")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--max-bytes", max_bytes, "largest message (sizes double from the smallest)")
      ->capture_default_str()
      ->check(tessera_app::not_negative)
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  app.add_option("--seconds", seconds, "time per size and variant, roughly")
      ->capture_default_str()
      ->check(tessera_app::finite_in(0, 60, tessera_app::Ends::open_below));
  app.add_flag("--buffer", use_buffer, "send a tessera Buffer's rows, not plain bytes");
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (min_bytes > max_bytes)
    throw tessera::Error("--min-bytes " + std::to_string(min_bytes) + " is above --max-bytes " +
                         std::to_string(max_bytes));

  tessera::dist::Communicator comm(&argc, &argv);
  if (comm.size() < 2)
    throw tessera::Error("tessera-pingpong needs two ranks: mpirun -np 2 tessera-pingpong (got " +
                         std::to_string(comm.size()) + ")");
  auto devices = tessera::DeviceSet::select("host");
  tessera::MemoryManager memory(devices);
  // A pattern, checked at the end on both ranks: every trip carried the bytes intact.
  auto pattern = [](std::size_t i) { return static_cast<std::byte>((i * 31 + 7) % 251); };
  std::vector<std::byte> bytes(max_bytes);
  for (std::size_t i = 0; i < max_bytes; ++i) bytes[i] = pattern(i);
  tessera::Buffer buffer(memory, max_bytes, 1, "message");
  {
    auto* h = static_cast<std::byte*>(buffer.request(tessera::Access::write).get());
    for (std::size_t i = 0; i < max_bytes; ++i) h[i] = pattern(i);
    buffer.release(tessera::Access::write);
  }
  if (comm.rank() == 0) {
    std::printf("ping-pong between 2 of %d ranks, %s, %s; one-way time, best of 3 alternating rounds\n", comm.size(),
                comm.library_version().c_str(), use_buffer ? "tessera Buffer rows" : "plain bytes");
    std::printf("%12s %12s %12s %8s %12s %12s\n", "bytes", "MPI us", "tessera us", "ratio", "MPI GB/s", "tessera GB/s");
  }
  for (std::size_t n = min_bytes; n <= max_bytes; n *= 2) {
    const int reps = pingpong::repetitions(n, seconds);
    double raw = 1e30, ours = 1e30;
    for (int round = 0; round < 3; ++round) {
      raw = std::min(raw, pingpong::raw_mpi(MPI_COMM_WORLD, bytes.data(), n, reps));
      ours = std::min(ours, use_buffer ? pingpong::tessera_buffer(comm, buffer, n, reps)
                                       : pingpong::tessera_bytes(comm, bytes.data(), n, reps));
    }
    if (comm.rank() == 0)
      std::printf("%12zu %12.2f %12.2f %8.3f %12.3f %12.3f\n", n, raw * 1e6, ours * 1e6, ours / raw,
                  static_cast<double>(n) / raw * 1e-9, static_cast<double>(n) / ours * 1e-9);
    if (n > max_bytes / 2) break;
  }
  std::size_t wrong = 0;
  if (use_buffer) {
    const auto* h = static_cast<const std::byte*>(buffer.request(tessera::Access::read).get());
    for (std::size_t i = 0; i < max_bytes; ++i) wrong += h[i] != pattern(i);
    buffer.release(tessera::Access::read);
  } else {
    for (std::size_t i = 0; i < max_bytes; ++i) wrong += bytes[i] != pattern(i);
  }
  if (wrong != 0) {
    std::fprintf(stderr, "tessera-pingpong: rank %d: %zu bytes arrived changed\n", comm.rank(), wrong);
    return 1;
  }
  if (comm.rank() == 0) std::printf("payload intact on rank 0\n");
  return 0;
} catch (const tessera::Error& e) {
  std::fprintf(stderr, "tessera-pingpong: %s\n", e.what());
  return 1;
}
