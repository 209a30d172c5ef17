// SharedInbox's node groups: a rank shares its window exactly with the
// ranks on its own host (MPI_Get_processor_name), of a group the caller
// gives too, and writes into a peer's inbox arrive there. With --hosts=N (tests/two_hosts_test.sh
// passes it) the job must span exactly N hosts, so that a launch that
// fell back to one host cannot pass for two.
#include "halo/internal/shared_inbox.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tests/mpi_testing.h"
#include "tests/test_args.h"

namespace distconv {
namespace {

// Every rank's processor (host) name, by rank of MPI_COMM_WORLD.
std::vector<std::string> host_names() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  const int n = testing::world_size();
  std::vector<char> all(static_cast<size_t>(n) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> names;
  for (int r = 0; r < n; ++r)
    names.emplace_back(&all[r * MPI_MAX_PROCESSOR_NAME]);
  return names;
}

int expected_hosts() {
  for (const std::string& a : testing::test_args()) {
    if (a.rfind("--hosts=", 0) == 0) return std::stoi(a.substr(8));
  }
  return 0;  // any number
}

TEST(SharedInbox, SharesMemoryExactlyWithTheRanksOfItsHost) {
  const std::vector<std::string> hosts = host_names();
  const int rank = testing::world_rank(), n = testing::world_size();
  const int want = expected_hosts();
  const std::set<std::string> distinct(hosts.begin(), hosts.end());
  if (want > 0) {
    EXPECT_EQ(static_cast<int>(distinct.size()), want)
        << "the ranks run on " << distinct.size() << " host(s)";
  }
  SharedInbox inbox(MPI_COMM_WORLD, MPI_COMM_NULL, sizeof(int) * n);
  for (int peer = 0; peer < n; ++peer) {
    EXPECT_EQ(inbox.shares_memory_with(peer), hosts[peer] == hosts[rank])
        << "rank " << rank << " on " << hosts[rank] << ", rank " << peer
        << " on " << hosts[peer];
  }
  // Each rank writes its number into slot `rank` of every peer's inbox it
  // shares; after a barrier each finds the numbers of its host's ranks.
  std::memset(inbox.mine(), 0xff, sizeof(int) * n);
  MPI_Barrier(MPI_COMM_WORLD);
  inbox.sync();
  for (int peer = 0; peer < n; ++peer) {
    if (!inbox.shares_memory_with(peer)) continue;
    const int value = 1000 + rank;
    std::memcpy(inbox.of(peer) + sizeof(int) * rank, &value, sizeof(int));
  }
  inbox.sync();
  MPI_Barrier(MPI_COMM_WORLD);
  inbox.sync();
  for (int peer = 0; peer < n; ++peer) {
    int got = 0;
    std::memcpy(&got, inbox.mine() + sizeof(int) * peer, sizeof(int));
    EXPECT_EQ(got, hosts[peer] == hosts[rank] ? 1000 + peer : -1)
        << "slot of rank " << peer;
  }
}

// A group given by the caller (here the ranks of one parity) shares memory
// among those of its ranks on one host: a group spanning hosts is split.
TEST(SharedInbox, AGivenGroupSharesWithinEachHostOnly) {
  const std::vector<std::string> hosts = host_names();
  const int rank = testing::world_rank(), n = testing::world_size();
  MPI_Comm parity = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
  {
    SharedInbox inbox(MPI_COMM_WORLD, parity, 64);
    for (int peer = 0; peer < n; ++peer) {
      EXPECT_EQ(inbox.shares_memory_with(peer),
                peer % 2 == rank % 2 && hosts[peer] == hosts[rank])
          << "rank " << rank << " on " << hosts[rank] << ", rank " << peer
          << " on " << hosts[peer];
    }
  }
  MPI_Comm_free(&parity);
}

}  // namespace
}  // namespace distconv
