// DOC dist-steal begin
#include <tessera/dist/objects.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>

struct Cell {
  long updates = 0;
};

int main(int argc, char** argv) {
  tessera::dist::Communicator comm(&argc, &argv);
  tessera::dist::ObjectsOptions options;
  options.steal_work = true;  // a rank with nothing to do takes objects, with their messages
  tessera::dist::Objects objects(comm, options);
  auto relax = objects.handler<Cell>("relax", [](Cell& c, tessera::dist::HandlerContext&) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
    while (std::chrono::steady_clock::now() < until) {
    }  // a long handler
    ++c.updates;
  });
  // All 12 cells start on rank 0: the load is as uneven as it gets.
  if (comm.rank() == 0)
    for (std::uint64_t k = 0; k < 12; ++k) objects.add(tessera::dist::ObjectName{k}, Cell{});
  objects.wait();
  for (int round = 0; round < 20; ++round)
    for (std::uint64_t k = 0; k < 12; ++k) objects.send(tessera::dist::ObjectName{k}, relax);
  objects.wait();  // meanwhile the other ranks took cells from rank 0
  std::int64_t updates = 0;
  for (auto name : objects.local_names()) updates += objects.local<Cell>(name).updates;
  const auto sum = tessera::dist::Communicator::Reduce::sum;
  const auto total = comm.all_reduce(updates, sum);
  const auto moved = comm.all_reduce(std::int64_t(comm.rank() == 0 ? 0 : objects.local_names().size()), sum);
  if (comm.rank() == 0)
    std::printf("%lld of %d updates ran; %lld cells now live on other ranks\n", static_cast<long long>(total),
                20 * 12 * comm.size(), static_cast<long long>(moved));
  return total == 20 * 12 * comm.size() ? 0 : 1;
}
// DOC dist-steal end
