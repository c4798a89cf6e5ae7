// The fingerprint check (on by default; OFL_CHECK_COLLECTIVES=0 on every rank turns it off): ranks
// that issue different collectives at the same point of their programs get the same error on every
// rank, naming both sides, instead of a hang or another collective's values; and they stay in step
// for the next collective. (CTest runs the suite with the check off as global.mpi_3_unchecked,
// where the tests that need it skip.) The switch is world-wide: set to 0 on some ranks only,
// init_distributed keeps it on for all (global.mpi_2_off_on_rank_0 runs this file so).
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
  if (env == nullptr || std::string(env) != "0") EXPECT_EQ(mine, 1);
}

TEST(CollectiveCheckTest, OutOfStepCollectivesThrowOnEveryRankNamingBothSides) {
  if (!coll::CollectiveChecksEnabled()) {
    GTEST_SKIP() << "needs the fingerprint check (off here: OFL_CHECK_COLLECTIVES=0)";
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
    for (const char* piece : {"collectives out of step: rank 0 issued collective #", "boxing S->B",
                              "boxing P->B", "S(0) -> B", "P -> B", "No rank moved data"}) {
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

// A read of a global tensor on one rank only (printing it under `if rank == 0`, say) is a
// collective the other ranks do not issue: their next collective (here to_global of local tensors,
// whose first step is a shape exchange) pairs with it. With no option set, every rank gets the
// same error naming both, instead of the others getting rank 0's values (or a hang); the ranks
// then stay in step.
TEST(CollectiveCheckTest, AReadOnOneRankOnlyIsCaughtByDefaultOnEveryRank) {
  if (!coll::CollectiveChecksEnabled()) {
    GTEST_SKIP() << "needs the fingerprint check (off here: OFL_CHECK_COLLECTIVES=0)";
  }
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Shape shape({4, 3});
  const std::vector<float> logical = Logical<float>(shape);
  const int me = p.index_of(rank());
  const Tensor x =
      LocalPiece<float>(logical, shape, Sbp::split(0), me, p.size()).to_global(p, Sbp::split(0));
  sync();
  const Tensor mine = tensor<float>({static_cast<float>(rank())}, Shape({1}), Device("cpu"));
  try {
    if (rank() == 0) {
      (void)x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>();  // the stray read
    } else {
      (void)mine.to_global(p, Sbp::split(0));  // its shape exchange pairs with the read
    }
    ADD_FAILURE() << "the read on rank 0 only was not reported";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& piece :
         {std::string("collectives out of step: rank 0 issued collective #"),
          std::string("(boxing S->B (all-gather), float32, logical (4,3), S(0) -> B, "
                      "Placement(type=\"cpu\""),
          std::string("but rank 1 issued collective #"), std::string("(to_global shape exchange)"),
          std::string("No rank moved data")}) {
      EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg;
    }
  }
  // Each rank issued one collective: the next ones line up, and move the right values.
  const Tensor all = mine.to_global(p, Sbp::split(0)).to_global(p, Sbp::broadcast());
  std::vector<float> want;
  for (int r = 0; r < p.size(); ++r) want.push_back(static_cast<float>(p.ranks()[r]));
  EXPECT_EQ(all.to_local().to_vector<float>(), want);
  EXPECT_EQ(x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>(), logical);
}

}  // namespace
}  // namespace ofl::testing
