// The collective watchdog (kernels/collective/watchdog.h): a
// collective that waits past the hang timeout is reported by every rank that waits, naming its
// sequence number, its fingerprint and the ranks that have not arrived; the collective itself
// keeps waiting and completes when the late rank comes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "global_test_util.h"
#include "kernels/collective/watchdog.h"
#include "oneflow_lite/oneflow_lite.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {
namespace {

namespace coll = kernels::collective;

TEST(CollectiveWatchdogTest, RunsWheneverMoreThanOneProcessShareTheWorld) {
  EXPECT_EQ(coll::WatchdogRunning(), world_size() > 1);
}

TEST(CollectiveWatchdogTest, ARankThatStallsIsNamedByTheRanksThatWaitForIt) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Shape shape({6, 2});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::split(0), p.index_of(rank()), p.size())
                       .to_global(p, Sbp::split(0));
  sync();
  constexpr int kLate = 1;
  auto& vm = vm::VirtualMachine::Get();
  const double saved = vm.wait_timeout();
  const size_t reports_before = coll::WatchdogReports().size();
  Tensor gathered;
  if (rank() == kLate) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    gathered = x.to_global(p, Sbp::broadcast());
  } else {
    ofl::vm::VmTesting::SetWaitTimeout(0.2);
    gathered = x.to_global(p, Sbp::broadcast());  // the all-gather waits for rank 1
    std::string report;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
    while (report.empty() && std::chrono::steady_clock::now() < deadline) {
      const std::vector<std::string> reports = coll::WatchdogReports();
      if (reports.size() > reports_before) report = reports.back();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_FALSE(report.empty()) << "no watchdog report within 2.5 s";
    std::string arrived;  // every rank but this one and the late one
    for (int r = 0; r < world_size(); ++r) {
      if (r != rank() && r != kLate) arrived += (arrived.empty() ? "" : ", ") + std::to_string(r);
    }
    for (const std::string& piece :
         {"collective watchdog on rank " + std::to_string(rank()), std::string(" over ["),
          std::string("boxing S->B (all-gather)"), std::string(", float32, logical (6,2), "),
          std::string("keeps waiting"), std::string("Not arrived: rank 1 ("),
          std::string("its program has not issued #")}) {
      EXPECT_NE(report.find(piece), std::string::npos) << "'" << piece << "' not in: " << report;
    }
    if (!arrived.empty()) {
      EXPECT_NE(report.find("Arrived: ranks [" + arrived + "]"), std::string::npos) << report;
    }
    // A hang report of the host, meanwhile, shows what the watchdog found.
    try {
      sync();
      ADD_FAILURE() << "sync returned while rank 1 was still away";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Not arrived: rank 1 ("), std::string::npos) << e.what();
    }
    ofl::vm::VmTesting::SetWaitTimeout(saved);
  }
  // The collective was never abandoned: it completed when rank 1 came, on every rank.
  EXPECT_EQ(gathered.to_vector<float>(), logical);
  EXPECT_EQ(coll::WatchdogReports().size(), reports_before + (rank() == kLate ? 0 : 1));
}

// Ranks whose programs issued different collectives with the same number (a P->B all-reduce
// against an S->B all-gather) are both inside "the" collective: the report must name the mismatch
// (both ranks, both fingerprints), not call the transfer slow. The marks are made directly (no data
// moves), over a rank list of their own.
TEST(CollectiveWatchdogTest, RanksInsideDifferentCollectivesWithTheSameNumberAreNamedAsAMismatch) {
#ifndef OFL_WITH_MPI
  GTEST_SKIP() << "needs MPI";
#else
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  sync();  // the runtime's collective stream is idle: the test's MPI_Barrier is alone on the world
  const std::vector<int> ranks = {1, 0};
  const std::string reduce = "boxing P->B (all-reduce), float32, logical (4,2), P -> B, cpu[1, 0]";
  const std::string gather =
      "boxing S->B (all-gather), float32, logical (4,2), S(0) -> B, cpu[1, 0]";
  const size_t reports_before = coll::WatchdogReports().size();
  std::string report;
  if (rank() <= 1) {
    const std::string& mine = rank() == 0 ? reduce : gather;
    const coll::WatchedCollective watched(coll::CollectiveId{0, ranks, mine}, 0.2,
                                          [](const std::string&) {});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (report.empty() && std::chrono::steady_clock::now() < deadline) {
      const std::vector<std::string> reports = coll::WatchdogReports();
      if (reports.size() > reports_before) report = reports.back();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Both marks stay until both ranks have their reports (each answers the other's query).
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    return;
  }
  ASSERT_FALSE(report.empty()) << "no watchdog report within 5 s";
  const int other = 1 - rank();
  for (const std::string& piece :
       {std::string("Different collectives with the same number: rank ") + std::to_string(other) +
            " is inside collective #0 over [1, 0] (" + (other == 0 ? reduce : gather) +
            ") while rank " + std::to_string(rank()) + " is inside #0 (" +
            (rank() == 0 ? reduce : gather) + ")",
        std::string("out of step"),
        std::string("The fingerprint check (OFL_CHECK_COLLECTIVES, on unless set to 0)")}) {
    EXPECT_NE(report.find(piece), std::string::npos) << "'" << piece << "' not in: " << report;
  }
  EXPECT_EQ(report.find("Every rank is inside this collective"), std::string::npos) << report;
#endif
}

}  // namespace
}  // namespace ofl::testing
