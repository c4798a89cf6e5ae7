// The GPU kernels' index math (kernels/offset_calc.h), checked on the CPU in every CI run: the
// same header the CUDA kernels compile, so a wrong magic number or a wrong repeat view fails here
// even where no GPU is present.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/offset_calc.h"

namespace ofl::kernels {
namespace {

void ExpectDivides(uint32_t d, uint32_t n) {
  const FixedDivisor div(d);
  uint32_t q = 0, r = 0;
  div.DivMod(n, &q, &r);
  ASSERT_EQ(q, n / d) << n << " / " << d;
  ASSERT_EQ(r, n % d) << n << " % " << d;
}

TEST(FixedDivisorTest, MatchesDivisionForEveryDivisorUpTo4096AndEdgeDividends) {
  const uint32_t top = (uint32_t{1} << 31) - 1;
  for (uint32_t d = 1; d <= 4096; ++d) {
    for (uint32_t n :
         {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, 1000003u, top - d, top - 1, top}) {
      ExpectDivides(d, n);
    }
  }
}

TEST(FixedDivisorTest, MatchesDivisionForLargeAndPowerOfTwoDivisors) {
  std::mt19937_64 rng(7);
  const uint32_t top = (uint32_t{1} << 31) - 1;
  std::vector<uint32_t> divisors = {
      65535,    65536,          65537,   1u << 20, (1u << 20) + 1, 1000003, (1u << 30) - 1,
      1u << 30, (1u << 30) + 1, top - 1, top};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + static_cast<uint32_t>(rng() % top));
  for (uint32_t d : divisors) {
    for (uint32_t n : {0u, d - 1, d, top - 1, top}) ExpectDivides(d, n);
    for (int k = 0; k < 200; ++k)
      ExpectDivides(d, static_cast<uint32_t>(rng() % (uint64_t{top} + 1)));
  }
}

// Each operand's offset at every linear position, the 32-bit and the 64-bit way, against
// index_util.h's LinearToOffsets (which the CPU kernels use).
TEST(OffsetCalcTest, BothIndexWidthsGiveTheOffsetsOfTheCpuIndexMath) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int64_t> shape = testing::RandomShape(rng, 1 + static_cast<int>(rng() % 5));
    const testing::View out = testing::ContiguousView(shape);
    const testing::View in = testing::RandomView(rng, shape, true);
    LoopDims<2> d;
    CopyLoopDims(&d, static_cast<int>(shape.size()), shape.data(), out.stride.data(),
                 in.stride.data());
    ASSERT_TRUE(FitsIn32Bits(d));
    const OffsetCalc<2, uint32_t> calc32(d, d.ndim);
    const OffsetCalc<2, uint64_t> calc64(d, d.ndim);
    const int64_t n = NumElements(d);
    for (int64_t i = 0; i < n; ++i) {
      int64_t want[2];
      LinearToOffsets(d, i, want);
      uint32_t got32[2];
      uint64_t got64[2];
      calc32.Get(static_cast<uint32_t>(i), got32);
      calc64.Get(static_cast<uint64_t>(i), got64);
      for (int op = 0; op < 2; ++op) {
        ASSERT_EQ(static_cast<int64_t>(got32[op]), want[op]) << "trial " << trial << " i " << i;
        ASSERT_EQ(static_cast<int64_t>(got64[op]), want[op]) << "trial " << trial << " i " << i;
      }
    }
  }
}

// Walking the simplified copy nest visits every output element once and pairs it with the input
// element of the same multi-index.
TEST(OffsetCalcTest, TheCopyNestPairsEveryOutputElementWithItsInputElement) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<int64_t> shape = testing::RandomShape(rng, 1 + static_cast<int>(rng() % 5));
    const testing::View out = testing::RandomView(rng, shape, false);
    const testing::View in = testing::RandomView(rng, shape, true);
    LoopDims<2> d;
    CopyLoopDims(&d, static_cast<int>(shape.size()), shape.data(), out.stride.data(),
                 in.stride.data());
    // Reference: for every multi-index, the input offset at the output offset.
    std::vector<int64_t> want(static_cast<size_t>(out.storage), -1);
    const int64_t numel = testing::Numel(shape);
    for (int64_t i = 0; i < numel; ++i) {
      int64_t rest = i, o = 0, s = 0;
      for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
        const int64_t idx = rest % shape[k];
        rest /= shape[k];
        o += idx * out.stride[k];
        s += idx * in.stride[k];
      }
      want[o] = s;
    }
    std::vector<int64_t> got(static_cast<size_t>(out.storage), -1);
    const OffsetCalc<2, uint32_t> calc(d, d.ndim);
    for (int64_t i = 0; i < NumElements(d); ++i) {
      uint32_t off[2];
      calc.Get(static_cast<uint32_t>(i), off);
      ASSERT_EQ(got[off[0]], -1) << "output element written twice, trial " << trial;
      got[off[0]] = off[1];
    }
    ASSERT_EQ(got, want) << "trial " << trial;
  }
}

