// The "random" and "range" kernels of the device in OFL_TEST_DEVICE (the CPU's when unset):
// Philox-4x32-10 against Random123's published known answers; every draw against a reference
// written here from the blocks (uniform with the dtype's significand bits, Box-Muller, integers
// modulo the span), so the device's numbers are the CPU's; offsets shift the stream; the range
// kernel's two forms and a strided output; and the argument errors.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/random.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

const AttrSchema& RandomSchema() {
  static const AttrSchema* s = [] {
    auto* a = new AttrSchema{{"dist", AttrType::kInt},   {"seed", AttrType::kInt},
                             {"offset", AttrType::kInt}, {"a", AttrType::kDouble},
                             {"b", AttrType::kDouble},   {"low", AttrType::kInt},
                             {"span", AttrType::kInt}};
    a->set_op("random_");
    return a;
  }();
  return *s;
}

const AttrSchema& RangeSchema() {
  static const AttrSchema* s = [] {
    auto* a = new AttrSchema{{"start", AttrType::kScalar},
                             {"step", AttrType::kScalar},
                             {"end", AttrType::kScalar},
                             {"head", AttrType::kInt}};
    a->set_op("range_");
    return a;
  }();
  return *s;
}

// Runs "random" into a new contiguous buffer of `n` elements of `dtype`; returns its bytes.
std::vector<char> Draw(DType dtype, int64_t n, RandomDist dist, uint64_t seed, uint64_t offset,
                       double a, double b, int64_t low = 0, int64_t span = 1) {
  std::vector<char> out(static_cast<size_t>(n) * element_size(dtype) + 8);
  TensorArg t;
  t.data = out.data();
  t.shape = Shape({n});
  t.stride = Shape({1});
  t.dtype = dtype;
  KernelContext ctx;
  ctx.outputs.push_back(t);
  ctx.attributes = Attrs(RandomSchema(), static_cast<int64_t>(dist), static_cast<int64_t>(seed),
                         static_cast<int64_t>(offset), a, b, low, span);
  RunKernel("random", ctx);
  out.resize(static_cast<size_t>(n) * element_size(dtype));
  return out;
}

// An element of any dtype as a double (LoadAsDouble reads the float dtypes).
double AnyAsDouble(const char* p, DType dtype) {
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return static_cast<double>(v);
  };
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
      return load(uint8_t{});
    case DType::kInt8:
      return load(int8_t{});
    case DType::kInt16:
      return load(int16_t{});
    case DType::kInt32:
      return load(int32_t{});
    case DType::kInt64:
      return load(int64_t{});
    default:
      return LoadAsDouble(p, dtype);
  }
}

double Element(const std::vector<char>& bytes, DType dtype, int64_t i) {
  return AnyAsDouble(bytes.data() + i * static_cast<int64_t>(element_size(dtype)), dtype);
}

int SignificandBits(DType d) {
  return d == DType::kFloat16 ? 11 : d == DType::kBFloat16 ? 8 : d == DType::kFloat64 ? 53 : 24;
}

// The reference: the uniform in [0, 1) of element i, from its Philox block.
double RefUniform(uint64_t seed, uint64_t offset, uint64_t i, int bits) {
  const PhiloxBlock r = RandomBlock(seed, offset, i);
  if (bits == 53) {
    const uint64_t w = (static_cast<uint64_t>(r.v[0]) << 32 | r.v[1]) >> 11;
    return std::ldexp(static_cast<double>(w), -53);
  }
  return std::ldexp(static_cast<double>(r.v[0] >> (32 - bits)), -bits);
}

// The value a double becomes in `dtype` (read back as a double).
double AsDType(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return static_cast<float>(float16(static_cast<float>(v)));
    case DType::kBFloat16:
      return static_cast<float>(bfloat16(static_cast<float>(v)));
    case DType::kFloat32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

TEST(RandomKernelTest, PhiloxMatchesRandom123KnownAnswers) {
  const std::array<uint32_t, 4> zero = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  const std::array<uint32_t, 4> ones = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
  const std::array<uint32_t, 4> pi = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
  auto run = [](uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    const PhiloxBlock b = Philox4x32x10(c0, c1, c2, c3, k0, k1);
    return std::array<uint32_t, 4>{b.v[0], b.v[1], b.v[2], b.v[3]};
  };
  EXPECT_EQ(run(0, 0, 0, 0, 0, 0), zero);
  EXPECT_EQ(run(~0u, ~0u, ~0u, ~0u, ~0u, ~0u), ones);
  EXPECT_EQ(run(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0), pi);
}

TEST(RandomKernelTest, UniformDrawsAreTheReferencesOnEveryDType) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(to_string(dtype));
    const int64_t n = 1000;
    const std::vector<char> out = Draw(dtype, n, RandomDist::kUniform, 1234, 77, -2.0, 3.0);
    for (int64_t i = 0; i < n; ++i) {
      const double u = RefUniform(1234, 77, static_cast<uint64_t>(i), SignificandBits(dtype));
      ASSERT_EQ(Element(out, dtype, i), AsDType(-2.0 + 5.0 * u, dtype)) << "element " << i;
    }
    // [0, 1) never reaches 1: the significand holds every bit drawn.
    const std::vector<char> unit = Draw(dtype, 4096, RandomDist::kUniform, 9, 0, 0.0, 1.0);
    for (int64_t i = 0; i < 4096; ++i) ASSERT_LT(Element(unit, dtype, i), 1.0);
  }
}

