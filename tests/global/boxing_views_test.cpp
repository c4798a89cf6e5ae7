// Boxing from shards that are views into larger storages: a narrow of a bigger local tensor, a
// permuted tensor, the slice a B -> S boxing keeps, the balanced slice to_global keeps of uneven
// shards. Every boxing must read exactly the view's elements (from its offset), never the storage
// from its start, and must not write past its output. Values are distinct (0, 1, 2, ...) so a
// wrong row cannot pass for the right one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"

namespace ofl::testing {
namespace {

template <class T>
std::vector<T> Iota(const Shape& shape) {
  std::vector<T> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return v;
}

int64_t RowSize(const Shape& shape) {
  int64_t inner = 1;
  for (int d = 1; d < shape.ndim(); ++d) inner *= shape[d];
  return inner;
}

// `t`'s value as a narrow (rows 2.. along dim 0) of a larger local tensor whose other rows hold
// -1: a contiguous view at an offset into its storage.
template <class T>
Tensor AsNarrowView(const Tensor& t) {
  const Shape shape = t.shape();
  const std::vector<T> v = t.to_vector<T>();
  const size_t row = static_cast<size_t>(RowSize(shape));
  std::vector<T> big(2 * row, static_cast<T>(-1));
  big.insert(big.end(), v.begin(), v.end());
  big.insert(big.end(), 3 * row, static_cast<T>(-1));
  const Tensor whole = tensor<T>(big, WithDim(shape, 0, shape[0] + 5), Device("cpu"));
  return whole.narrow(0, 2, shape[0]);
}

// `t`'s value as a permuted view of a tensor laid out with the dims reversed.
Tensor AsPermutedView(const Tensor& t) {
  std::vector<int64_t> rev;
  for (int d = t.dim() - 1; d >= 0; --d) rev.push_back(d);
  return t.permute(rev).contiguous().permute(rev);
}

// Global tensors with the logical value `logical` under `sbp`, each from a differently made shard.
template <class T>
std::vector<std::pair<std::string, Tensor>> ViewShards(const std::vector<T>& logical,
                                                       const Shape& shape, const Sbp& sbp) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const Tensor piece = LocalPiece<T>(logical, shape, sbp, me, n);
  std::vector<std::pair<std::string, Tensor>> out;
  out.emplace_back("narrow", AsNarrowView<T>(piece).to_global(p, sbp));
  if (shape.ndim() >= 2) out.emplace_back("permute", AsPermutedView(piece).to_global(p, sbp));
  // The result of another boxing (B -> S keeps a slice of the broadcast value).
  const Tensor b = tensor<T>(logical, shape, Device("cpu")).to_global(p, Sbp::broadcast());
  out.emplace_back("boxed from B", b.to_global(p, sbp));
  if (sbp.is_split() && shape.ndim() >= 2) {
    const Sbp other = Sbp::split(sbp.axis() == 0 ? 1 : 0);
    out.emplace_back("boxed from " + other.str(), b.to_global(p, other).to_global(p, sbp));
  }
  return out;
}

template <class T>
void CheckEveryBoxingPairFromViews(const Shape& shape) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const std::vector<T> logical = Iota<T>(shape);
  for (const Sbp& from : AllSbps(shape)) {
    for (const auto& [how, g] : ViewShards<T>(logical, shape, from)) {
      for (const Sbp& to : AllSbps(shape)) {
        SCOPED_TRACE(from.str() + " (" + how + ") -> " + to.str() + " on " + shape.str());
        const Tensor b = g.to_global(p, to);
        EXPECT_EQ(b.shape(), shape);
        if (to.is_split()) {
          const ops::SplitRange r = ops::BalancedSplit(shape[to.axis()], n, me);
          EXPECT_EQ(b.to_local().to_vector<T>(), Slice(logical, shape, to.axis(), r.start, r.size));
        } else if (to.is_broadcast()) {
          EXPECT_EQ(b.to_local().to_vector<T>(), logical);
        }
        EXPECT_EQ(b.to_vector<T>(), logical);
      }
    }
  }
}

