// Accuracy and determinism of the "reduce_sum_to" kernel on long sums (issue 7), on the device in
// OFL_TEST_DEVICE (the CPU when unset): sums of 1e3 to 1e7 terms, of a constant and of random
// values, through an expanded, two permuted and a contiguous input, against an exact reference.
// float32 must be within 1e-6 (and one ulp of the correctly rounded sum), float64 within a
// cascade's bound, float16 / bfloat16 within one ulp of the correctly rounded sum of their
// (rounded) inputs; and the bits of every CPU sum must not depend on the run or on oneTBB's thread
// count.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "oneflow_lite/oneflow_lite.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

// splitmix64: much cheaper than mt19937_64 for the 1e7-element inputs.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <class T>
double ToDouble(T x) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return static_cast<float>(x);
  } else {
    return static_cast<double>(x);
  }
}

template <class T>
T FromDouble(double d) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(d));
  } else {
    return static_cast<T>(d);
  }
}

// Every value these tests generate is a multiple of 2^-kQuantum<T>, so their exact sum is an
// integer sum: float16 values always are (of 2^-24); the random bfloat16 values lie in
// [2^-23, 2), so they are multiples of 2^-30; the random float32 / float64 values are k * 2^-23 /
// k * 2^-52 for k below 2^24 / 2^53; the constants are 1.1 rounded to the dtype.
template <class T>
constexpr int kQuantum = std::is_same_v<T, double>     ? 52
                         : std::is_same_v<T, float16>  ? 24
                         : std::is_same_v<T, bfloat16> ? 30
                                                       : 23;

// x in units of 2^-kQuantum<T>: at most 2^53. float16 is decoded from its bits, so that the
// reference does not share the library's conversion.
template <class T>
uint64_t Quanta(T x) {
  if constexpr (std::is_same_v<T, float16>) {
    const uint64_t e = x.bits >> 10, m = x.bits & 0x3ffu;  // the tests' values are positive
    return e == 0 ? m : (1024 + m) << (e - 1);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(ToDouble(x) * 0x1.0p52 /
                                                      (std::is_same_v<T, double>     ? 0x1.0p0
                                                       : std::is_same_v<T, bfloat16> ? 0x1.0p22
                                                                                     : 0x1.0p29)));
  }
}

// The exact sum of the values (one rounding, to long double's 64-bit significand), summed as
// integers in units of the quantum, 1024 (below 2^63 together) at a time.
template <class T>
long double ExactSum(const T* x, int64_t n) {
  __extension__ unsigned __int128 total = 0;
  for (int64_t i = 0; i < n; i += 1024) {
    uint64_t chunk = 0;
    for (int64_t j = i; j < std::min(n, i + 1024); ++j) chunk += Quanta(x[j]);
    total += chunk;
  }
  return std::ldexp(static_cast<long double>(total), -kQuantum<T>);
}

// Scales the values so that a float16 sum of n of them (each below 2) stays below 2^15.
template <class T>
int ScaleShift(int64_t n) {
  if (!std::is_same_v<T, float16>) return 0;
  int lg = 0;
  while ((int64_t{1} << lg) < n) ++lg;
  return std::max(0, lg - 14);
}

// Random values in [0, 2 * 2^-shift): uniform k * 2^-23 or k * 2^-52 for float32 / float64;
// uniform bit patterns for the 16-bit floats (every float16 below the bound, subnormals included;
// bfloat16 from 2^-23 on), which spreads them over the binades.
template <class T>
void FillRandom(std::vector<T>* v, int64_t n, int shift, uint64_t seed) {
  uint64_t state = seed;
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    const uint16_t lo = std::is_same_v<T, float16> ? 0 : 0x3400;  // bfloat16 2^-23
    const uint16_t hi = static_cast<uint16_t>(                    // the bits of 2 * 2^-shift
        std::is_same_v<T, float16> ? (16 - shift) << 10 : 0x4000);
    for (int64_t i = 0; i < n; ++i) {
      (*v)[static_cast<size_t>(i)] =
          T::from_bits(static_cast<uint16_t>(lo + NextRandom(&state) % (hi - lo)));
    }
  } else {
    const double scale = std::ldexp(1.0, (std::is_same_v<T, double> ? -52 : -23) - shift);
    const int drop = std::is_same_v<T, double> ? 11 : 40;  // keep 53 or 24 random bits
    for (int64_t i = 0; i < n; ++i) {
      (*v)[static_cast<size_t>(i)] =
          static_cast<T>(static_cast<double>(NextRandom(&state) >> drop) * scale);
    }
  }
}

