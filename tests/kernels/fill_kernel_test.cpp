// The "fill" kernel of the device in OFL_TEST_DEVICE (the CPU's when unset): every dtype and a
// range of values against a reference conversion (integers by static_cast where the dtype holds
// the value, floats rounded once to nearest even, checked against the neighbours of the runtime's
// own conversion), out-of-range integers, strided, 0-dim, large and empty outputs, and every
// argument error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

double Value16(uint16_t bits, DType dtype) {
  return dtype == DType::kFloat16 ? static_cast<float>(float16::from_bits(bits))
                                  : static_cast<float>(bfloat16::from_bits(bits));
}

// The 16-bit float nearest to v, ties to the even bit pattern: the runtime's conversion of the
// float nearest to v is at most one step off, so the nearest of it and its two neighbours (their
// distances to v are exact in double) is the answer. Values from halfway past the largest finite
// one round to infinity. NaN is not handled here.
uint16_t Nearest16(double v, DType dtype) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  const uint16_t inf = dtype == DType::kFloat16 ? 0x7c00 : 0x7f80;
  const double max = Value16(inf - 1, dtype);
  const double halfway = max + (max - Value16(inf - 2, dtype)) / 2;
  if (a >= halfway) return sign | inf;
  const float f = static_cast<float>(a);
  uint16_t c = dtype == DType::kFloat16 ? float16(f).bits : bfloat16(f).bits;
  if (c >= inf) c = inf - 1;
  uint16_t best = c;
  for (int d : {-1, 1}) {
    const int n = c + d;
    if (n < 0 || n >= inf) continue;
    const double dn = std::fabs(Value16(static_cast<uint16_t>(n), dtype) - a);
    const double db = std::fabs(Value16(best, dtype) - a);
    if (dn < db || (dn == db && n % 2 == 0)) best = static_cast<uint16_t>(n);
  }
  return sign | best;
}

// The element `value` becomes, for values every dtype can hold when it is an integer one
// (in-range integers are plain static_casts).
std::vector<unsigned char> Expected(double value, DType dtype) {
  std::vector<unsigned char> e(element_size(dtype));
  auto put = [&](auto v) { std::memcpy(e.data(), &v, sizeof(v)); };
  switch (dtype) {
    case DType::kBool:
      put(static_cast<uint8_t>(value != 0));
      break;
    case DType::kUInt8:
      put(static_cast<uint8_t>(value));
      break;
    case DType::kInt8:
      put(static_cast<int8_t>(value));
      break;
    case DType::kInt16:
      put(static_cast<int16_t>(value));
      break;
    case DType::kInt32:
      put(static_cast<int32_t>(value));
      break;
    case DType::kInt64:
      put(static_cast<int64_t>(value));
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      if (std::isnan(value)) {  // any NaN will do (CheckFill)
        put(static_cast<uint16_t>(dtype == DType::kFloat16 ? 0x7e00 : 0x7fc0));
      } else {
        put(Nearest16(value, dtype));
      }
      break;
    case DType::kFloat32:
      put(static_cast<float>(value));
      break;
    case DType::kFloat64:
      put(value);
      break;
  }
  return e;
}

bool InRange(double value, DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return value > -1 && value < 256;
    case DType::kInt8:
      return value > -129 && value < 128;
    case DType::kInt16:
      return value > -32769 && value < 32768;
    case DType::kInt32:
      return value > -2147483649.0 && value < 2147483648.0;
    case DType::kInt64:
      return value >= -9223372036854775808.0 && value < 9223372036854775808.0;
    default:
      return true;
  }
}

