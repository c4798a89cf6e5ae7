// expand_backward and repeat_backward end to end against a naive sum, for float32, float64, int32,
// int64, float16 and bfloat16 (the 16-bit floats accumulate in float: compared with a double
// reference within one rounding of the result), on random shapes and strided gradients; bool is
// rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

template <class T>
class BackwardTest : public ::testing::Test {};
using SummableTypes = ::testing::Types<float, double, int32_t, int64_t, float16, bfloat16>;
TYPED_TEST_SUITE(BackwardTest, SummableTypes, DTypeNames);

template <class T>
constexpr bool kIsHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Sums dy (shape dy.shape) into `in_shape`: element idx of dy goes to map(idx).
template <class T>
std::vector<double> NaiveSum(const HostTensor<T>& dy, const Dims& in_shape,
                             const std::function<Dims(const Dims&)>& map,
                             std::vector<double>* abs_sum) {
  std::vector<double> sum(static_cast<size_t>(Numel(in_shape)), 0.0);
  abs_sum->assign(sum.size(), 0.0);
  for (int64_t i = 0; i < Numel(dy.shape); ++i) {
    const int64_t o = Ravel(map(Unravel(i, dy.shape)), in_shape);
    const double v = AsDouble<T>(dy.data[i]);
    sum[o] += v;
    (*abs_sum)[o] += std::fabs(v);
  }
  return sum;
}

// Integers and integer-valued sums must be exact; floating sums may differ by the order of
// summation, and the 16-bit floats by one rounding of the float result.
template <class T>
::testing::AssertionResult CloseToSum(const Tensor& got_t, const Dims& in_shape,
                                      const std::vector<double>& want,
                                      const std::vector<double>& abs_sum) {
  if (got_t.shape().vec() != in_shape) {
    return ::testing::AssertionFailure() << "shape " << got_t.shape() << ", want " << Str(in_shape);
  }
  const std::vector<T> got = got_t.to_vector<T>();
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = AsDouble<T>(got[i]);
    double tol = 0;
    if constexpr (std::is_same_v<T, float16>) {
      tol = std::ldexp(std::fabs(want[i]), -10) + 1e-5 * abs_sum[i];
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      tol = std::ldexp(std::fabs(want[i]), -7) + 1e-5 * abs_sum[i];
    } else if constexpr (std::is_same_v<T, float>) {
      tol = 1e-5 * abs_sum[i];
    } else if constexpr (std::is_same_v<T, double>) {
      tol = 1e-12 * abs_sum[i];
    }
    if (!(std::fabs(g - want[i]) <= tol)) {
      return ::testing::AssertionFailure()
             << "element " << i << " " << Str(Unravel(static_cast<int64_t>(i), in_shape)) << " is "
             << g << ", want " << want[i] << " (tolerance " << tol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Values for gradients: fractions for the floating types (so sums round), small integers else.
template <class T>
HostTensor<T> RandomGrad(std::mt19937_64& rng, const Dims& shape) {
  HostTensor<T> h{shape, std::vector<T>(static_cast<size_t>(Numel(shape)))};
  for (auto& v : h.data) {
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(static_cast<int64_t>(rng() % 201) - 100);
    } else {
      v = T(static_cast<float>(std::uniform_real_distribution<double>(-4, 4)(rng)));
    }
  }
  return h;
}

// dy as a device tensor, sometimes laid out transposed (same logical values).
template <class T>
Tensor GradOnDevice(std::mt19937_64& rng, const HostTensor<T>& dy) {
  const size_t n = dy.shape.size();
  if (n < 2 || rng() % 2 == 0) return ToDevice(dy);
  Dims perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[0], perm[n - 1]);
  return ToDevice(RefPermute(dy, perm)).permute(perm);
}

