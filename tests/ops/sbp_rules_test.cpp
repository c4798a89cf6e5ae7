// SBP rules on named cases: balanced splits (even, uneven, empty shards), physical shapes, the
// SBP that expand, repeat, reshape and their backward give, the physical arguments of the local
// ops (OneFlow's expand article example among them), and every error with its message.
// sbp_rules_property_test.cpp checks the same rules against element-by-element simulations.
#include "ops/sbp_rules.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

const Sbp kB = Sbp::broadcast();
const Sbp kP = Sbp::partial_sum();
Sbp S(int axis) { return Sbp::split(axis); }

void ExpectRanges(int64_t n, int parts, const V& starts, const V& sizes) {
  for (int i = 0; i < parts; ++i) {
    const SplitRange r = BalancedSplit(n, parts, i);
    EXPECT_EQ(r.start, starts[i]) << n << " over " << parts << ", part " << i;
    EXPECT_EQ(r.size, sizes[i]) << n << " over " << parts << ", part " << i;
  }
}

TEST(BalancedSplitTest, EvenUnevenAndEmptyParts) {
  ExpectRanges(8, 4, {0, 2, 4, 6}, {2, 2, 2, 2});
  ExpectRanges(10, 4, {0, 3, 6, 8}, {3, 3, 2, 2});
  ExpectRanges(3, 2, {0, 2}, {2, 1});
  ExpectRanges(5, 4, {0, 2, 3, 4}, {2, 1, 1, 1});
  ExpectRanges(2, 4, {0, 1, 2, 2}, {1, 1, 0, 0});
  ExpectRanges(0, 3, {0, 0, 0}, {0, 0, 0});
  ExpectRanges(7, 1, {0}, {7});
}

TEST(BalancedSplitTest, Errors) {
  ExpectInvalid([] { BalancedSplit(-1, 2, 0); }, {"BalancedSplit", "n -1", ">= 0"});
  ExpectInvalid([] { BalancedSplit(4, 0, 0); }, {"BalancedSplit", "parts 0", ">= 1"});
  ExpectInvalid([] { BalancedSplit(4, 4, 4); }, {"BalancedSplit", "index 4", "[0, 3]", "parts 4"});
  ExpectInvalid([] { BalancedSplit(4, 2, -1); }, {"BalancedSplit", "index -1", "[0, 1]"});
}

TEST(PhysicalShapeTest, SplitShrinksTheAxis) {
  EXPECT_EQ(PhysicalShape(Shape{10, 3}, S(0), 4, 0), (Shape{3, 3}));
  EXPECT_EQ(PhysicalShape(Shape{10, 3}, S(0), 4, 3), (Shape{2, 3}));
  EXPECT_EQ(PhysicalShape(Shape{2, 3}, S(1), 2, 0), (Shape{2, 2}));
  EXPECT_EQ(PhysicalShape(Shape{2, 3}, S(1), 2, 1), (Shape{2, 1}));
  EXPECT_EQ(PhysicalShape(Shape{2, 5}, S(0), 4, 1), (Shape{1, 5}));
  EXPECT_EQ(PhysicalShape(Shape{2, 5}, S(0), 4, 3), (Shape{0, 5}));  // an empty shard
  EXPECT_EQ(PhysicalShape(Shape{4, 3, 1, 2}, S(3), 2, 1), (Shape{4, 3, 1, 1}));
}

TEST(PhysicalShapeTest, BroadcastAndPartialSumKeepTheLogicalShape) {
  EXPECT_EQ(PhysicalShape(Shape{10, 3}, kB, 4, 2), (Shape{10, 3}));
  EXPECT_EQ(PhysicalShape(Shape{10, 3}, kP, 4, 3), (Shape{10, 3}));
  EXPECT_EQ(PhysicalShape(Shape{}, kB, 2, 1), Shape{});
}

