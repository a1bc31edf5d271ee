// DOC dist-page begin
#include <tessera/dist/objects.hpp>

#include <cstdint>
#include <cstdio>

struct Account {
  long balance = 0;
};

int main(int argc, char** argv) {
  tessera::dist::Communicator comm(&argc, &argv);  // initialises MPI, or joins the program's
  tessera::dist::Objects objects(comm);
  // Every rank registers the same handlers, in the same order.
  auto deposit = objects.handler<Account, long>(
      "deposit", [](Account& a, tessera::dist::HandlerContext&, long amount) { a.balance += amount; });
  // Four accounts per rank, named by number; each lives where it is added, for now.
  const int per_rank = 4, accounts = per_rank * comm.size();
  for (int k = 0; k < per_rank; ++k)
    objects.add(tessera::dist::ObjectName{static_cast<std::uint64_t>(comm.rank() * per_rank + k)}, Account{});
  objects.wait();
  // Every rank pays 10 into every account, wherever it lives; account 0 moves meanwhile.
  if (comm.rank() == 0) objects.migrate(tessera::dist::ObjectName{0}, comm.size() - 1);
  for (int k = 0; k < accounts; ++k)
    objects.send(tessera::dist::ObjectName{static_cast<std::uint64_t>(k)}, deposit, 10L);
  objects.wait();  // every message handled, on every rank
  int wrong = 0;
  for (auto name : objects.local_names()) wrong += objects.local<Account>(name).balance != 10L * comm.size();
  std::printf("rank %d: %zu accounts, %d wrong\n", comm.rank(), objects.local_names().size(), wrong);
  return wrong == 0 ? 0 : 1;
}
// DOC dist-page end