TYPED_TEST(BackwardTest, ExpandBackwardMatchesNaiveSum) {
  using T = TypeParam;
  std::mt19937_64 rng(70 + static_cast<int>(DTypeOf<T>::value));
  for (int iter = 0; iter < 80; ++iter) {
    const size_t k = rng() % 5;
    Dims in(k), sizes;
    for (int64_t& d : in) d = rng() % 3 == 0 ? 1 : static_cast<int64_t>(rng() % 4);
    const size_t lead = rng() % 3;
    for (size_t i = 0; i < lead; ++i) sizes.push_back(rng() % 10 == 0 ? 0 : 1 + rng() % 4);
    for (int64_t d : in) sizes.push_back(d == 1 ? static_cast<int64_t>(rng() % 5) : d);
    SCOPED_TRACE("input " + Str(in) + ", dy " + Str(sizes));
    const HostTensor<T> dy = RandomGrad<T>(rng, sizes);
    std::vector<double> abs_sum;
    const std::vector<double> want = NaiveSum<T>(
        dy, in,
        [&](const Dims& idx) {
          Dims src(k);
          for (size_t j = 0; j < k; ++j) src[j] = in[j] == 1 ? 0 : idx[lead + j];
          return src;
        },
        &abs_sum);
    const Tensor dx = ofl::expand_backward(GradOnDevice(rng, dy), Shape(in));
    EXPECT_EQ(dx.dtype(), DTypeOf<T>::value);
    ASSERT_TRUE(CloseToSum<T>(dx, in, want, abs_sum));
  }
}

TYPED_TEST(BackwardTest, RepeatBackwardMatchesNaiveSum) {
  using T = TypeParam;
  std::mt19937_64 rng(80 + static_cast<int>(DTypeOf<T>::value));
  for (int iter = 0; iter < 80; ++iter) {
    const size_t k = rng() % 5;
    Dims in(k);
    for (int64_t& d : in) d = rng() % 15 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
    Dims repeats(k + rng() % 3);
    for (int64_t& r : repeats) r = rng() % 12 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
    const size_t lead = repeats.size() - k;
    Dims dy_shape(repeats.size());
    for (size_t i = 0; i < dy_shape.size(); ++i) {
      dy_shape[i] = repeats[i] * (i < lead ? 1 : in[i - lead]);
    }
    SCOPED_TRACE("input " + Str(in) + ", repeats " + Str(repeats));
    const HostTensor<T> dy = RandomGrad<T>(rng, dy_shape);
    std::vector<double> abs_sum;
    const std::vector<double> want = NaiveSum<T>(
        dy, in,
        [&](const Dims& idx) {
          Dims src(k);
          for (size_t j = 0; j < k; ++j) src[j] = idx[lead + j] % in[j];
          return src;
        },
        &abs_sum);
    const Tensor dx = ofl::repeat_backward(GradOnDevice(rng, dy), Shape(in), repeats);
    ASSERT_TRUE(CloseToSum<T>(dx, in, want, abs_sum));
  }
}

TYPED_TEST(BackwardTest, BackwardOfTheForwardOutput) {
  // The gradient of ones through expand / repeat counts how often each input element was used.
  using T = TypeParam;
  const Tensor ones_in = ofl::tensor<T>(std::vector<T>(6, T(1)), Shape({2, 1, 3}), TestDevice());
  const Tensor e = ones_in.expand({4, 2, 5, 3}).contiguous();
  const Tensor de = ofl::expand_backward(e, Shape({2, 1, 3}));
  for (const T& v : de.to_vector<T>()) EXPECT_EQ(AsDouble<T>(v), 20.0);
  const Tensor r = ones_in.repeat({3, 2, 2, 1});
  const Tensor dr = ofl::repeat_backward(r, Shape({2, 1, 3}), {3, 2, 2, 1});
  for (const T& v : dr.to_vector<T>()) EXPECT_EQ(AsDouble<T>(v), 12.0);
}