TEST(PhysicalShapeTest, Errors) {
  ExpectInvalid(
      [] {
        PhysicalShape(Shape{4, 3}, S(2), 2, 0);
      },
      {"PhysicalShape", "split axis 2", "S(2)", "(4,3)", "2 dims"});
  ExpectInvalid([] { PhysicalShape(Shape{}, S(0), 2, 0); },
                {"PhysicalShape", "split axis 0", "()", "0 dims"});
  ExpectInvalid([] { PhysicalShape(Shape{4}, S(0), 2, 2); },
                {"PhysicalShape", "index 2", "parts 2"});
  ExpectInvalid([] { PhysicalShape(Shape{4}, kB, 0, 0); }, {"PhysicalShape", "parts 0"});
}

// OneFlow's expand article: (4,3,1,2) split on its last dim over 2 ranks is (4,3,1,1) on each;
// expanding to (2,4,3,4,2) runs a local expand to (2,4,3,4,1) and gives split(4).
TEST(ExpandSbpTest, ArticleExample) {
  const Shape in{4, 3, 1, 2};
  const Shape out{2, 4, 3, 4, 2};
  EXPECT_EQ(InferExpandSbp(in, S(3), out), S(4));
  for (int rank = 0; rank < 2; ++rank) {
    const Shape physical_in = PhysicalShape(in, S(3), 2, rank);
    EXPECT_EQ(physical_in, (Shape{4, 3, 1, 1}));
    EXPECT_EQ(PhysicalExpandSizes(in, S(3), out, physical_in), (V{2, 4, 3, 4, 1}));
  }
}

TEST(ExpandSbpTest, SplitOnKeptDims) {
  EXPECT_EQ(InferExpandSbp(Shape{4, 1, 2}, S(0), Shape{4, 5, 2}), S(0));
  EXPECT_EQ(InferExpandSbp(Shape{4, 1, 2}, S(2), Shape{3, 4, 5, 2}), S(3));
  // A size-1 dim that stays 1 is kept: one rank holds it, the others hold empty shards.
  EXPECT_EQ(InferExpandSbp(Shape{4, 1}, S(1), Shape{2, 4, 1}), S(2));
  EXPECT_EQ(InferExpandSbp(Shape{3}, S(0), Shape{3}), S(0));
}

TEST(ExpandSbpTest, BroadcastAndPartialSumPassThrough) {
  EXPECT_EQ(InferExpandSbp(Shape{4, 1}, kB, Shape{2, 4, 5}), kB);
  EXPECT_EQ(InferExpandSbp(Shape{4, 1}, kP, Shape{2, 4, 5}), kP);
  EXPECT_EQ(PhysicalExpandSizes(Shape{4, 1}, kB, Shape{2, 4, 5}, Shape{4, 1}), (V{2, 4, 5}));
  EXPECT_EQ(PhysicalExpandSizes(Shape{4, 1}, kP, Shape{2, 4, 5}, Shape{4, 1}), (V{2, 4, 5}));
}

TEST(ExpandSbpTest, UnevenAndEmptyShards) {
  // (3,1) split(0) over 2 ranks: shards of 2 and 1 rows.
  const Shape in{3, 1};
  const Shape out{2, 3, 4};
  EXPECT_EQ(PhysicalExpandSizes(in, S(0), out, PhysicalShape(in, S(0), 2, 0)), (V{2, 2, 4}));
  EXPECT_EQ(PhysicalExpandSizes(in, S(0), out, PhysicalShape(in, S(0), 2, 1)), (V{2, 1, 4}));
  // (2,1) over 4 ranks: the last two shards are empty.
  EXPECT_EQ(PhysicalExpandSizes(Shape{2, 1}, S(0), Shape{2, 3}, Shape{0, 1}), (V{0, 3}));
}

TEST(ExpandSbpTest, SplitOnBroadcastDimIsAnError) {
  ExpectInvalid(
      [] {
        InferExpandSbp(Shape{4, 1, 2}, S(1), Shape{4, 5, 2});
      },
      {"expand", "split on dim 1", "logical size 1 is broadcast to 5", "output dim 1",
       "box it to broadcast first", "(4,1,2)", "(4,5,2)"});
  ExpectInvalid(
      [] {
        InferExpandSbp(Shape{1}, S(0), Shape{3, 0});
      },
      {"expand", "split on dim 0", "broadcast to 0", "output dim 1"});
  ExpectInvalid([] { PhysicalExpandSizes(Shape{1}, S(0), Shape{6}, Shape{1}); },
                {"expand", "split on dim 0", "broadcast to 6"});
}

