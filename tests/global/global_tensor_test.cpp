// Global tensors across the ranks mpiexec started (CTest: 2, 3 and 4 ranks, and one process):
// to_global from local shards, every boxing pair between S(0), S(1), B and P on even, uneven and
// empty-shard shapes for several element types, global empty, ranks outside a placement, and the
// errors of the global API. Every rank runs every test in the same order.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"

namespace ofl::testing {
namespace {

Placement World() {
  std::vector<int> ranks;
  for (int r = 0; r < world_size(); ++r) ranks.push_back(r);
  return Placement("cpu", ranks);
}

// Logical value: element i is (i % 7) + 1 (small integers, exact in every type).
template <class T>
std::vector<T> Logical(const Shape& shape) {
  std::vector<T> v(shape.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(static_cast<int>(i % 7) + 1);
  return v;
}

// The slice [start, start + size) of `v` (shape `shape`) along `axis`, row-major.
template <class T>
std::vector<T> Slice(const std::vector<T>& v, const Shape& shape, int axis, int64_t start,
                     int64_t size) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < shape.ndim(); ++d) inner *= shape[d];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = start; k < start + size; ++k) {
      for (int64_t i = 0; i < inner; ++i) out.push_back(v[(o * shape[axis] + k) * inner + i]);
    }
  }
  return out;
}

Shape WithDim(Shape s, int axis, int64_t size) {
  std::vector<int64_t> d(s.begin(), s.end());
  d[axis] = size;
  return Shape(d);
}

// This rank's local piece of the logical value under `sbp` (P: index 0 holds the value minus the
// others' ones; bool P: index 0 holds it all, since a bool sum is an OR).
template <class T>
Tensor LocalPiece(const std::vector<T>& logical, const Shape& shape, const Sbp& sbp, int me,
                  int n) {
  if (sbp.is_split()) {
    const ops::SplitRange r = ops::BalancedSplit(shape[sbp.axis()], n, me);
    return tensor<T>(Slice(logical, shape, sbp.axis(), r.start, r.size),
                     WithDim(shape, sbp.axis(), r.size), Device("cpu"));
  }
  if (sbp.is_broadcast()) return tensor<T>(logical, shape, Device("cpu"));
  std::vector<T> piece(logical.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      piece[i] = me == 0 ? logical[i] : false;
    } else {
      piece[i] =
          me == 0 ? static_cast<T>(static_cast<double>(logical[i]) - (n - 1)) : static_cast<T>(1);
    }
  }
  return tensor<T>(piece, shape, Device("cpu"));
}

std::vector<Sbp> AllSbps(const Shape& shape) {
  std::vector<Sbp> s = {Sbp::broadcast(), Sbp::partial_sum()};
  for (int a = 0; a < shape.ndim(); ++a) s.push_back(Sbp::split(a));
  return s;
}

template <class T>
void CheckEveryBoxingPair(const Shape& shape) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const std::vector<T> logical = Logical<T>(shape);
  for (const Sbp& from : AllSbps(shape)) {
    const Tensor g = LocalPiece<T>(logical, shape, from, me, n).to_global(p, from);
    ASSERT_TRUE(g.is_global());
    ASSERT_EQ(g.shape(), shape) << from.str();
    for (const Sbp& to : AllSbps(shape)) {
      SCOPED_TRACE(from.str() + " -> " + to.str() + " on " + shape.str());
      const Tensor b = g.to_global(p, to);
      EXPECT_EQ(b.sbp(), to);
      EXPECT_EQ(b.placement(), p);
      EXPECT_EQ(b.shape(), shape);
      if (to.is_split()) {
        const ops::SplitRange r = ops::BalancedSplit(shape[to.axis()], n, me);
        EXPECT_EQ(b.to_local().shape(), WithDim(shape, to.axis(), r.size));
        EXPECT_EQ(b.to_local().to_vector<T>(), Slice(logical, shape, to.axis(), r.start, r.size));
      } else if (to.is_broadcast()) {
        EXPECT_EQ(b.to_local().to_vector<T>(), logical);
      }
      EXPECT_EQ(b.to_vector<T>(), logical);  // P: summed through boxing to B
    }
  }
}

TEST(GlobalTensorTest, InitDistributedIsIdempotentAndNamesTheWorld) {
  init_distributed();
  init_distributed();
  EXPECT_GE(world_size(), 1);
  EXPECT_GE(rank(), 0);
  EXPECT_LT(rank(), world_size());
}

TEST(GlobalTensorTest, EveryBoxingPairKeepsTheLogicalValueFloat) {
  for (const Shape& s : {Shape({8, 4}), Shape({5, 3}), Shape({2, 7}), Shape({1, 3})}) {
    CheckEveryBoxingPair<float>(s);
  }
}

