// The collective watchdog (kernels/collective/watchdog.h): without OFL_CHECK_COLLECTIVES, a
// collective that waits past the hang timeout is reported by every rank that waits, naming its
// sequence number, its fingerprint and the ranks that have not arrived; the collective itself
// keeps waiting and completes when the late rank comes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "global_test_util.h"
#include "kernels/collective/watchdog.h"
#include "oneflow_lite/oneflow_lite.h"
#include "vm/virtual_machine.h"

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
    vm.SetWaitTimeout(0.2);
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
    vm.SetWaitTimeout(saved);
  }
  // The collective was never abandoned: it completed when rank 1 came, on every rank.
  EXPECT_EQ(gathered.to_vector<float>(), logical);
  EXPECT_EQ(coll::WatchdogReports().size(), reports_before + (rank() == kLate ? 0 : 1));
}

}  // namespace
}  // namespace ofl::testing