TEST(ExpandSbpTest, ArgumentErrors) {
  ExpectInvalid(
      [] {
        InferExpandSbp(Shape{4, 3}, S(2), Shape{4, 3});
      },
      {"expand", "split axis 2", "S(2)", "(4,3)"});
  ExpectInvalid(
      [] {
        InferExpandSbp(Shape{4, 3}, kB, Shape{3});
      },
      {"expand", "fewer dims", "(3)", "(4,3)"});
  ExpectInvalid(
      [] {
        InferExpandSbp(Shape{4, 3}, kB, Shape{4, 5});
      },
      {"expand", "not an expansion", "input dim 1", "size 3", "output dim 1", "size 5"});
  ExpectInvalid(
      [] {
        PhysicalExpandSizes(Shape{4, 3}, S(0), Shape{4, 3}, Shape{2, 2});
      },
      {"expand", "physical_in (2,2)", "(4,3)", "S(0)"});
  ExpectInvalid(
      [] {
        PhysicalExpandSizes(Shape{4, 3}, S(0), Shape{4, 3}, Shape{2});
      },
      {"expand", "physical_in (2)"});
}

TEST(RepeatSbpTest, SplitOnUnrepeatedDimPassesThrough) {
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(0), {1, 2}), S(0));
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(1), {2, 1, 1}), S(2));  // padded to (1,4,3)
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(0), {5, 1, 3}), S(1));
}

TEST(RepeatSbpTest, SplitOnRepeatedDimNeedsBoxing) {
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(1), {1, 2}), std::nullopt);
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(0), {3, 1}), std::nullopt);
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, S(0), {0, 1}), std::nullopt);  // repeat 0 too
}

TEST(RepeatSbpTest, BroadcastAndPartialSumPassThrough) {
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, kB, {2, 2, 2}), kB);
  EXPECT_EQ(InferRepeatSbp(Shape{4, 3}, kP, {2, 2}), kP);
}

TEST(RepeatSbpTest, Errors) {
  ExpectInvalid(
      [] {
        InferRepeatSbp(Shape{4, 3}, S(2), {1, 1});
      },
      {"repeat", "split axis 2", "S(2)", "(4,3)"});
  ExpectInvalid(
      [] {
        InferRepeatSbp(Shape{4, 3}, kB, {2});
      },
      {"repeat", "number of repeats (1)", "(4,3)"});
  ExpectInvalid([] { InferRepeatSbp(Shape{4, 3}, kB, {1, -2}); }, {"repeat", "-2", "dim 1"});
}

TEST(ReshapeSbpTest, BroadcastAndPartialSumPassThrough) {
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, kB, Shape{24}), kB);
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, kP, Shape{2, 12}), kP);
}

TEST(ReshapeSbpTest, SplitPassesWhenTheDimAndWhatSurroundsItSurvive) {
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, S(0), Shape{4, 2, 3}), S(0));
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, S(1), Shape{2, 2, 6}), S(2));
  EXPECT_EQ(InferReshapeSbp(Shape{2, 3, 5}, S(1), Shape{2, 3, 5}), S(1));
  EXPECT_EQ(InferReshapeSbp(Shape{2, 3, 5}, S(2), Shape{6, 5}), S(1));
  EXPECT_EQ(InferReshapeSbp(Shape{2, 1, 3}, S(1), Shape{2, 1, 1, 3}), S(1));  // the first match
}

TEST(ReshapeSbpTest, SplitOnAMergedOrDividedDimNeedsBoxing) {
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, S(1), Shape{4, 2, 3}), std::nullopt);
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, S(0), Shape{24}), std::nullopt);
  EXPECT_EQ(InferReshapeSbp(Shape{6, 4}, S(0), Shape{2, 3, 4}), std::nullopt);
  EXPECT_EQ(InferReshapeSbp(Shape{4, 6}, S(0), Shape{6, 4}), std::nullopt);
}