// Fills `out_view` of random bytes with `value` (`what` describes it); every
// element of the view must hold `element` (any NaN, when `nan` and `element` is a NaN of a float
// dtype), every other byte of the storage is kept.
void CheckFillAttrs(std::mt19937_64& rng, DType dtype, const Scalar& value, const std::string& what,
                    bool nan, const View& out_view, const std::vector<unsigned char>& element) {
  SCOPED_TRACE("dtype " + to_string(dtype) + ", value " + what + ", out " + Describe(out_view));
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  Buffer out = RandomBuffer(rng, out_view.storage, static_cast<size_t>(es));
  Buffer expected = out;
  const int64_t n = Numel(out_view.shape);
  IndexWalker walker(out_view.shape);
  for (int64_t i = 0; i < n; ++i, walker.Next()) {
    std::memcpy(expected.data() + OffsetOf(out_view, walker.index()) * es, element.data(), es);
  }
  KernelContext ctx;
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  ctx.attributes = FillAttrs(value);
  RunKernel("fill", ctx);
  for (int64_t i = 0; i < out_view.storage; ++i) {
    const char* e = expected.data() + i * es;
    const char* a = out.data() + i * es;
    if (std::memcmp(e, a, es) == 0) continue;
    if (nan && std::memcmp(e, element.data(), es) == 0 && std::isnan(LoadAsDouble(a, dtype))) {
      continue;
    }
    FAIL() << "storage element " << i << " differs";
  }
}

// A double value.
void CheckFill(std::mt19937_64& rng, DType dtype, double value, const View& out_view,
               const std::vector<unsigned char>& element) {
  CheckFillAttrs(rng, dtype, Scalar(value), std::to_string(value),
                 IsFloat(dtype) && std::isnan(value), out_view, element);
}

// An integer value: an int64, or a uint64 past int64's range.
void CheckFillInt(std::mt19937_64& rng, DType dtype, int64_t value, const View& out_view,
                  const std::vector<unsigned char>& element) {
  CheckFillAttrs(rng, dtype, Scalar(value), std::to_string(value) + " (int64)", false, out_view,
                 element);
}
void CheckFillUInt(std::mt19937_64& rng, DType dtype, uint64_t value, const View& out_view,
                   const std::vector<unsigned char>& element) {
  CheckFillAttrs(rng, dtype, Scalar(value), std::to_string(value) + " (uint64)", false, out_view,
                 element);
}

const std::vector<double>& TestValues() {
  static const std::vector<double> v = {0.0,
                                        -0.0,
                                        1.0,
                                        -1.0,
                                        2.5,
                                        -2.5,
                                        0.1,
                                        -7.75,
                                        100.0,
                                        127.0,
                                        -128.0,
                                        255.0,
                                        1e-7,
                                        3e-8,
                                        6e-8,
                                        65504.0,
                                        65519.99,
                                        65520.0,
                                        -65536.0,
                                        1e10,
                                        -1e10,
                                        3.4e38,
                                        1e39,
                                        1e300,
                                        4e-320,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN()};
  return v;
}