TEST(RandomKernelTest, NormalDrawsAreBoxMullerOfTwoUniforms) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(to_string(dtype));
    const int64_t n = 2000;
    const std::vector<char> out = Draw(dtype, n, RandomDist::kNormal, 42, 5, 1.5, 2.0);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      const PhiloxBlock r = RandomBlock(42, 5, static_cast<uint64_t>(i));
      const double u1 =
          1.0 - std::ldexp(
                    static_cast<double>((static_cast<uint64_t>(r.v[0]) << 32 | r.v[1]) >> 11), -53);
      const double u2 = std::ldexp(
          static_cast<double>((static_cast<uint64_t>(r.v[2]) << 32 | r.v[3]) >> 11), -53);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
      const double got = Element(out, dtype, i);
      // A device's log and cos may round their last bit differently.
      ASSERT_NEAR(got, AsDType(1.5 + 2.0 * z, dtype), 1e-6 * (1 + std::fabs(got))) << i;
      sum += (got - 1.5) / 2.0;
      sq += (got - 1.5) * (got - 1.5) / 4.0;
    }
    EXPECT_NEAR(sum / n, 0.0, 0.1);
    EXPECT_NEAR(sq / n, 1.0, 0.15);
  }
}

TEST(RandomKernelTest, IntegersAreSixtyFourBitsModuloTheSpan) {
  for (DType dtype : {DType::kInt64, DType::kInt32, DType::kUInt8, DType::kFloat32, DType::kBool}) {
    SCOPED_TRACE(to_string(dtype));
    const int64_t low = dtype == DType::kBool ? 0 : dtype == DType::kUInt8 ? 3 : -5;
    const int64_t span = dtype == DType::kBool ? 2 : 11;
    const std::vector<char> out = Draw(dtype, 500, RandomDist::kIntegers, 7, 1000, 0, 0, low, span);
    for (int64_t i = 0; i < 500; ++i) {
      const PhiloxBlock r = RandomBlock(7, 1000, static_cast<uint64_t>(i));
      const uint64_t bits = static_cast<uint64_t>(r.v[0]) << 32 | r.v[1];
      const int64_t want = low + static_cast<int64_t>(bits % static_cast<uint64_t>(span));
      ASSERT_EQ(Element(out, dtype, i), dtype == DType::kBool ? double(want != 0) : double(want))
          << i;
    }
  }
}

TEST(RandomKernelTest, AnOffsetShiftsTheStream) {
  const std::vector<char> a = Draw(DType::kFloat32, 300, RandomDist::kUniform, 3, 100, 0, 1);
  const std::vector<char> b = Draw(DType::kFloat32, 200, RandomDist::kUniform, 3, 200, 0, 1);
  for (int64_t i = 0; i < 200; ++i) {
    ASSERT_EQ(Element(b, DType::kFloat32, i), Element(a, DType::kFloat32, i + 100)) << i;
  }
  const std::vector<char> c = Draw(DType::kFloat32, 200, RandomDist::kUniform, 4, 200, 0, 1);
  EXPECT_NE(b, c);  // another seed, another stream
}

