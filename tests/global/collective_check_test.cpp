// OFL_CHECK_COLLECTIVES=1: ranks that issue different collectives at the same point of their
// programs get the same error on every rank, naming both sides, instead of a hang or garbage; and
// they stay in step for the next collective. (CTest runs the suite with the switch on as
// global.mpi_3_checked; without it this test skips.) The switch is world-wide: set on some ranks
// only, init_distributed turns it on for all (global.mpi_2_checked_on_rank_0 runs this file so).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "kernels/collective/collectives.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

namespace coll = kernels::collective;

TEST(CollectiveCheckTest, TheSettingOfAnyRankTurnsTheChecksOnForEveryRankWithAWarning) {
  const coll::CollectiveChecksSetting none = coll::AgreeOnCollectiveChecks({0, 0, 0});
  EXPECT_FALSE(none.on);
  EXPECT_EQ(none.warning, "");
  const coll::CollectiveChecksSetting all = coll::AgreeOnCollectiveChecks({1, 1});
  EXPECT_TRUE(all.on);
  EXPECT_EQ(all.warning, "");
  const coll::CollectiveChecksSetting some = coll::AgreeOnCollectiveChecks({1, 0, 1, 0});
  EXPECT_TRUE(some.on);
  for (const char* piece : {"OFL_CHECK_COLLECTIVES is on for rank(s) [0, 2] but not for rank(s) "
                            "[1, 3]: collective checks are on for every rank"}) {
    EXPECT_NE(some.warning.find(piece), std::string::npos)
        << "'" << piece << "' not in: " << some.warning;
  }
}

// Whatever each rank's environment says, every rank of the world has the same setting (the check
// is an exchange of its own: a rank without it would pair its next collective with the check).
TEST(CollectiveCheckTest, EveryRankHasTheSameSetting) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const int mine = coll::CollectiveChecksEnabled() ? 1 : 0;
  const Tensor all = tensor<int32_t>({mine}, Shape({1}), Device("cpu"))
                         .to_global(p, Sbp::split(0))
                         .to_global(p, Sbp::broadcast());
  const std::vector<int32_t> settings = all.to_vector<int32_t>();
  ASSERT_EQ(settings.size(), static_cast<size_t>(p.size()));
  for (int r = 0; r < p.size(); ++r) EXPECT_EQ(settings[r], mine) << "rank " << p.ranks()[r];
  const char* env = std::getenv("OFL_CHECK_COLLECTIVES");
  if (env != nullptr && std::string(env) == "1") EXPECT_EQ(mine, 1);
}

TEST(CollectiveCheckTest, OutOfStepCollectivesThrowOnEveryRankNamingBothSides) {
  if (!coll::CollectiveChecksEnabled()) {
    GTEST_SKIP() << "needs OFL_CHECK_COLLECTIVES=1 (CTest: global.mpi_3_checked)";
  }
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Shape shape({4, 2});
  const std::vector<float> logical = Logical<float>(shape);
  const int me = p.index_of(rank());
  // Rank 0 gathers a split tensor; the others all-reduce a partial sum.
  const Sbp from = rank() == 0 ? Sbp::split(0) : Sbp::partial_sum();
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::broadcast(), me, p.size())
                       .to_global(p, Sbp::broadcast())
                       .to_global(p, from);  // local slices / zeros: no communication
  try {
    (void)x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>();
    ADD_FAILURE() << "out-of-step collectives were not reported";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const char* piece : {"out of step", "rank 0 issued collective #", "boxing S->B",
                              "boxing P->B", "S(0) -> B", "P -> B"}) {
      EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg;
    }
  }
  // Every rank skipped the mismatched collective: the next one lines up again.
  const Tensor b = tensor<float>(logical, shape, Device("cpu"))
                       .to_global(p, Sbp::broadcast())
                       .to_global(p, Sbp::partial_sum())
                       .to_global(p, Sbp::split(1));
  EXPECT_EQ(b.to_vector<float>(), logical);
}

}  // namespace
}  // namespace ofl::testing
