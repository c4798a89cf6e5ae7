// SBP rules against an element-by-element simulation, for random small shapes and 1..4 ranks:
// every rank slices its shard of a logical tensor (or, for partial_sum, holds a random part of
// it), runs the local op with the physical arguments the rules give, and the shards must
// reassemble (concatenate along the split axis, sum, or equal for broadcast) to the logical op's
// result. The simulated ops know nothing of the code under test.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

#include "ops/sbp_rules.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

struct T {
  V shape;
  V data;  // row-major
};

T Random(const V& shape, std::mt19937_64& rng) {
  T t{shape, V(static_cast<size_t>(Product(shape)))};
  for (int64_t& x : t.data) x = static_cast<int64_t>(rng() % 100);
  return t;
}

int64_t Offset(const V& idx, const V& shape) { return Address(idx, Contiguous(shape)); }

// out[idx] = in[map(idx)] for every index of `shape`.
template <class F>
T Gather(const T& in, const V& shape, F map) {
  T out{shape, V(static_cast<size_t>(Product(shape)))};
  for (int64_t l = 0; l < Product(shape); ++l) {
    out.data[l] = in.data[Offset(map(Unravel(l, shape)), in.shape)];
  }
  return out;
}

// out[map(idx)] += in[idx] for every index of in.
template <class F>
T Scatter(const T& in, const V& shape, F map) {
  T out{shape, V(static_cast<size_t>(Product(shape)), 0)};
  for (int64_t l = 0; l < Product(in.shape); ++l) {
    out.data[Offset(map(Unravel(l, in.shape)), shape)] += in.data[l];
  }
  return out;
}

T Slice(const T& t, size_t axis, SplitRange r) {
  V shape = t.shape;
  shape[axis] = r.size;
  return Gather(t, shape, [&](V idx) {
    idx[axis] += r.start;
    return idx;
  });
}

// Maps an index of the (padded) output to the input: right-aligned, modulo the input size (the
// broadcast of a size-1 dim and the tiles of repeat alike).
V ModIndex(const V& idx, const V& in_shape) {
  const size_t pad = idx.size() - in_shape.size();
  V in_idx(in_shape.size());
  for (size_t i = 0; i < in_shape.size(); ++i) in_idx[i] = idx[i + pad] % in_shape[i];
  return in_idx;
}

T Expand(const T& t, const V& sizes) {
  return Gather(t, sizes, [&](const V& idx) { return ModIndex(idx, t.shape); });
}
V RepeatShape(const V& in_shape, const V& repeats) {
  V shape = repeats;
  const size_t pad = repeats.size() - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i) shape[i + pad] *= in_shape[i];
  return shape;
}
T Repeat(const T& t, const V& repeats) {
  return Gather(t, RepeatShape(t.shape, repeats),
                [&](const V& idx) { return ModIndex(idx, t.shape); });
}
// expand's and repeat's backward: every dy element adds into the input element it came from.
T SumBack(const T& dy, const V& in_shape) {
  return Scatter(dy, in_shape, [&](const V& idx) { return ModIndex(idx, in_shape); });
}

// The shard of `logical` that rank `index` of `parts` holds under `sbp` (partial_sum: not
// defined by the logical tensor; callers make their own parts).
T Shard(const T& logical, const Sbp& sbp, int parts, int index) {
  if (!sbp.is_split()) return logical;
  const size_t a = static_cast<size_t>(sbp.axis());
  return Slice(logical, a, BalancedSplit(logical.shape[a], parts, index));
}

V RandomShape(std::mt19937_64& rng, size_t max_rank) {
  V s(rng() % (max_rank + 1));
  for (int64_t& d : s) d = rng() % 10 == 0 ? 0 : static_cast<int64_t>(rng() % 5);
  return s;
}

Sbp RandomSbp(std::mt19937_64& rng, size_t rank) {
  const uint64_t k = rng() % 4;
  if (rank == 0 || k == 0) return rng() % 2 ? Sbp::broadcast() : Sbp::partial_sum();
  return Sbp::split(static_cast<int>(rng() % rank));
}

// Splits `logical` into `parts` random terms that sum to it.
std::vector<T> PartialParts(const T& logical, int parts, std::mt19937_64& rng) {
  std::vector<T> out(static_cast<size_t>(parts), logical);
  for (size_t i = 0; i < logical.data.size(); ++i) {
    int64_t rest = logical.data[i];
    for (int p = 0; p + 1 < parts; ++p) {
      out[p].data[i] = static_cast<int64_t>(rng() % 21) - 10;
      rest -= out[p].data[i];
    }
    out[parts - 1].data[i] = rest;
  }
  return out;
}