// The repeat view: walked in order, the output offsets are 0, 1, 2, ... (one contiguous pass)
// and each input offset is that of (output index mod the input shape).
TEST(OffsetCalcTest, TheRepeatNestWritesTheOutputInOrderFromIndexModInputShape) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const int in_ndim = static_cast<int>(rng() % 4);
    const int out_ndim = in_ndim + static_cast<int>(rng() % 3);
    const std::vector<int64_t> in_shape = testing::RandomShape(rng, in_ndim);
    const testing::View in = testing::RandomView(rng, in_shape, true);
    std::vector<int64_t> repeats(out_ndim);
    for (int64_t& r : repeats) r = static_cast<int64_t>(rng() % 4);  // 0 empties the output
    std::vector<int64_t> s(out_ndim, 1), out_shape(out_ndim);
    for (int i = 0; i < in_ndim; ++i) s[out_ndim - in_ndim + i] = in_shape[i];
    for (int i = 0; i < out_ndim; ++i) out_shape[i] = s[i] * repeats[i];
    LoopDims<2> d;
    ASSERT_TRUE(
        RepeatLoopDims(&d, in_ndim, in_shape.data(), in.stride.data(), out_ndim, repeats.data()));
    const int64_t numel = testing::Numel(out_shape);
    ASSERT_EQ(NumElements(d) * (numel == 0 ? 0 : 1), numel) << "trial " << trial;
    if (numel == 0) continue;
    const OffsetCalc<2, uint32_t> calc(d, d.ndim);
    for (int64_t i = 0; i < numel; ++i) {
      uint32_t off[2];
      calc.Get(static_cast<uint32_t>(i), off);
      ASSERT_EQ(off[0], static_cast<uint32_t>(i)) << "trial " << trial;
      int64_t rest = i, want = 0;
      for (int k = out_ndim - 1; k >= 0; --k) {
        const int64_t idx = rest % out_shape[k];
        rest /= out_shape[k];
        const int j = k - (out_ndim - in_ndim);
        if (j >= 0) want += (idx % s[k]) * in.stride[j];
      }
      ASSERT_EQ(static_cast<int64_t>(off[1]), want) << "trial " << trial << " i " << i;
    }
  }
}

TEST(OffsetCalcTest, The32BitPathIsTakenOnlyWhenEveryIndexAndOffsetFits) {
  auto nest = [](int64_t size0, int64_t size1, int64_t in_stride0) {
    LoopDims<2> d;
    d.ndim = 2;
    d.size[0] = size0;
    d.size[1] = size1;
    d.stride[0][0] = size1;
    d.stride[0][1] = 1;
    d.stride[1][0] = in_stride0;
    d.stride[1][1] = 1;
    return d;
  };
  EXPECT_TRUE(FitsIn32Bits(nest(1 << 15, 1 << 15, 0)));           // 2^30 elements
  EXPECT_FALSE(FitsIn32Bits(nest(1 << 16, 1 << 15, 0)));          // 2^31 elements
  EXPECT_FALSE(FitsIn32Bits(nest(4, 8, int64_t{1} << 31)));       // an input offset past 2^31
  EXPECT_FALSE(FitsIn32Bits(nest(4, 8, -8)));                     // a negative stride
  EXPECT_TRUE(FitsIn32Bits(nest(2, 8, (int64_t{1} << 31) - 8)));  // the last offset is 2^31 - 1
}

}  // namespace
}  // namespace ofl::kernels