template <class T>
auto Bits(T x) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return x.bits;
  } else {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    U u;
    std::memcpy(&u, &x, sizeof(u));
    return u;
  }
}

template <class T, class U>
T FromBits(U u) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T::from_bits(static_cast<uint16_t>(u));
  } else {
    T x;
    std::memcpy(&x, &u, sizeof(x));
    return x;
  }
}

// The correctly rounded (to nearest) T of a positive r: the conversion through double and float
// can round twice, so the neighbours of its result are checked too.
template <class T>
T RoundedSum(long double r) {
  const auto b = Bits(FromDouble<T>(static_cast<double>(r)));
  T best = FromBits<T>(b);
  for (auto c : {b - 1, b + 1}) {
    const T x = FromBits<T>(c);
    if (std::fabs(ToDouble(x) - r) < std::fabs(ToDouble(best) - r)) best = x;
  }
  return best;
}

// A strided view of the input storage, summed to one element.
struct Layout {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
};

template <class T>
T SumThroughKernel(const T* data, const Layout& l) {
  T out{};
  KernelContext ctx;
  TensorArg a;
  a.data = const_cast<T*>(data);
  a.shape = Shape(l.shape);
  a.stride = Shape(l.stride);
  a.dtype = DTypeOf<T>::value;
  ctx.inputs.push_back(a);
  a.data = &out;
  const std::vector<int64_t> ones(l.shape.size(), 1);
  a.shape = Shape(ones);
  a.stride = Shape(ones);
  ctx.outputs.push_back(a);
  RunKernel("reduce_sum_to", ctx);
  return out;
}

template <class T>
void ExpectAccurate(const std::string& what, T got, long double exact) {
  SCOPED_TRACE(what);
  const double rel = static_cast<double>(std::fabs((ToDouble(got) - exact) / exact));
  if constexpr (std::is_same_v<T, double>) {
    // A cascade of four levels of 2^6 accumulations errs by at most about 256 ulps (3e-14) at 1e7
    // terms, and by under 10 on these sums; one double accumulator (or eight) errs by 2e-10.
    EXPECT_LE(rel, 1e-13) << "sum " << got << ", exact " << static_cast<double>(exact);
  } else {
    if constexpr (std::is_same_v<T, float>) {
      EXPECT_LE(rel, 1e-6) << "sum " << got << ", exact " << static_cast<double>(exact);
    }
    // Not worse than the correctly rounded sum give or take one ulp (one half-ulp of rounding
    // is all a double accumulation of these terms may cost).
    const T want = RoundedSum<T>(exact);
    const int64_t ulps = static_cast<int64_t>(Bits(got)) - static_cast<int64_t>(Bits(want));
    EXPECT_LE(std::abs(ulps), 1) << "sum " << ToDouble(got) << ", correctly rounded "
                                 << ToDouble(want) << ", exact " << static_cast<double>(exact)
                                 << ", relative error " << rel;
  }
}

// Sums of n = 1e3 .. 1e7 terms, each over one output element: the input through a contiguous
// view, dy.reshape(n/1000, 2, 500).permute(1, 0, 2) (runs of 500 in a permuted order),
// dy.reshape(n/2, 2).permute(1, 0) (a strided summed dim; up to 1e6 terms), and expanded
// (stride 0) views.
template <class T>
void CheckLongSums() {
  const int64_t max_n = 10'000'000;
  std::vector<T> data(static_cast<size_t>(max_n));
  for (int64_t n = 1000; n <= max_n; n *= 10) {
    const int shift = ScaleShift<T>(n);
    std::vector<Layout> dense = {
        {"contiguous", {n}, {1}},
        {"permuted (2, n/1000, 500)", {2, n / 1000, 500}, {500, 1000, 1}},
    };
    // Strided loads are scalar: at 1e7 terms this layout would cost more than all the others, and
    // its sums go through the same lanes and cascade as the contiguous ones.
    if (n <= 1'000'000) dense.push_back({"permuted (2, n/2)", {2, n / 2}, {1, 2}});
    // A constant: 1.1 (scaled for float16) rounded to T.
    const T c = FromDouble<T>(std::ldexp(1.1, -shift));
    const long double exact_c = static_cast<long double>(ToDouble(c)) * n;
    std::fill_n(data.begin(), n, c);
    for (const Layout& l : dense) {
      ExpectAccurate("constant, n=" + std::to_string(n) + ", " + l.name,
                     SumThroughKernel(data.data(), l), exact_c);
    }
    ExpectAccurate("constant, n=" + std::to_string(n) + ", expanded",
                   SumThroughKernel(data.data(), Layout{"", {n}, {0}}), exact_c);
    // Random values below 2 (scaled for float16; see FillRandom).
    FillRandom(&data, n, shift, /*seed=*/static_cast<uint64_t>(n));
    const long double exact_r = ExactSum(data.data(), n);
    for (const Layout& l : dense) {
      ExpectAccurate("random, n=" + std::to_string(n) + ", " + l.name,
                     SumThroughKernel(data.data(), l), exact_r);
    }
    // The first 1000 values, expanded to (n/1000, 1000) and to (1000, n/1000).
    const long double exact_e = ExactSum(data.data(), 1000) * (n / 1000);
    ExpectAccurate("random, n=" + std::to_string(n) + ", expanded rows",
                   SumThroughKernel(data.data(), Layout{"", {n / 1000, 1000}, {0, 1}}), exact_e);
    ExpectAccurate("random, n=" + std::to_string(n) + ", expanded columns",
                   SumThroughKernel(data.data(), Layout{"", {1000, n / 1000}, {1, 0}}), exact_e);
  }
}