TEST(ReshapeSbpTest, Errors) {
  ExpectInvalid(
      [] {
        InferReshapeSbp(Shape{4, 6}, kB, Shape{5, 5});
      },
      {"reshape", "(5,5)", "25 elements", "(4,6)", "24"});
  ExpectInvalid(
      [] {
        InferReshapeSbp(Shape{4, 6}, S(2), Shape{24});
      },
      {"reshape", "split axis 2", "S(2)", "(4,6)"});
}

TEST(ExpandBackwardSbpTest, SplitOnAKeptDimMapsBack) {
  const Shape in{4, 3, 1, 2};
  const Shape dy{2, 4, 3, 4, 2};
  EXPECT_EQ(InferExpandBackwardSbp(S(4), dy, in), S(3));
  EXPECT_EQ(InferExpandBackwardSbp(S(1), dy, in), S(0));
  EXPECT_EQ(InferExpandBackwardSbp(S(1), Shape{3, 1}, Shape{3, 1}), S(1));  // 1 kept as 1
}

TEST(ExpandBackwardSbpTest, SplitOnAReducedDimGivesPartialSum) {
  const Shape in{4, 3, 1, 2};
  const Shape dy{2, 4, 3, 4, 2};
  EXPECT_EQ(InferExpandBackwardSbp(S(0), dy, in), kP);  // a new leading dim
  EXPECT_EQ(InferExpandBackwardSbp(S(3), dy, in), kP);  // size 1 broadcast to 4
}

TEST(ExpandBackwardSbpTest, BroadcastAndPartialSumStay) {
  EXPECT_EQ(InferExpandBackwardSbp(kB, Shape{2, 4, 5}, Shape{4, 1}), kB);
  EXPECT_EQ(InferExpandBackwardSbp(kP, Shape{2, 4, 5}, Shape{4, 1}), kP);
}

TEST(ExpandBackwardSbpTest, Errors) {
  ExpectInvalid(
      [] {
        InferExpandBackwardSbp(S(3), Shape{2, 4, 5}, Shape{4, 1});
      },
      {"expand_backward", "split axis 3", "S(3)", "(2,4,5)"});
  ExpectInvalid(
      [] {
        InferExpandBackwardSbp(kB, Shape{2, 4, 5}, Shape{3, 1});
      },
      {"expand_backward", "(3,1)", "(2,4,5)", "input dim 0"});
}

TEST(RepeatBackwardSbpTest, SplitOnAnUnrepeatedDimMapsBack) {
  EXPECT_EQ(InferRepeatBackwardSbp(S(0), Shape{4, 3}, {1, 2}), S(0));
  EXPECT_EQ(InferRepeatBackwardSbp(S(2), Shape{4, 3}, {2, 3, 1}), S(1));
}

TEST(RepeatBackwardSbpTest, SplitOnThinTilesGivesPartialSum) {
  EXPECT_EQ(InferRepeatBackwardSbp(S(0), Shape{4, 3}, {2, 1, 1}), kP);  // a new leading dim
  EXPECT_EQ(InferRepeatBackwardSbp(S(1), Shape{4, 1}, {1, 3}), kP);     // tiles of 1 element
  EXPECT_EQ(InferRepeatBackwardSbp(S(1), Shape{4, 0}, {1, 3}), kP);     // tiles of none
}

TEST(RepeatBackwardSbpTest, SplitThatMayCutATileNeedsBoxing) {
  // dy (4,6) split(1) over 4 ranks holds 2,2,1,1 columns of two 3-column tiles.
  EXPECT_EQ(InferRepeatBackwardSbp(S(1), Shape{4, 3}, {1, 2}), std::nullopt);
  EXPECT_EQ(InferRepeatBackwardSbp(S(1), Shape{4, 2}, {2, 0}), std::nullopt);
}

TEST(RepeatBackwardSbpTest, BroadcastAndPartialSumStay) {
  EXPECT_EQ(InferRepeatBackwardSbp(kB, Shape{4, 3}, {2, 2}), kB);
  EXPECT_EQ(InferRepeatBackwardSbp(kP, Shape{4, 3}, {2, 2}), kP);
}