TEST(BoxingViewsTest, BroadcastToSplitToPartialSumReadsBackTheLogicalValue) {
  const Placement p = World();
  const Shape shape({5, 3});
  const std::vector<float> logical = Iota<float>(shape);  // 0 .. 14
  const Tensor s = tensor<float>(logical, shape, Device("cpu"))
                       .to_global(p, Sbp::broadcast())
                       .to_global(p, Sbp::split(0));
  EXPECT_EQ(s.to_global(p, Sbp::partial_sum()).to_vector<float>(), logical);
}

TEST(BoxingViewsTest, EveryBoxingPairFromViewShardsKeepsTheLogicalValue) {
  CheckEveryBoxingPairFromViews<float>(Shape({5, 3}));
  CheckEveryBoxingPairFromViews<float>(Shape({2, 7}));
  CheckEveryBoxingPairFromViews<int64_t>(Shape({3, 4, 2}));
  CheckEveryBoxingPairFromViews<double>(Shape({9}));
}

// Uneven shards given as views: to_global keeps the balanced slice of their concatenation (a view
// of the gathered value), and every boxing from it keeps the logical value.
TEST(BoxingViewsTest, UnevenViewShardsRebalancedByToGlobalBoxToEverySbp) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const Shape shape({6, 4});
  const std::vector<float> logical = Iota<float>(shape);
  for (int axis = 0; axis < 2; ++axis) {
    // Rank 0 holds everything, the others nothing along `axis`.
    const int64_t size = me == 0 ? shape[axis] : 0;
    const Tensor mine = tensor<float>(Slice(logical, shape, axis, 0, size),
                                      WithDim(shape, axis, size), Device("cpu"));
    const Tensor g = AsNarrowView<float>(mine).to_global(p, Sbp::split(axis));
    ASSERT_EQ(g.shape(), shape);
    const ops::SplitRange kept = ops::BalancedSplit(shape[axis], n, me);
    EXPECT_EQ(g.to_local().to_vector<float>(), Slice(logical, shape, axis, kept.start, kept.size));
    for (const Sbp& to : AllSbps(shape)) {
      SCOPED_TRACE("uneven S(" + std::to_string(axis) + ") -> " + to.str());
      EXPECT_EQ(g.to_global(p, to).to_vector<float>(), logical);
    }
  }
}

// A (200, 3) narrow of a (20000, 3) local tensor boxed S(0) -> P: its output holds the logical
// value and the tensors alive after it in the pool keep theirs.
TEST(BoxingViewsTest, SplitToPartialSumOfANarrowLeavesOtherTensorsUnchanged) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const Shape big_shape({20000, 3});
  const std::vector<float> big = Iota<float>(big_shape);
  const Tensor local = tensor<float>(big, big_shape, Device("cpu")).narrow(0, 200 * me, 200);
  const Tensor g = local.to_global(p, Sbp::split(0));
  const Shape shape({200 * static_cast<int64_t>(n), 3});
  // A free block of twice the output's size with live tensors after it: the output is carved
  // from its start, and anything written past the output's end lands in the live ones.
  Tensor hole = empty(Shape({2 * shape.numel()}), DType::kFloat32, Device("cpu"));
  std::vector<Tensor> live;
  for (int i = 0; i < 64; ++i) {
    live.push_back(tensor<float>(std::vector<float>(static_cast<size_t>(shape.numel()), 7.f), shape,
                                 Device("cpu")));
  }
  hole = Tensor();
  const Tensor partial = g.to_global(p, Sbp::partial_sum());
  const std::vector<float> want(big.begin(), big.begin() + shape.numel());
  EXPECT_EQ(partial.to_vector<float>(), want);
  int changed = 0;
  for (const Tensor& t : live) {
    const std::vector<float> v = t.to_vector<float>();
    changed += std::any_of(v.begin(), v.end(), [](float x) { return x != 7.f; }) ? 1 : 0;
  }
  EXPECT_EQ(changed, 0) << "of " << live.size() << " live tensors";
}

}  // namespace
}  // namespace ofl::testing