TEST(ReduceSumAccuracyTest, Float32LongSumsWithinOnePpmAndOneUlp) { CheckLongSums<float>(); }

TEST(ReduceSumAccuracyTest, Float64LongSumsWithinCascadeBound) { CheckLongSums<double>(); }

TEST(ReduceSumAccuracyTest, Float16LongSumsWithinOneUlpOfCorrectlyRounded) {
  CheckLongSums<float16>();
}

TEST(ReduceSumAccuracyTest, BFloat16LongSumsWithinOneUlpOfCorrectlyRounded) {
  CheckLongSums<bfloat16>();
}

// The example, through the public API: 1e6 copies of 1.1f, expanded and contiguous.
TEST(ReduceSumAccuracyTest, ExpandBackwardOfAMillionCopiesOfOnePointOne) {
  const int64_t n = 1'000'000;
  const long double exact = static_cast<long double>(1.1f) * n;
  const Tensor expanded = tensor<float>({1.1f}, Shape({1}), KernelTestDevice()).expand({n});
  const Tensor contiguous =
      tensor<float>(std::vector<float>(n, 1.1f), Shape({n}), KernelTestDevice());
  for (int contiguous_dy = 0; contiguous_dy < 2; ++contiguous_dy) {
    const Tensor& dy = contiguous_dy ? contiguous : expanded;
    const std::vector<float> dx = expand_backward(dy, Shape({1})).to_vector<float>();
    ASSERT_EQ(dx.size(), 1u);
    EXPECT_EQ(dx[0], static_cast<float>(exact)) << (contiguous_dy ? "contiguous" : "expanded");
  }
}

// float32 terms summed into a 16-bit float output: the double sum is rounded once. Through float
// first, 1 + 2^-11 + 2^-40 would round to float 1 + 2^-11, a float16 tie, and then to 1.
TEST(ReduceSumAccuracyTest, HalfOutputIsRoundedOnceFromTheSum) {
  struct Case {
    DType out;
    float half_ulp;
  };
  for (const Case& c : {Case{DType::kFloat16, std::ldexp(1.0f, -11)},
                        Case{DType::kBFloat16, std::ldexp(1.0f, -8)}}) {
    SCOPED_TRACE(to_string(c.out));
    for (float sign : {1.0f, -1.0f}) {
      std::vector<float> in = {sign, sign * c.half_ulp, sign * std::ldexp(1.0f, -40)};
      uint16_t out = 0;
      KernelContext ctx;
      TensorArg a;
      a.data = in.data();
      a.shape = Shape({3});
      a.stride = Shape({1});
      a.dtype = DType::kFloat32;
      ctx.inputs.push_back(a);
      a.data = &out;
      a.shape = Shape({1});
      a.dtype = c.out;
      ctx.outputs.push_back(a);
      RunKernel("reduce_sum_to", ctx);
      const float got = c.out == DType::kFloat16 ? static_cast<float>(float16::from_bits(out))
                                                 : static_cast<float>(bfloat16::from_bits(out));
      EXPECT_EQ(got, sign * (1.0f + 2 * c.half_ulp));
    }
  }
}