TEST(FillKernelTest, EveryDTypeAndValue) {
  std::mt19937_64 rng(1);
  for (DType dtype : AllDTypes()) {
    for (double value : TestValues()) {
      if (!InRange(value, dtype)) continue;
      const std::vector<unsigned char> e = Expected(value, dtype);
      CheckFill(rng, dtype, value, ContiguousView({3, 5}), e);
      CheckFill(rng, dtype, value, RandomView(rng, {4, 3, 2}, /*broadcast=*/false), e);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(FillKernelTest, RandomValuesAndLayouts) {
  std::mt19937_64 rng(2);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 60; ++iter) {
      double value =
          std::ldexp(static_cast<double>(static_cast<int64_t>(rng() >> 11)) - std::ldexp(1.0, 52),
                     -static_cast<int>(rng() % 60));  // full 53-bit mantissas
      if (!IsFloat(dtype) && !InRange(value, dtype)) value = std::fmod(std::fabs(value), 100.0);
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 7));
      const View out = iter % 2 == 0 ? ContiguousView(shape) : RandomView(rng, shape, false);
      CheckFill(rng, dtype, value, out, Expected(value, dtype));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// float16 and bfloat16 round the double once: through a float rounded to nearest first, these
// would be ties and round down to 1.
TEST(FillKernelTest, SixteenBitFloatsRoundTheDoubleOnce) {
  std::mt19937_64 rng(3);
  const double tiny = std::ldexp(1.0, -40);
  CheckFill(rng, DType::kFloat16, 1 + std::ldexp(1.0, -11) + tiny, ContiguousView({5}),
            {0x01, 0x3c});
  CheckFill(rng, DType::kFloat16, -(1 + std::ldexp(1.0, -11) + tiny), ContiguousView({5}),
            {0x01, 0xbc});
  CheckFill(rng, DType::kBFloat16, 1 + std::ldexp(1.0, -8) + tiny, ContiguousView({5}),
            {0x81, 0x3f});
  // Exact ties go to even, and values from 65520 on become infinity.
  CheckFill(rng, DType::kFloat16, 1 + std::ldexp(1.0, -11), ContiguousView({5}), {0x00, 0x3c});
  CheckFill(rng, DType::kFloat16, 65519.999, ContiguousView({5}), {0xff, 0x7b});
  CheckFill(rng, DType::kFloat16, 65520.0, ContiguousView({5}), {0x00, 0x7c});
  CheckFill(rng, DType::kFloat16, std::ldexp(1.0, -25) * 1.0000001, ContiguousView({5}),
            {0x01, 0x00});  // just above half the smallest subnormal
}

// Integers the dtype cannot hold wrap to its width (after truncation toward zero); NaN is 0 and
// values beyond int64 saturate first.
TEST(FillKernelTest, OutOfRangeIntegersWrapAround) {
  std::mt19937_64 rng(4);
  const View v = ContiguousView({2, 3});
  CheckFill(rng, DType::kUInt8, -1.0, v, {0xff});
  CheckFill(rng, DType::kUInt8, 300.7, v, {44});
  CheckFill(rng, DType::kUInt8, -2.9, v, {0xfe});
  CheckFill(rng, DType::kInt8, 200.0, v, {static_cast<unsigned char>(-56)});
  CheckFill(rng, DType::kInt16, 70000.0, v, {0x70, 0x11});  // 70000 - 65536 = 4464 = 0x1170
  CheckFill(rng, DType::kInt32, 4294967297.0, v, {1, 0, 0, 0});
  CheckFill(rng, DType::kInt32, std::numeric_limits<double>::quiet_NaN(), v, {0, 0, 0, 0});
  CheckFill(rng, DType::kInt64, 1e30, v, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  CheckFill(rng, DType::kInt64, -1e30, v, {0, 0, 0, 0, 0, 0, 0, 0x80});
  CheckFill(rng, DType::kInt64, std::numeric_limits<double>::infinity(), v,
            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f});
  CheckFill(rng, DType::kBool, std::numeric_limits<double>::quiet_NaN(), v, {1});
  CheckFill(rng, DType::kBool, -0.0, v, {0});
  CheckFill(rng, DType::kBool, 1e-300, v, {1});
}

template <class T>
std::vector<unsigned char> Bytes(T v) {
  std::vector<unsigned char> e(sizeof(T));
  std::memcpy(e.data(), &v, sizeof(T));
  return e;
}

// An integer reaches an integer dtype exactly, as its low bits (the callers checked the range;
// through a double, 2^53 + 1 would be 2^53 and 2^62 + 1 would be 2^62).
TEST(FillKernelTest, IntegerValuesAreExactForIntegerDTypes) {
  std::mt19937_64 rng(8);
  const int64_t values[] = {0,
                            1,
                            -1,
                            127,
                            -128,
                            255,
                            -255,
                            32767,
                            -32768,
                            65535,
                            (int64_t{1} << 53) + 1,
                            (int64_t{1} << 62) + 1,
                            INT64_MAX,
                            INT64_MIN,
                            -((int64_t{1} << 62) + 3)};
  for (int64_t v : values) {
    const uint64_t u = static_cast<uint64_t>(v);
    CheckFillInt(rng, DType::kBool, v, ContiguousView({5}), {static_cast<unsigned char>(v != 0)});
    CheckFillInt(rng, DType::kUInt8, v, ContiguousView({5}), Bytes(static_cast<uint8_t>(u)));
    CheckFillInt(rng, DType::kInt8, v, ContiguousView({5}), Bytes(static_cast<uint8_t>(u)));
    CheckFillInt(rng, DType::kInt16, v, RandomView(rng, {3, 4}, false),
                 Bytes(static_cast<uint16_t>(u)));
    CheckFillInt(rng, DType::kInt32, v, ContiguousView({2, 7}), Bytes(static_cast<uint32_t>(u)));
    CheckFillInt(rng, DType::kInt64, v, RandomView(rng, {4, 3, 2}, false), Bytes(v));
    if (::testing::Test::HasFatalFailure()) return;
  }
  CheckFillUInt(rng, DType::kInt64, UINT64_MAX, ContiguousView({3}), Bytes(int64_t{-1}));
  CheckFillUInt(rng, DType::kBool, uint64_t{1} << 63, ContiguousView({3}), {1});
}

// An integer becomes a floating dtype's nearest value (ties to even), rounded once from the
// integer itself: through the nearest double first, 2^60 + 2^36 + 1 would be a float32 tie and
// round to 2^60, and 2^62 + 2^54 + 1 a bfloat16 tie rounding to 2^62.
TEST(FillKernelTest, IntegerValuesRoundOnceToFloatDTypes) {
  std::mt19937_64 rng(9);
  const View v = ContiguousView({2, 9});
  const int64_t f32_case = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  CheckFillInt(rng, DType::kFloat32, f32_case, v,
               Bytes(std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37)));
  CheckFillInt(rng, DType::kFloat32, -f32_case, v,
               Bytes(-(std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37))));
  CheckFillInt(rng, DType::kFloat64, (int64_t{1} << 53) + 1, v, Bytes(std::ldexp(1.0, 53)));
  CheckFillInt(rng, DType::kFloat64, (int64_t{1} << 53) + 3, v,
               Bytes(std::ldexp(1.0, 53) + 4));  // the tie goes to the even neighbour
  CheckFillInt(rng, DType::kFloat64, INT64_MIN, v, Bytes(-std::ldexp(1.0, 63)));
  const int64_t bf16_case = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  CheckFillInt(rng, DType::kBFloat16, bf16_case, v, {0x81, 0x5e});  // 2^62 + 2^55
  CheckFillInt(rng, DType::kBFloat16, -bf16_case, v, {0x81, 0xde});
  CheckFillInt(rng, DType::kBFloat16, (int64_t{1} << 62) + (int64_t{1} << 54), v,
               {0x80, 0x5e});                                 // an exact tie: to even, 2^62
  CheckFillInt(rng, DType::kFloat16, 2049, v, {0x00, 0x68});  // a tie: 2048
  CheckFillInt(rng, DType::kFloat16, 2051, v, {0x02, 0x68});  // a tie: 2052
  CheckFillInt(rng, DType::kFloat16, -3, v, {0x00, 0xc2});
  CheckFillInt(rng, DType::kFloat16, 65520, v, {0x00, 0x7c});  // infinity from 65520 on
  CheckFillInt(rng, DType::kFloat16, INT64_MIN, v, {0x00, 0xfc});
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{-7}, int64_t{1000}, int64_t{-65504}}) {
      CheckFillInt(rng, dtype, i, v, Expected(static_cast<double>(i), dtype));
    }
  }
  CheckFillUInt(rng, DType::kFloat32, UINT64_MAX, v, Bytes(std::ldexp(1.0f, 64)));
  CheckFillUInt(rng, DType::kFloat64, (uint64_t{1} << 63) + 1, v, Bytes(std::ldexp(1.0, 63)));
  CheckFillUInt(rng, DType::kBFloat16, (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1, v,
                {0x01, 0x5f});  // 2^63 + 2^56
}