// Every rank's input under `in_sbp`, run through `local` (rank, physical input) -> physical
// output, must reassemble to `want` under `out_sbp`.
template <class F>
void CheckShards(const T& in, const Sbp& in_sbp, const T& want, const Sbp& out_sbp, int parts,
                 std::mt19937_64& rng, F local) {
  std::vector<T> inputs;
  if (in_sbp.is_partial_sum()) {
    inputs = PartialParts(in, parts, rng);
  } else {
    for (int r = 0; r < parts; ++r) inputs.push_back(Shard(in, in_sbp, parts, r));
  }
  T sum{want.shape, V(want.data.size(), 0)};
  for (int r = 0; r < parts; ++r) {
    const T got = local(r, inputs[r]);
    ASSERT_EQ(Shape(got.shape), PhysicalShape(Shape(want.shape), out_sbp, parts, r))
        << "rank " << r << " of " << parts;
    if (out_sbp.is_partial_sum()) {
      for (size_t i = 0; i < sum.data.size(); ++i) sum.data[i] += got.data[i];
    } else {
      ASSERT_EQ(got.data, Shard(want, out_sbp, parts, r).data) << "rank " << r << " of " << parts;
    }
  }
  if (out_sbp.is_partial_sum()) EXPECT_EQ(sum.data, want.data);
}

TEST(SbpRulesPropertyTest, SplitShardsTileTheLogicalShape) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 300; ++iter) {
    V logical = RandomShape(rng, 4);
    if (logical.empty()) logical.push_back(3);
    const int axis = static_cast<int>(rng() % logical.size());
    for (int parts = 1; parts <= 4; ++parts) {
      int64_t next = 0;
      for (int r = 0; r < parts; ++r) {
        const Shape phys = PhysicalShape(Shape(logical), Sbp::split(axis), parts, r);
        const SplitRange range = BalancedSplit(logical[axis], parts, r);
        EXPECT_EQ(range.start, next);
        EXPECT_EQ(phys[axis], range.size);
        // Balanced: shard sizes differ by at most one, larger ones first.
        EXPECT_LE(range.size, logical[axis] / parts + 1);
        EXPECT_GE(range.size, logical[axis] / parts);
        next += phys[axis];
        for (size_t d = 0; d < logical.size(); ++d) {
          if (static_cast<int>(d) != axis) EXPECT_EQ(phys[d], logical[d]);
        }
      }
      EXPECT_EQ(next, logical[axis]) << Str(logical) << " split(" << axis << ") over " << parts;
    }
  }
}

TEST(SbpRulesPropertyTest, Expand) {
  std::mt19937_64 rng(12);
  int split_cases = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const V in_shape = RandomShape(rng, 3);
    V out_shape(rng() % 3, 0);
    for (int64_t& d : out_shape) d = static_cast<int64_t>(rng() % 4);
    for (int64_t d : in_shape) {
      out_shape.push_back(d == 1 && rng() % 2 ? static_cast<int64_t>(rng() % 4) : d);
    }
    Sbp sbp = RandomSbp(rng, in_shape.size());
    const Shape in(in_shape), out(out_shape);
    if (sbp.is_split() && in_shape[sbp.axis()] != out_shape[sbp.axis() + out.ndim() - in.ndim()]) {
      sbp = Sbp::broadcast();  // the error case, checked in sbp_rules_test.cpp
    }
    const Sbp out_sbp = InferExpandSbp(in, sbp, out);
    split_cases += sbp.is_split();
    const T x = Random(in_shape, rng);
    const T want = Expand(x, out_shape);
    for (int parts = 1; parts <= 4; ++parts) {
      CheckShards(x, sbp, want, out_sbp, parts, rng, [&](int r, const T& shard) {
        const V sizes = PhysicalExpandSizes(in, sbp, out, Shape(shard.shape));
        if (out_sbp.is_split()) {
          const int a = out_sbp.axis();
          EXPECT_EQ(sizes[a], BalancedSplit(out_shape[a], parts, r).size);
        }
        return Expand(shard, sizes);
      });
    }
  }
  EXPECT_GT(split_cases, 100);
}

TEST(SbpRulesPropertyTest, Repeat) {
  std::mt19937_64 rng(13);
  int passed = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const V in_shape = RandomShape(rng, 3);
    V repeats(in_shape.size() + rng() % 2);
    for (int64_t& r : repeats) r = static_cast<int64_t>(rng() % 2 ? 1 : rng() % 4);
    const Sbp sbp = RandomSbp(rng, in_shape.size());
    const std::optional<Sbp> out_sbp = InferRepeatSbp(Shape(in_shape), sbp, repeats);
    const int pad = static_cast<int>(repeats.size() - in_shape.size());
    ASSERT_EQ(out_sbp.has_value(), !sbp.is_split() || repeats[sbp.axis() + pad] == 1);
    if (!out_sbp) continue;
    passed += sbp.is_split();
    const T x = Random(in_shape, rng);
    const T want = Repeat(x, repeats);
    for (int parts = 1; parts <= 4; ++parts) {
      CheckShards(x, sbp, want, *out_sbp, parts, rng,
                  [&](int, const T& shard) { return Repeat(shard, repeats); });
    }
  }
  EXPECT_GT(passed, 50);
}