// The kernel converts float16 itself (without branches); every one of the 65536 values must come
// out as float16::operator float gives it (NaNs as NaNs; -0 as a sum: +0).
TEST(ReduceSumAccuracyTest, Float16InputsConvertExactlyForEveryValue) {
  std::vector<uint16_t> in(65536);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i);
  std::vector<float> out(in.size());
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({65536});
  a.stride = Shape({1});
  a.dtype = DType::kFloat16;
  ctx.inputs.push_back(a);
  a.data = out.data();
  a.dtype = DType::kFloat32;
  ctx.outputs.push_back(a);
  RunKernel("reduce_sum_to", ctx);
  for (size_t i = 0; i < in.size(); ++i) {
    const float want = float16::from_bits(in[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[i])) << "bits " << i;
    } else {
      EXPECT_EQ(out[i], want) << "bits " << i;
      EXPECT_EQ(std::signbit(out[i]), std::signbit(want) && want != 0) << "bits " << i;
    }
  }
}

// Summed dims the input broadcasts multiply instead; integers must still wrap like sums.
TEST(ReduceSumAccuracyTest, BroadcastSummedDimsKeepIntegerSumsExact) {
  int8_t in8[2] = {100, -3};
  int8_t out8[2] = {0, 0};
  int64_t in64 = int64_t{1} << 62;
  int64_t out64 = 0;
  auto run = [](void* in, void* out, DType dtype, std::vector<int64_t> shape,
                std::vector<int64_t> stride, std::vector<int64_t> out_shape) {
    KernelContext ctx;
    TensorArg a;
    a.data = in;
    a.shape = Shape(shape);
    a.stride = Shape(stride);
    a.dtype = dtype;
    ctx.inputs.push_back(a);
    a.data = out;
    a.shape = Shape(out_shape);
    a.stride = Shape(ContiguousView(out_shape).stride);
    ctx.outputs.push_back(a);
    RunKernel("reduce_sum_to", ctx);
  };
  run(in8, out8, DType::kInt8, {1001, 2}, {0, 1}, {1, 2});
  EXPECT_EQ(out8[0], static_cast<int8_t>(100 * 1001 % 256));
  EXPECT_EQ(out8[1], static_cast<int8_t>(-3 * 1001));
  run(&in64, &out64, DType::kInt64, {6, 7}, {0, 0}, {1, 1});
  EXPECT_EQ(out64, static_cast<int64_t>(static_cast<uint64_t>(in64) * 42));
}

// Non-dyadic values of both signs (so every change of order shows in the bits), in layouts where
// the kernel splits the outputs (and, for few outputs, their blocks) by the thread count: the same
// bits on every run and with oneTBB limited to one thread. The CPU kernel itself on every device:
// this is about how it splits work by oneTBB's thread count (the sim kernel runs that same kernel).
TEST(ReduceSumDeterminismTest, SameBitsOnEveryRunAndThreadCount) {
  struct Case {
    std::vector<int64_t> shape, stride, target;
  };
  const std::vector<Case> cases = {
      {{1500, 800}, {800, 1}, {1, 800}}, {{1500, 800}, {800, 1}, {1500, 1}},
      {{1500, 800}, {800, 1}, {1, 1}},   {{800, 1500}, {1, 800}, {1, 1500}},
      {{800, 1500}, {1, 800}, {800, 1}}, {{40, 600, 50}, {30000, 50, 1}, {40, 1, 50}},
      {{20000, 60}, {60, 1}, {1, 60}},   {{60, 8, 2500}, {20000, 2500, 1}, {60, 1, 1}},
  };
  std::vector<double> values(1'200'000);
  uint64_t state = 31;
  for (double& v : values) {
    v = static_cast<double>(NextRandom(&state) >> 11) * 0x1.0p-52 * 2.2 - 1.1;
  }
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const size_t es = element_size(dtype);
    std::vector<char> in(values.size() * es);
    for (size_t i = 0; i < values.size(); ++i) StoreDouble(in.data() + i * es, dtype, values[i]);
    for (const Case& c : cases) {
      SCOPED_TRACE(to_string(dtype) + " " + ToString(c.shape) + " stride " + ToString(c.stride) +
                   " -> " + ToString(c.target));
      auto run = [&] {
        std::vector<char> out(static_cast<size_t>(Numel(c.target)) * es);
        KernelContext ctx;
        TensorArg a;
        a.data = in.data();
        a.shape = Shape(c.shape);
        a.stride = Shape(c.stride);
        a.dtype = dtype;
        ctx.inputs.push_back(a);
        a.data = out.data();
        a.shape = Shape(c.target);
        a.stride = Shape(ContiguousView(c.target).stride);
        ctx.outputs.push_back(a);
        cpu::ReduceSumToKernel(ctx);
        return out;
      };
      const std::vector<char> first = run();
      EXPECT_TRUE(run() == first) << "second run";
      {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        EXPECT_TRUE(run() == first) << "one thread";
      }
    }
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