// Past the parallel threshold: contiguous (a memset on CUDA when every byte is alike), strided,
// and one output of 32 MiB or more (streaming stores on the CPU) starting off the 16-byte boundary.
TEST(FillKernelTest, LargeOutputs) {
  std::mt19937_64 rng(5);
  for (DType dtype : AllDTypes()) {
    const int64_t min_numel = kLargeBytes / static_cast<int64_t>(element_size(dtype));
    const std::vector<int64_t> shape = LargeShape(rng, 3, min_numel);
    for (double value : {0.0, -1.0, 3.0}) {
      // -1 for uint8 is 255 (OutOfRangeIntegersWrapAround).
      const std::vector<unsigned char> e =
          Expected(dtype == DType::kUInt8 && value < 0 ? 255.0 : value, dtype);
      CheckFill(rng, dtype, value, ContiguousView(shape), e);
      CheckFill(rng, dtype, value, RandomView(rng, shape, false), e);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  View big = ContiguousView({1025, 4099});  // int64: 33.6 MB
  big.offset = 3;
  big.storage = StorageFor(big) + 2;
  CheckFill(rng, DType::kInt64, -5.0, big, Expected(-5.0, DType::kInt64));
}

// Rows of every length around one and two 16-byte vectors at every start within 16 bytes (the
// CUDA kernel's vector stores), with gaps between rows.
TEST(FillKernelTest, RowsOfEveryLengthAtEveryAlignment) {
  std::mt19937_64 rng(6);
  for (DType dtype : {DType::kUInt8, DType::kBFloat16, DType::kFloat32, DType::kInt64}) {
    const int64_t per = 16 / static_cast<int64_t>(element_size(dtype));
    for (int64_t inner = per - 1; inner <= 2 * per + 1; ++inner) {
      for (int64_t offset = 0; offset < per; ++offset) {
        View v = StridedView({3, inner}, {inner + 1, 1});
        v.offset = offset;
        v.storage = StorageFor(v);
        CheckFill(rng, dtype, 2.0, v, Expected(2.0, dtype));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(FillKernelTest, ZeroDimAndTwentyFiveDims) {
  std::mt19937_64 rng(7);
  for (DType dtype : AllDTypes()) {
    View scalar = ContiguousView({});
    scalar.offset = 3;
    scalar.storage = 5;
    CheckFill(rng, dtype, 1.0, scalar, Expected(1.0, dtype));
    CheckFill(rng, dtype, 0.0, ContiguousView({}), Expected(0.0, dtype));
    std::vector<int64_t> shape(kMaxDims, 1);
    for (int i = 0; i < 8; ++i) shape[rng() % kMaxDims] = 2;
    CheckFill(rng, dtype, -3.0, RandomView(rng, shape, false),
              Expected(dtype == DType::kUInt8 ? 253.0 : -3.0, dtype));
  }
}

TEST(FillKernelTest, EmptyOutputWithNullData) {
  KernelContext ctx;
  TensorArg a;
  a.shape = Shape({3, 0, 2});
  a.stride = Shape({0, 2, 1});
  ctx.outputs.push_back(a);
  ctx.attributes = FillAttrs(1.0);
  EXPECT_NO_THROW(RunKernel("fill", ctx));
}

void ExpectFillRefused(const KernelContext& ctx, const std::string& part,
                       const std::vector<float>& out) {
  try {
    RunKernel("fill", ctx);
    ADD_FAILURE() << "no error, expected one containing '" << part << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  for (float x : out) EXPECT_EQ(x, 7.0f);
}

TEST(FillKernelTest, ArgumentErrorsThrow) {
  std::vector<float> out(6, 7.0f);
  TensorArg t;
  t.data = out.data();
  t.shape = Shape({2, 3});
  t.stride = Shape({3, 1});
  {
    KernelContext ctx;
    ctx.outputs.push_back(t);
    ExpectFillRefused(
        ctx, "fill: the kernel expects a scalar attribute 'value', got the attributes none", out);
    ctx.attributes = RepeatAttrs({1});
    ExpectFillRefused(ctx,
                      "fill: the kernel expects a scalar attribute 'value', got the attributes "
                      "repeats (int list)",
                      out);
  }
  {
    std::vector<float> in(6, 1.0f);
    KernelContext ctx;
    ctx.attributes = FillAttrs(1.0);
    TensorArg i = t;
    i.data = in.data();
    ctx.inputs.push_back(i);
    ctx.outputs.push_back(t);
    ExpectFillRefused(ctx, "fill: the kernel expects no inputs and 1 output, got 1 and 1", out);
  }
  {
    KernelContext ctx;
    ctx.attributes = FillAttrs(1.0);
    ExpectFillRefused(ctx, "fill: the kernel expects no inputs and 1 output, got 0 and 0", out);
    ctx.outputs = {t, t};
    ExpectFillRefused(ctx, "fill: the kernel expects no inputs and 1 output, got 0 and 2", out);
  }
  {
    KernelContext ctx;
    ctx.attributes = FillAttrs(1.0);
    TensorArg bad = t;
    bad.stride = Shape({1});
    ctx.outputs.push_back(bad);
    ExpectFillRefused(ctx, "fill: output has 1 stride(s) for shape (2,3) of 2 dim(s)", out);
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