TEST(RepeatBackwardSbpTest, PhysicalRepeats) {
  // dy (5,4,3) split(0) over 2 ranks: (3,4,3) and (2,4,3); each sums its own tiles.
  const Shape in{4, 3};
  const V repeats{5, 1, 1};
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(S(0), in, repeats, Shape{3, 4, 3}), (V{3, 1, 1}));
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(S(0), in, repeats, Shape{2, 4, 3}), (V{2, 1, 1}));
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(S(1), Shape{4, 1}, {2, 3}, Shape{8, 1}), (V{2, 1}));
  // Passing splits, B and P keep the logical repeats.
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(S(1), in, repeats, Shape{5, 2, 3}), repeats);
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(kB, in, {2, 2}, Shape{8, 6}), (V{2, 2}));
  EXPECT_EQ(PhysicalRepeatBackwardRepeats(kP, in, {2, 2}, Shape{8, 6}), (V{2, 2}));
}

TEST(RepeatBackwardSbpTest, Errors) {
  ExpectInvalid(
      [] {
        InferRepeatBackwardSbp(S(2), Shape{4, 3}, {1, 2});
      },
      {"repeat_backward", "split axis 2", "S(2)", "(4,6)"});
  ExpectInvalid(
      [] {
        InferRepeatBackwardSbp(kB, Shape{4, 3}, {2});
      },
      {"repeat", "number of repeats (1)"});
  ExpectInvalid(
      [] {
        PhysicalRepeatBackwardRepeats(S(1), Shape{4, 3}, {1, 2}, Shape{4, 3});
      },
      {"repeat_backward", "S(1)", "(1,2)", "(4,3)", "box dy to broadcast first"});
  ExpectInvalid(
      [] {
        PhysicalRepeatBackwardRepeats(kB, Shape{4, 3}, {1, 2}, Shape{4});
      },
      {"repeat_backward", "physical_dy (4)", "1 dims", "(1,2)"});
}

// The signature ElementwiseSignature picks for inputs of shapes `in` with SBPs `sbp`.
SbpSignature Pick(const std::vector<Shape>& in, const std::vector<Sbp>& sbp, const Shape& out,
                  PartialInputs partial) {
  return ElementwiseSignature(GlobalInputs{in, sbp, out, Attrs()}, partial);
}

void ExpectSignature(const SbpSignature& got, const std::vector<Sbp>& in, const Sbp& out) {
  EXPECT_EQ(got.out, out) << got.out.str();
  ASSERT_EQ(got.in.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got.in[i], in[i]) << "input " << i;
}

TEST(ElementwiseSignatureTest, SplitsPassWhereEveryInputCanFollow) {
  const Shape m({6, 4}), row({4}), col({6, 1});
  ExpectSignature(Pick({m, m}, {S(0), S(0)}, m, PartialInputs::kNone), {S(0), S(0)}, S(0));
  // A broadcast input is sliced locally (free); a bias without the split dim stays broadcast.
  ExpectSignature(Pick({m, m}, {kB, S(1)}, m, PartialInputs::kNone), {S(1), S(1)}, S(1));
  ExpectSignature(Pick({m, row}, {S(0), kB}, m, PartialInputs::kAll), {S(0), kB}, S(0));
  // The bias's split on its only dim is the output's dim 1; the column broadcasts along it.
  ExpectSignature(Pick({col, row}, {kB, S(0)}, m, PartialInputs::kNone), {kB, S(0)}, S(1));
  // A split input broadcast along the split dim (size 1) cannot pass: the other split wins.
  ExpectSignature(Pick({col, m}, {S(1), S(0)}, m, PartialInputs::kNone), {S(0), S(0)}, S(0));
  // Two different splits: the cheaper boxing (the smaller input moves).
  const Shape big({6, 40}), small({1, 40});
  ExpectSignature(Pick({big, small}, {S(0), S(1)}, big, PartialInputs::kNone), {S(0), kB}, S(0));
  ExpectSignature(Pick({m, m}, {S(0), S(1)}, m, PartialInputs::kNone), {S(0), S(0)}, S(0));
}