TEST(GlobalTensorTest, EveryBoxingPairKeepsTheLogicalValueOtherTypes) {
  CheckEveryBoxingPair<int64_t>(Shape({5, 3}));
  CheckEveryBoxingPair<int8_t>(Shape({3, 2, 5}));
  CheckEveryBoxingPair<double>(Shape({7}));
  CheckEveryBoxingPair<float16>(Shape({6, 5}));
  CheckEveryBoxingPair<bool>(Shape({5, 2}));
}

TEST(GlobalTensorTest, SplitShardsOfAnySizeConcatenateAlongTheAxis) {
  const Placement p = World();
  const int me = p.index_of(rank()), n = p.size();
  // Rank i passes i + 1 rows of value i: the logical tensor is their concatenation.
  const std::vector<float> mine(static_cast<size_t>((me + 1) * 2), static_cast<float>(me));
  const Tensor g =
      tensor<float>(mine, Shape({me + 1, 2}), Device("cpu")).to_global(p, Sbp::split(0));
  const int64_t rows = static_cast<int64_t>(n) * (n + 1) / 2;
  EXPECT_EQ(g.shape(), Shape({rows, 2}));
  std::vector<float> want;
  for (int r = 0; r < n; ++r) want.insert(want.end(), static_cast<size_t>((r + 1) * 2), r);
  EXPECT_EQ(g.to_vector<float>(), want);
  // Held as the balanced split from then on.
  EXPECT_EQ(g.to_local().shape()[0], ops::BalancedSplit(rows, n, me).size);
}

TEST(GlobalTensorTest, GlobalEmptyAllocatesOnlyTheShard) {
  const Placement p = World();
  const int me = p.index_of(rank()), n = p.size();
  const Tensor g = empty(Shape({10, 3}), DType::kFloat32, p, Sbp::split(0));
  EXPECT_EQ(g.shape(), Shape({10, 3}));
  EXPECT_EQ(g.numel(), 30);
  EXPECT_EQ(g.to_local().shape(), Shape({ops::BalancedSplit(10, n, me).size, 3}));
  EXPECT_EQ(empty(Shape({4}), DType::kInt32, p, Sbp::broadcast()).to_local().shape(), Shape({4}));
}

TEST(GlobalTensorTest, RanksOutsideThePlacementHoldNothing) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement first("cpu", {0});
  const Tensor g =
      tensor<int32_t>({1, 2, 3}, Shape({3}), Device("cpu")).to_global(first, Sbp::broadcast());
  EXPECT_EQ(g.shape(), Shape({3}));
  if (rank() == 0) {
    EXPECT_EQ(g.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  } else {
    EXPECT_EQ(g.to_local().numel(), 0);
    try {
      (void)g.to_vector<int32_t>();
      ADD_FAILURE() << "read on a rank outside the placement";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("outside the tensor's Placement"), std::string::npos)
          << e.what();
    }
  }
}

void ExpectInvalid(const std::function<void()>& fn, const std::vector<std::string>& pieces) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& e) {
    for (const std::string& piece : pieces) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos)
          << "'" << piece << "' not in: " << e.what();
    }
  }
}

TEST(GlobalTensorTest, BadCallsAreClearErrorsOnEveryRankAndLeaveTheRuntimeWorking) {
  const Placement p = World();
  const Tensor g = empty(Shape({4, 2}), DType::kFloat32, p, Sbp::broadcast());
  ExpectInvalid([&] { (void)g.expand({3, 4, 2}); }, {"expand", "global tensor", "Placement"});
  ExpectInvalid([&] { (void)g.to(Device("sim:0")); }, {"to", "global tensor"});
  ExpectInvalid([&] { (void)g.to_global(p, Sbp::split(2)); }, {"to_global", "S(2)", "(4,2"});
  ExpectInvalid(
      [&] {
        (void)empty(Shape({4}), DType::kFloat32, Placement("cpu", {world_size()}),
                    Sbp::broadcast());
      },
      {"empty", "rank " + std::to_string(world_size()), "outside the world"});
  ExpectInvalid(
      [&] { (void)empty(Shape({4}), DType::kFloat32, Placement("sim", {0}), Sbp::broadcast()); },
      {"empty", "sim", "cpu placements only"});
  ExpectInvalid([] { (void)tensor<float>({1}, Shape({1}), Device("cpu")).placement(); },
                {"placement", "local"});
  // Shards that do not fit together: every rank sees every shape, so every rank throws.
  if (world_size() >= 2) {
    const int64_t cols = rank() == 0 ? 3 : 2;
    ExpectInvalid(
        [&] {
          (void)tensor<float>(std::vector<float>(cols, 1.f), Shape({1, cols}), Device("cpu"))
              .to_global(p, Sbp::split(0));
        },
        {"to_global", "do not fit together", "only the split axis may differ"});
  }
  const Tensor ok = tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(p, Sbp::broadcast());
  EXPECT_EQ(ok.to_vector<float>(), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace ofl::testing