TYPED_TEST(BackwardTest, EmptyGradientGivesZeros) {
  using T = TypeParam;
  const Tensor dy = ofl::empty(Shape({0, 3}), DTypeOf<T>::value, TestDevice());
  const Tensor de = ofl::expand_backward(dy, Shape({1, 3}));
  EXPECT_EQ(de.shape(), Shape({1, 3}));
  for (const T& v : de.to_vector<T>()) EXPECT_EQ(AsDouble<T>(v), 0.0);
  const Tensor dr = ofl::repeat_backward(dy, Shape({2, 3}), {0, 1});
  EXPECT_EQ(dr.shape(), Shape({2, 3}));
  for (const T& v : dr.to_vector<T>()) EXPECT_EQ(AsDouble<T>(v), 0.0);
}

TYPED_TEST(BackwardTest, RepeatBackwardOfTwentyFiveDims) {
  // 25 repeats, two of them tiling non-1 dims: seeing every tiled dim as (r, s) at once would take
  // 27 dims. The result must still be one sum per element, rounded once (16-bit floats included).
  using T = TypeParam;
  std::mt19937_64 rng(90);
  Dims in(25, 1), repeats(25, 1);
  in[0] = 3;
  in[10] = 2;
  repeats[0] = 2;
  repeats[10] = 2;
  repeats[3] = 2;
  repeats[24] = 3;
  Dims dy_shape(25);
  for (size_t i = 0; i < 25; ++i) dy_shape[i] = in[i] * repeats[i];
  const HostTensor<T> dy = RandomGrad<T>(rng, dy_shape);
  std::vector<double> abs_sum;
  const std::vector<double> want = NaiveSum<T>(
      dy, in,
      [&](const Dims& idx) {
        Dims src(25);
        for (size_t j = 0; j < 25; ++j) src[j] = idx[j] % in[j];
        return src;
      },
      &abs_sum);
  const Tensor dx = ofl::repeat_backward(ToDevice(dy), Shape(in), repeats);
  EXPECT_TRUE(CloseToSum<T>(dx, in, want, abs_sum));
}

TYPED_TEST(BackwardTest, LargeGradients) {
  using T = TypeParam;
  std::mt19937_64 rng(91);
  const HostTensor<T> dy = RandomGrad<T>(rng, {64, 4096});
  std::vector<double> abs_sum;
  const std::vector<double> want = NaiveSum<T>(
      dy, {1, 4096},
      [](const Dims& idx) {
        return Dims{0, idx[1]};
      },
      &abs_sum);
  EXPECT_TRUE(CloseToSum<T>(ofl::expand_backward(ToDevice(dy), Shape({1, 4096})), {1, 4096}, want,
                            abs_sum));
  const HostTensor<T> dr = RandomGrad<T>(rng, {1024, 512});
  const std::vector<double> want_r = NaiveSum<T>(
      dr, {256, 256},
      [](const Dims& idx) {
        return Dims{idx[0] % 256, idx[1] % 256};
      },
      &abs_sum);
  EXPECT_TRUE(CloseToSum<T>(ofl::repeat_backward(ToDevice(dr), Shape({256, 256}), {4, 2}),
                            {256, 256}, want_r, abs_sum));
}

TEST(BackwardErrorsTest, BoolIsInvalidArgument) {
  const Tensor dy = ofl::tensor<bool>({true, false, true, true}, Shape({2, 2}), TestDevice());
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::expand_backward(dy, Shape({1, 2}));
      },
      {"expand_backward", "bool"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::repeat_backward(dy, Shape({1, 2}), {2, 1});
      },
      {"repeat_backward", "bool"});
  ExpectRuntimeWorks();
}

TEST(BackwardErrorsTest, ShapeMismatch) {
  const Tensor dy = ofl::empty(Shape({4, 3}), DType::kFloat32, TestDevice());
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::expand_backward(dy, Shape({2, 3}));
      },
      {"expand_backward", "(2,3)", "(4,3)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::expand_backward(dy, Shape({-1, 3}));
      },
      {"expand_backward", "-1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::repeat_backward(dy, Shape({2, 3}), {3, 1});
      },
      {"repeat_backward", "(4,3)", "(2,3)", "(3,1)", "(6,3)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::repeat_backward(dy, Shape({2, -3}), {2, 1});
      },
      {"repeat_backward", "-3"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