TEST(ElementwiseSignatureTest, PartialSumPassesOnlyWhereTheOpIsLinear) {
  const Shape m({6, 4});
  ExpectSignature(Pick({m, m}, {kP, kP}, m, PartialInputs::kAll), {kP, kP}, kP);
  ExpectSignature(Pick({m, m}, {kP, kB}, m, PartialInputs::kAll), {kP, kP}, kP);
  ExpectSignature(Pick({m, m}, {kB, kP}, m, PartialInputs::kOne), {kB, kP}, kP);
  ExpectSignature(Pick({m, m}, {kP, kB}, m, PartialInputs::kFirst), {kP, kB}, kP);
  // Not linear in the divisor, nor in both factors at once, nor at all: reduced first.
  ExpectSignature(Pick({m, m}, {kB, kP}, m, PartialInputs::kFirst), {kB, kB}, kB);
  ExpectSignature(Pick({m, m}, {kP, kP}, m, PartialInputs::kOne), {kP, kB}, kP);
  ExpectSignature(Pick({m, m}, {kP, kB}, m, PartialInputs::kNone), {kB, kB}, kB);
  // A split and a partial_sum: reduce-scattering the P costs what gathering the S does; S first.
  ExpectSignature(Pick({m, m}, {S(0), kP}, m, PartialInputs::kOne), {S(0), S(0)}, S(0));
  EXPECT_EQ(ElementwiseUnarySbp(kP, PartialInputs::kNone), std::nullopt);
  EXPECT_EQ(ElementwiseUnarySbp(kP, PartialInputs::kAll), kP);
  EXPECT_EQ(ElementwiseUnarySbp(S(2), PartialInputs::kNone), S(2));
}

TEST(MatmulSignatureTest, TheClassicSignaturesAndTheCheapestBoxing) {
  const Shape a({6, 4}), b({4, 5});
  auto pick = [&](const Sbp& x, const Sbp& y) {
    const std::vector<Shape> in = {a, b};
    const std::vector<Sbp> sbp = {x, y};
    return MatmulSignature(GlobalInputs{in, sbp, Shape({6, 5}), Attrs()}, /*batched=*/false);
  };
  ExpectSignature(pick(S(0), kB), {S(0), kB}, S(0));
  ExpectSignature(pick(kB, S(1)), {kB, S(1)}, S(1));
  ExpectSignature(pick(S(1), S(0)), {S(1), S(0)}, kP);
  ExpectSignature(pick(kP, kB), {kP, kB}, kP);
  ExpectSignature(pick(kB, kB), {kB, kB}, kB);  // slicing would be free too: fewer boxings win
  // S(0) x S(1): gathering the smaller operand (b, 20 elements) beats gathering a (24).
  ExpectSignature(pick(S(0), S(1)), {S(0), kB}, S(0));
  const Shape ba({2, 6, 4}), bb({2, 4, 5});
  const std::vector<Shape> in = {ba, bb};
  const std::vector<Sbp> sbp = {S(0), S(0)};
  ExpectSignature(MatmulSignature(GlobalInputs{in, sbp, Shape({2, 6, 5}), Attrs()}, true),
                  {S(0), S(0)}, S(0));
}

TEST(MatmulSignatureTest, LinearsParallelFormsAndPermute) {
  const std::vector<Shape> in = {Shape({6, 4}), Shape({5, 4}), Shape({5})};
  auto pick = [&](const Sbp& x, const Sbp& w, const Sbp& bias) {
    const std::vector<Sbp> sbp = {x, w, bias};
    return LinearSignature(GlobalInputs{in, sbp, Shape({6, 5}), Attrs()});
  };
  ExpectSignature(pick(S(0), kB, kB), {S(0), kB, kB}, S(0));
  ExpectSignature(pick(kB, S(0), S(0)), {kB, S(0), S(0)}, S(1));
  ExpectSignature(pick(S(1), S(1), kB), {S(1), S(1), kP}, kP);
  ExpectSignature(pick(kB, kB, kB), {kB, kB, kB}, kB);
  EXPECT_EQ(InferPermuteSbp(S(2), {2, 0, 1}), S(0));
  EXPECT_EQ(InferPermuteSbp(S(0), {-1, 0, 1}), S(1));
  EXPECT_EQ(InferPermuteSbp(kP, {1, 0}), kP);
}

}  // namespace
}  // namespace ofl::ops::testing