void ExpectRefused(const std::string& op, KernelContext ctx, const std::string& part) {
  try {
    RunKernel(op, ctx);
    ADD_FAILURE() << "no error, expected one containing '" << part << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(RandomKernelTest, ArgumentErrorsThrow) {
  std::vector<float> out(8, 7.0f);
  TensorArg t;
  t.data = out.data();
  t.shape = Shape({2, 2});
  t.stride = Shape({4, 2});
  KernelContext ctx;
  ctx.outputs.push_back(t);
  ctx.attributes =
      Attrs(RandomSchema(), int64_t{0}, int64_t{1}, int64_t{0}, 0.0, 1.0, int64_t{0}, int64_t{1});
  ExpectRefused("random", ctx, "random: the output must be contiguous, got shape (2,2)");
  ctx.outputs[0].stride = Shape({2, 1});
  ctx.outputs[0].dtype = DType::kInt32;
  ExpectRefused("random", ctx, "random: dtype int32 is not supported for uniform and normal");
  ctx.attributes =
      Attrs(RandomSchema(), int64_t{2}, int64_t{1}, int64_t{0}, 0.0, 1.0, int64_t{0}, int64_t{0});
  ExpectRefused("random", ctx, "random: span 0 is not positive");
  ctx.attributes =
      Attrs(RandomSchema(), int64_t{5}, int64_t{1}, int64_t{0}, 0.0, 1.0, int64_t{0}, int64_t{1});
  ExpectRefused("random", ctx, "random: dist 5 is not 0, 1 or 2");
  ctx.attributes = Attrs();
  ExpectRefused("random", ctx, "random: the kernel expects int attributes dist");
  for (float x : out) EXPECT_EQ(x, 7.0f);
}

// Runs "range" over a 1-dim view of `n` elements with stride `stride` in a buffer of 7s.
std::vector<double> RunRange(DType dtype, int64_t n, int64_t stride, const Scalar& start,
                             const Scalar& step, const Scalar& end, int64_t head) {
  std::vector<double> storage(static_cast<size_t>(n * stride + 1), 7.0);
  std::vector<char> bytes(storage.size() * element_size(dtype));
  for (size_t i = 0; i < storage.size(); ++i) {
    const double seven = 7.0;
    if (dtype == DType::kFloat64) {
      std::memcpy(bytes.data() + i * 8, &seven, 8);
    } else {
      const int32_t s = 7;
      std::memcpy(bytes.data() + i * 4, &s, 4);
    }
  }
  TensorArg t;
  t.data = bytes.data();
  t.shape = Shape({n});
  t.stride = Shape({stride});
  t.dtype = dtype;
  KernelContext ctx;
  ctx.outputs.push_back(t);
  ctx.attributes = Attrs(RangeSchema(), start, step, end, head);
  RunKernel("range", ctx);
  std::vector<double> out;
  for (size_t i = 0; i < storage.size(); ++i) {
    out.push_back(AnyAsDouble(bytes.data() + i * element_size(dtype), dtype));
  }
  return out;
}

TEST(RangeKernelTest, IntegerAndFloatingForms) {
  // Integer form: exact int64 steps, written at every second element only.
  const std::vector<double> ints =
      RunRange(DType::kInt32, 4, 2, Scalar(int64_t{-3}), Scalar(int64_t{5}), Scalar(0.0), 4);
  EXPECT_EQ(ints, (std::vector<double>{-3, 7, 2, 7, 7, 7, 12, 7, 7}));
  // Floating form: start + i * step before head, end - (n - 1 - i) * step from there.
  const double step = 0.7 / 4;
  const std::vector<double> f =
      RunRange(DType::kFloat64, 5, 1, Scalar(0.1), Scalar(step), Scalar(0.8), 2);
  EXPECT_EQ(f, (std::vector<double>{0.1, 0.1 + step, 0.8 - 2 * step, 0.8 - step, 0.8, 7}));
  // A float start with an integer dtype takes the floating form, truncating each value.
  const std::vector<double> t =
      RunRange(DType::kInt32, 3, 1, Scalar(0.5), Scalar(0.75), Scalar(0.0), 3);
  EXPECT_EQ(t, (std::vector<double>{0, 1, 2, 7}));
}

TEST(RangeKernelTest, ArgumentErrorsThrow) {
  std::vector<int64_t> out(4, 7);
  TensorArg t;
  t.data = out.data();
  t.shape = Shape({2, 2});
  t.stride = Shape({2, 1});
  t.dtype = DType::kInt64;
  KernelContext ctx;
  ctx.outputs.push_back(t);
  ctx.attributes =
      Attrs(RangeSchema(), Scalar(int64_t{0}), Scalar(int64_t{1}), Scalar(int64_t{0}), int64_t{4});
  ExpectRefused("range", ctx, "range: the output must have 1 dim, got shape (2,2)");
  ctx.outputs[0].shape = Shape({4});
  ctx.outputs[0].stride = Shape({1});
  ctx.outputs[0].dtype = DType::kBool;
  ExpectRefused("range", ctx, "range: dtype bool is not supported");
  ctx.outputs[0].dtype = DType::kInt64;
  ctx.attributes =
      Attrs(RangeSchema(), Scalar(int64_t{0}), Scalar(int64_t{1}), Scalar(int64_t{0}), int64_t{5});
  ExpectRefused("range", ctx, "range: head 5 is outside 0 .. 4");
  ctx.attributes = Attrs();
  ExpectRefused("range", ctx, "range: the kernel expects scalar attributes 'start'");
  for (int64_t x : out) EXPECT_EQ(x, 7);
}

}  // namespace
}  // namespace ofl::kernels::testing
