// to_global of local tensors agrees between the ranks before it moves data: a check that fails on
// one rank (an undefined tensor, a split axis beyond its dims, a tensor on another device) and a
// disagreement between ranks (placement, SBP, dtype, shapes, split sizes past INT64_MAX) is the
// same InvalidArgument on every rank, naming the rank(s) and the values, and the ranks stay in
// step: the next correct call works everywhere. A rank outside the placement may pass anything, an
// undefined tensor included; its tensor does not count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"

namespace ofl::testing {
namespace {

// A correct to_global and boxings after it give the right value on every rank: the ranks are in
// step (a rank left behind by an earlier error would pair this exchange with another one).
void ExpectRanksInStep() {
  const Placement p = World();
  const Shape shape({5, 3});
  const std::vector<float> logical = Logical<float>(shape);
  const int me = p.index_of(rank()), n = p.size();
  const Tensor g =
      LocalPiece<float>(logical, shape, Sbp::split(0), me, n).to_global(p, Sbp::split(0));
  EXPECT_EQ(g.shape(), shape);
  EXPECT_EQ(g.to_global(p, Sbp::split(1)).to_vector<float>(), logical);
}

// A local tensor on cpu (its values are never read).
Tensor Floats(const Shape& shape, DType dtype = DType::kFloat32) {
  return empty(shape, dtype, Device("cpu"));
}

int Last() { return world_size() - 1; }

TEST(ToGlobalAgreementTest, AnUndefinedTensorOnOneRankIsTheSameErrorOnEveryRank) {
  const Placement p = World();
  for (int round = 0; round < 2; ++round) {
    const Tensor mine = rank() == Last() ? Tensor() : Floats(Shape({2, 3}));
    ExpectInvalid([&] { (void)mine.to_global(p, Sbp::split(0)); },
                  {"to_global: rank " + std::to_string(Last()) + ":", "undefined",
                   "every rank refuses the call"});
    ExpectRanksInStep();
  }
}

TEST(ToGlobalAgreementTest, ASplitAxisBeyondOneRanksDimsIsTheSameErrorOnEveryRank) {
  const Placement p = World();
  const Tensor mine = rank() == Last() ? Floats(Shape({6})) : Floats(Shape({2, 3}));
  ExpectInvalid([&] { (void)mine.to_global(p, Sbp::split(1)); },
                {"to_global: rank " + std::to_string(Last()) + ":", "S(1)", "shape (6"});
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, ATensorOnAnotherDeviceOnOneRankIsTheSameErrorOnEveryRank) {
  const Placement p = World();
  const Tensor mine =
      rank() == Last() ? Floats(Shape({2, 3})).to(Device("sim:0")) : Floats(Shape({2, 3}));
  ExpectInvalid([&] { (void)mine.to_global(p, Sbp::broadcast()); },
                {"to_global: rank " + std::to_string(Last()) + ":", "sim:0", "cpu:0"});
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, APlacementNamingARankOutsideTheWorldOnOneRankIsRefusedEverywhere) {
  const Placement p = rank() == Last() ? Placement("cpu", {0, world_size()}) : World();
  ExpectInvalid([&] { (void)Floats(Shape({2})).to_global(p, Sbp::broadcast()); },
                {"to_global: rank " + std::to_string(Last()) + ":",
                 "names rank " + std::to_string(world_size()), "outside the world"});
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, RanksOutsideThePlacementMayPassAnythingAndDoNotCount) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement first("cpu", {0});
  const Tensor two = tensor<int32_t>({4, 5}, Shape({2}), Device("cpu"));
  // Outside: an undefined tensor, then a tensor of another shape, dtype and device.
  const Tensor outside[] = {Tensor(), Floats(Shape({3}), DType::kFloat64).to(Device("sim:0"))};
  for (const Tensor& other : outside) {
    const Tensor g = (rank() == 0 ? two : other).to_global(first, Sbp::split(0));
    EXPECT_EQ(g.shape(), Shape({2}));
    EXPECT_EQ(g.dtype(), DType::kInt32);
    if (rank() == 0) {
      EXPECT_EQ(g.to_vector<int32_t>(), (std::vector<int32_t>{4, 5}));
    } else {
      EXPECT_EQ(g.to_local().numel(), 0);
      EXPECT_EQ(g.to_local().dtype(), DType::kInt32);
    }
  }
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, DifferentSbpsAreTheSameErrorNamingBothRanksAndValues) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Sbp mine = rank() == 0 ? Sbp::split(0) : Sbp::broadcast();
  ExpectInvalid(
      [&] {
        (void)Floats(Shape({4, 2})).to_global(p, mine);
      },
      {"to_global", "rank 0 passed sbp S(0), rank 1 passed sbp B"});
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, DifferentDTypesAreTheSameErrorNamingBothRanksAndValues) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const DType mine = rank() == Last() ? DType::kFloat64 : DType::kFloat32;
  ExpectInvalid(
      [&] {
        (void)Floats(Shape({4, 2}), mine).to_global(p, Sbp::split(0));
      },
      {"to_global", "rank 0 passed float32", "rank " + std::to_string(Last()) + " passed float64"});
  ExpectRanksInStep();
}

TEST(ToGlobalAgreementTest, DifferentPlacementsAreTheSameErrorNamingBothRanksAndValues) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement world = World();
  std::vector<int> reversed(world.ranks().rbegin(), world.ranks().rend());
  const Placement mine = rank() == 0 ? world : Placement("cpu", reversed);
  ExpectInvalid(
      [&] {
        (void)Floats(Shape({4, 2})).to_global(mine, Sbp::broadcast());
      },
      {"to_global", "rank 0 passed " + world.str(),
       "rank 1 passed " + Placement("cpu", reversed).str()});
  ExpectRanksInStep();
}

// Split sizes whose sum passes INT64_MAX (shards with a zero dim hold no memory).
TEST(ToGlobalAgreementTest, SplitSizesSummingPastInt64MaxNameTheShards) {
  const Placement p = World();
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2 + 1;
  const Tensor mine = empty(Shape({huge, 0}), DType::kFloat32, Device("cpu"));
  if (world_size() == 1) {
    EXPECT_EQ(mine.to_global(p, Sbp::split(0)).shape(), Shape({huge, 0}));
  } else {
    ExpectInvalid([&] { (void)mine.to_global(p, Sbp::split(0)); },
                  {"to_global", "S(0)", "rank 0: " + std::to_string(huge),
                   "rank 1: " + std::to_string(huge), "sum past 9223372036854775807"});
  }
  ExpectRanksInStep();
}

}  // namespace
}  // namespace ofl::testing