// A shape with the element count of `s`: dims split into factors, merged with the next, or kept,
// plus inserted 1s; so that splits often survive.
V Reshaped(const V& s, std::mt19937_64& rng) {
  V out;
  for (size_t i = 0; i < s.size(); ++i) {
    const uint64_t k = rng() % 4;
    if (k == 0 && i + 1 < s.size()) {
      out.push_back(s[i] * s[i + 1]);
      ++i;
    } else if (k == 1 && s[i] > 1 && s[i] % 2 == 0) {
      out.push_back(2);
      out.push_back(s[i] / 2);
    } else {
      out.push_back(s[i]);
    }
    if (rng() % 6 == 0) out.push_back(1);
  }
  return out;
}

TEST(SbpRulesPropertyTest, Reshape) {
  std::mt19937_64 rng(14);
  int passed = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const V in_shape = RandomShape(rng, 4);
    const V out_shape = Reshaped(in_shape, rng);
    const Sbp sbp = RandomSbp(rng, in_shape.size());
    const std::optional<Sbp> out_sbp = InferReshapeSbp(Shape(in_shape), sbp, Shape(out_shape));
    if (!sbp.is_split()) ASSERT_EQ(out_sbp, sbp);
    if (!out_sbp) continue;
    passed += sbp.is_split();
    const T x = Random(in_shape, rng);
    const T want{out_shape, x.data};
    for (int parts = 1; parts <= 4; ++parts) {
      CheckShards(x, sbp, want, *out_sbp, parts, rng, [&](int r, const T& shard) {
        return T{PhysicalShape(Shape(out_shape), *out_sbp, parts, r).vec(), shard.data};
      });
    }
  }
  EXPECT_GT(passed, 50);
}

TEST(SbpRulesPropertyTest, ExpandBackward) {
  std::mt19937_64 rng(15);
  int partial = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const V in_shape = RandomShape(rng, 3);
    V dy_shape(rng() % 3, 0);
    for (int64_t& d : dy_shape) d = static_cast<int64_t>(rng() % 4);
    for (int64_t d : in_shape) {
      dy_shape.push_back(d == 1 && rng() % 2 ? static_cast<int64_t>(rng() % 4) : d);
    }
    const Sbp sbp = RandomSbp(rng, dy_shape.size());
    const Sbp dx_sbp = InferExpandBackwardSbp(sbp, Shape(dy_shape), Shape(in_shape));
    partial += sbp.is_split() && dx_sbp.is_partial_sum();
    const T dy = Random(dy_shape, rng);
    const T want = SumBack(dy, in_shape);
    for (int parts = 1; parts <= 4; ++parts) {
      CheckShards(dy, sbp, want, dx_sbp, parts, rng, [&](int r, const T& shard) {
        return SumBack(shard, PhysicalShape(Shape(in_shape), dx_sbp, parts, r).vec());
      });
    }
  }
  EXPECT_GT(partial, 30);
}

TEST(SbpRulesPropertyTest, RepeatBackward) {
  std::mt19937_64 rng(16);
  int partial = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const V in_shape = RandomShape(rng, 3);
    V repeats(in_shape.size() + rng() % 2);
    for (int64_t& r : repeats) r = static_cast<int64_t>(rng() % 2 ? 1 : rng() % 4);
    const T dy = Random(RepeatShape(in_shape, repeats), rng);
    const Sbp sbp = RandomSbp(rng, dy.shape.size());
    const std::optional<Sbp> dx_sbp = InferRepeatBackwardSbp(sbp, Shape(in_shape), repeats);
    if (!dx_sbp) continue;
    partial += sbp.is_split() && dx_sbp->is_partial_sum();
    const T want = SumBack(dy, in_shape);
    for (int parts = 1; parts <= 4; ++parts) {
      CheckShards(dy, sbp, want, *dx_sbp, parts, rng, [&](int r, const T& shard) {
        const V local_in = PhysicalShape(Shape(in_shape), *dx_sbp, parts, r).vec();
        const V local_repeats =
            PhysicalRepeatBackwardRepeats(sbp, Shape(in_shape), repeats, Shape(shard.shape));
        // The local op's contract: dy is the repeat of its input by the physical repeats.
        EXPECT_EQ(RepeatShape(local_in, local_repeats), shard.shape);
        return SumBack(shard, local_in);
      });
    }
  }
  EXPECT_GT(partial, 20);
}

}  // namespace
}  // namespace ofl::ops::testing
