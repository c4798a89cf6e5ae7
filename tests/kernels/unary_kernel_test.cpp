// The elementwise-unary kernels (kernels/unary_ops.h) and the "cast" kernel of the device in
// OFL_TEST_DEVICE (the CPU's when unset; sim, and the CUDA kernels on the host grid) against
// references computed here: the float ops in double, compared within a few units in the last
// place of the dtype (devices' math libraries differ in their last bits); the integer ops and the
// casts exactly, by rules written out independently of the kernels' (kernels/cast_value.h).
// Random shapes and layouts (broadcast, permuted and gapped inputs, strided outputs), in-place
// outputs, tiny and parallel sizes, and every argument error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_checks.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

struct OpCase {
  const char* kernel;  // the registered name
  UnaryOp op;
  double lo, hi;  // the input values the float references draw from
};
// Every op; gelu twice (its two forms), pow with a few exponents.
const std::vector<OpCase>& Cases() {
  static const std::vector<OpCase> cases = {
      {"neg", UnaryOp::kNeg, -8, 8},          {"abs", UnaryOp::kAbs, -8, 8},
      {"sign", UnaryOp::kSign, -8, 8},        {"relu", UnaryOp::kRelu, -8, 8},
      {"exp", UnaryOp::kExp, -6, 6},          {"log", UnaryOp::kLog, 0.01, 20},
      {"sqrt", UnaryOp::kSqrt, 0, 20},        {"rsqrt", UnaryOp::kRsqrt, 0.01, 20},
      {"sin", UnaryOp::kSin, -6, 6},          {"cos", UnaryOp::kCos, -6, 6},
      {"tanh", UnaryOp::kTanh, -6, 6},        {"sigmoid", UnaryOp::kSigmoid, -10, 10},
      {"erf", UnaryOp::kErf, -4, 4},          {"silu", UnaryOp::kSilu, -8, 8},
      {"gelu", UnaryOp::kGelu, -6, 6},        {"gelu", UnaryOp::kGeluTanh, -6, 6},
      {"pow_scalar", UnaryOp::kPow, 0.05, 4},
  };
  return cases;
}
constexpr double kExponents[] = {2.0, 0.5, -1.5, 3.0};

double Reference(UnaryOp op, double x, double p) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kSign:
      return std::isnan(x) ? x : (x > 0) - (x < 0);
    case UnaryOp::kRelu:
      return std::isnan(x) ? x : x > 0 ? x : 0;
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRsqrt:
      return 1 / std::sqrt(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case UnaryOp::kErf:
      return std::erf(x);
    case UnaryOp::kSilu:
      return x / (1 + std::exp(-x));
    case UnaryOp::kGelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case UnaryOp::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case UnaryOp::kPow:
      return std::pow(x, p);
  }
  return 0;
}

Attrs AttrsFor(const OpCase& c, double exponent) {
  if (c.op == UnaryOp::kPow) {
    return Attrs(KernelAttrSchema("pow_scalar", {"exponent", AttrType::kDouble}), exponent);
  }
  if (c.op == UnaryOp::kGelu || c.op == UnaryOp::kGeluTanh) {
    return Attrs(KernelAttrSchema("gelu", {"approximate", AttrType::kString}),
                 std::string(c.op == UnaryOp::kGelu ? "none" : "tanh"));
  }
  return Attrs();
}

// The tolerance of a float result: a few units in the last place of the dtype (the kernels
// compute float16 and bfloat16 in float and round once), and an absolute floor near zero.
double Tolerance(DType dtype, double ref) {
  const double rel = dtype == DType::kFloat64   ? 1e-13
                     : dtype == DType::kFloat32 ? 4e-6
                     : dtype == DType::kFloat16 ? 2e-3
                                                : 1.6e-2;
  return rel * std::max(1.0, std::fabs(ref));
}

const DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
const DType kIntegers[] = {DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32,
                           DType::kInt64};

// Runs one float op on `in_view` into `out_view` (out_view == in_view with `in_place`) and checks
// every output element against the double reference, and that nothing else changed.
void CheckFloat(std::mt19937_64& rng, const OpCase& c, double exponent, DType dtype,
                const View& in_view, const View& out_view, bool in_place) {
  SCOPED_TRACE(std::string(c.kernel) + (c.op == UnaryOp::kGeluTanh ? " (tanh)" : "") +
               (c.op == UnaryOp::kPow ? " exponent " + std::to_string(exponent) : "") + ", dtype " +
               to_string(dtype) + ", in " + Describe(in_view) + ", out " + Describe(out_view) +
               (in_place ? ", in place" : ""));
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  std::uniform_real_distribution<double> dist(c.lo, c.hi);
  Buffer in = RandomBuffer(rng, in_view.storage, static_cast<size_t>(es));
  for (int64_t i = 0; i < in_view.storage; ++i) StoreDouble(in.data() + i * es, dtype, dist(rng));
  Buffer out = in_place ? in : RandomBuffer(rng, out_view.storage, static_cast<size_t>(es));
  const Buffer before = out;
  const Buffer source = in;
  KernelContext ctx;
  ctx.attributes = AttrsFor(c, exponent);
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  ctx.inputs.push_back(in_place ? ctx.outputs[0] : Arg(in, in_view, dtype));
  RunKernel(c.kernel, ctx);
  std::vector<bool> written(static_cast<size_t>(out_view.storage), false);
  IndexWalker walker(out_view.shape);
  for (int64_t i = 0, n = Numel(out_view.shape); i < n; ++i, walker.Next()) {
    const int64_t o = OffsetOf(out_view, walker.index());
    const int64_t s = OffsetOf(in_view, walker.index());
    written[static_cast<size_t>(o)] = true;
    const double x = LoadAsDouble(source.data() + s * es, dtype);
    const double ref = Reference(c.op, x, exponent);
    const double got = LoadAsDouble(out.data() + o * es, dtype);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(got)) << "element " << i << " of x = " << x;
      continue;
    }
    ASSERT_NEAR(got, ref, Tolerance(dtype, ref)) << "element " << i << " of x = " << x;
  }
  for (int64_t i = 0; i < out_view.storage; ++i) {
    if (written[static_cast<size_t>(i)]) continue;
    ASSERT_EQ(std::memcmp(out.data() + i * es, before.data() + i * es, static_cast<size_t>(es)), 0)
        << "storage element " << i << " outside the output was written";
  }
}

TEST(UnaryKernelTest, EveryFloatOpAndDTypeOnRandomLayouts) {
  std::mt19937_64 rng(11);
  for (const OpCase& c : Cases()) {
    for (DType dtype : kFloats) {
      for (int iter = 0; iter < 24; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        const View out = iter % 3 == 0 ? ContiguousView(shape) : RandomView(rng, shape, false);
        const double exponent = kExponents[iter % 4];
        CheckFloat(rng, c, exponent, dtype, RandomView(rng, shape, /*broadcast=*/true), out,
                   /*in_place=*/false);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(UnaryKernelTest, InPlaceAndLargeOutputs) {
  std::mt19937_64 rng(12);
  for (const OpCase& c : Cases()) {
    for (DType dtype : kFloats) {
      const std::vector<int64_t> shape = RandomShape(rng, 3);
      const View v = RandomView(rng, shape, false);
      CheckFloat(rng, c, 2.0, dtype, v, v, /*in_place=*/true);
      const int64_t min_numel = kLargeBytes / static_cast<int64_t>(element_size(dtype));
      const std::vector<int64_t> large = {min_numel / 257 + 1, 257};
      CheckFloat(rng, c, 0.5, dtype, ContiguousView(large), ContiguousView(large), false);
      CheckFloat(rng, c, 3.0, dtype, StridedView(large, {1, min_numel / 257 + 1}),
                 ContiguousView(large), false);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// NaN stays NaN through every float op (sign and relu included, as PyTorch's); relu of -0 is 0.
TEST(UnaryKernelTest, NaNPropagates) {
  for (const OpCase& c : Cases()) {
    for (DType dtype : kFloats) {
      SCOPED_TRACE(std::string(c.kernel) + " " + to_string(dtype));
      const View v = ContiguousView({2});
      const int64_t es = static_cast<int64_t>(element_size(dtype));
      std::mt19937_64 rng(1);
      Buffer in = RandomBuffer(rng, 2, static_cast<size_t>(es));
      StoreDouble(in.data(), dtype, std::numeric_limits<double>::quiet_NaN());
      StoreDouble(in.data() + es, dtype, -0.0);
      Buffer out = in;
      KernelContext ctx;
      ctx.attributes = AttrsFor(c, 2.0);
      ctx.outputs.push_back(Arg(out, v, dtype));
      ctx.inputs.push_back(Arg(in, v, dtype));
      RunKernel(c.kernel, ctx);
      EXPECT_TRUE(std::isnan(LoadAsDouble(out.data(), dtype)));
      if (c.op == UnaryOp::kRelu || c.op == UnaryOp::kSign) {
        EXPECT_EQ(LoadAsDouble(out.data() + es, dtype), 0.0);
      }
    }
  }
}

// The integer ops on random bits, exactly: neg and abs wrap (abs of the most negative value is
// itself), sign is -1/0/1, relu max(x, 0); uint8 has no negatives.
TEST(UnaryKernelTest, IntegerOpsExactly) {
  std::mt19937_64 rng(13);
  for (UnaryOp op : {UnaryOp::kNeg, UnaryOp::kAbs, UnaryOp::kSign, UnaryOp::kRelu}) {
    for (DType dtype : kIntegers) {
      SCOPED_TRACE(std::string(UnaryOpName(op)) + " " + to_string(dtype));
      const size_t es = element_size(dtype);
      const int bits = static_cast<int>(es * 8);
      const bool is_signed = dtype != DType::kUInt8;
      const std::vector<int64_t> shape = {5, 37};
      const View in_view = RandomView(rng, shape, true);
      const View out_view = ContiguousView(shape);
      Buffer in = RandomBuffer(rng, in_view.storage, es);
      // The extremes among the random bits.
      const uint64_t min_bits = is_signed ? uint64_t{1} << (bits - 1) : 0;
      std::memcpy(in.data() + in_view.offset * es, &min_bits, es);
      Buffer out = RandomBuffer(rng, out_view.storage, es);
      KernelContext ctx;
      ctx.outputs.push_back(Arg(out, out_view, dtype));
      ctx.inputs.push_back(Arg(in, in_view, dtype));
      RunKernel(UnaryOpName(op), ctx);
      IndexWalker walker(shape);
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      for (int64_t i = 0; i < Numel(shape); ++i, walker.Next()) {
        uint64_t raw = 0;
        std::memcpy(&raw, in.data() + OffsetOf(in_view, walker.index()) * es, es);
        // The value as a signed integer of `bits` bits (sign-extended), or unsigned for uint8.
        const bool negative = is_signed && ((raw >> (bits - 1)) & 1);
        const int64_t x = negative ? static_cast<int64_t>(raw | ~mask) : static_cast<int64_t>(raw);
        uint64_t expect = 0;
        switch (op) {
          case UnaryOp::kNeg:
            expect = (0 - raw) & mask;
            break;
          case UnaryOp::kAbs:
            expect = negative ? (0 - raw) & mask : raw;
            break;
          case UnaryOp::kSign:
            expect = static_cast<uint64_t>(x > 0 ? 1 : x < 0 ? -1 : 0) & mask;
            break;
          default:
            expect = negative ? 0 : raw;
        }
        uint64_t got = 0;
        std::memcpy(&got, out.data() + OffsetOf(out_view, walker.index()) * es, es);
        ASSERT_EQ(got, expect) << "element " << i << " of x = " << x;
      }
    }
  }
}

KernelContext Context(Buffer& in, DType in_dtype, const std::vector<int64_t>& in_shape, Buffer& out,
                      DType out_dtype, const std::vector<int64_t>& out_shape) {
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in, ContiguousView(in_shape), in_dtype));
  ctx.outputs.push_back(Arg(out, ContiguousView(out_shape), out_dtype));
  return ctx;
}

TEST(UnaryKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(2);
  Buffer in = RandomBuffer(rng, 64, 8);
  Buffer out = RandomBuffer(rng, 64, 8);
  auto expect_error = [&](const char* op, const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel(op, ctx);
      ADD_FAILURE() << op << ": no error, expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("exp", Context(in, DType::kInt32, {4}, out, DType::kInt32, {4}),
               "exp: dtype int32 is not supported (a float dtype is)");
  expect_error("neg", Context(in, DType::kBool, {4}, out, DType::kBool, {4}),
               "neg: dtype bool is not supported (an integer or float dtype is)");
  expect_error("tanh", Context(in, DType::kFloat32, {4}, out, DType::kFloat64, {4}),
               "tanh: output dtype float64 differs from input dtype float32");
  expect_error("relu", Context(in, DType::kFloat32, {4}, out, DType::kFloat32, {2, 2}),
               "relu: output shape (2,2) differs from input shape (4)");
  KernelContext gelu = Context(in, DType::kFloat32, {4}, out, DType::kFloat32, {4});
  gelu.attributes =
      Attrs(KernelAttrSchema("gelu", {"approximate", AttrType::kString}), std::string("fast"));
  expect_error("gelu", gelu, "gelu: approximate is \"fast\"; expected \"none\" or \"tanh\"");
  expect_error("cast", Context(in, DType::kFloat32, {4}, out, DType::kInt64, {3}),
               "cast: output shape (3) differs from input shape (4)");
}

// ---- cast ----

// The expected bits of `v` (from a source of dtype `from`) cast to `to`, by the documented rules.
uint64_t CastReference(long double v, DType from, DType to) {
  if (to == DType::kBool) return v != 0 || std::isnan(v) ? 1 : 0;
  if (!IsFloat(to)) {
    const int bits = static_cast<int>(element_size(to) * 8);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    if (!IsFloat(from)) {  // integers and bool: two's-complement wrap-around
      const int64_t i = static_cast<int64_t>(v);
      return static_cast<uint64_t>(i) & mask;
    }
    if (std::isnan(v)) return 0;
    const bool is_signed = to != DType::kUInt8;
    const long double lo = is_signed ? -std::ldexp(1.0L, bits - 1) : 0;
    const long double hi = is_signed ? std::ldexp(1.0L, bits - 1) - 1 : std::ldexp(1.0L, bits) - 1;
    long double t = std::trunc(v);
    if (t < lo) t = lo;
    if (t > hi) t = hi;
    return static_cast<uint64_t>(static_cast<int64_t>(t)) & mask;
  }
  char out[8] = {};
  if (to == DType::kFloat64) {
    StoreDouble(out, to, static_cast<double>(v));
  } else {
    // float32, and the 16-bit floats through float: one rounding from the exact value to float.
    const float f = static_cast<float>(v);
    StoreDouble(out, to, f);
  }
  uint64_t bits = 0;
  std::memcpy(&bits, out, element_size(to));
  return bits;
}

TEST(CastKernelTest, EveryDTypePairOnSpecialAndRandomValues) {
  std::mt19937_64 rng(14);
  const std::vector<int64_t> shape = {7, 19};
  for (DType from : AllDTypes()) {
    for (DType to : AllDTypes()) {
      SCOPED_TRACE(to_string(from) + " -> " + to_string(to));
      const size_t fes = element_size(from), tes = element_size(to);
      const View in_view = RandomView(rng, shape, true);
      const View out_view = rng() % 2 ? ContiguousView(shape) : RandomView(rng, shape, false);
      Buffer in = RandomBuffer(rng, in_view.storage, fes);
      if (from == DType::kBool) {
        for (int64_t i = 0; i < in_view.storage; ++i) in.data()[i] = static_cast<char>(rng() % 2);
      } else if (IsFloat(from)) {
        // Specials, values past every integer range, fractions of both signs, moderate values.
        const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   1e30,
                                   -1e30,
                                   -0.0,
                                   0.75,
                                   -0.75,
                                   -1.5,
                                   255.5,
                                   -129.9,
                                   40000.0,
                                   3e9};
        std::uniform_real_distribution<double> dist(-300, 300);
        for (int64_t i = 0; i < in_view.storage; ++i) {
          const double v = i < 13 ? specials[i] : dist(rng);
          StoreDouble(in.data() + i * static_cast<int64_t>(fes), from, v);
        }
      }
      Buffer out = RandomBuffer(rng, out_view.storage, tes);
      KernelContext ctx;
      ctx.outputs.push_back(Arg(out, out_view, to));
      ctx.inputs.push_back(Arg(in, in_view, from));
      RunKernel("cast", ctx);
      IndexWalker walker(shape);
      for (int64_t i = 0; i < Numel(shape); ++i, walker.Next()) {
        const long double v = ExactValue(
            in.data() + OffsetOf(in_view, walker.index()) * static_cast<int64_t>(fes), from);
        uint64_t got = 0;
        std::memcpy(
            &got, out.data() + OffsetOf(out_view, walker.index()) * static_cast<int64_t>(tes), tes);
        const uint64_t expect = CastReference(v, from, to);
        if (IsFloat(to) && std::isnan(v)) {
          char g[8] = {};
          std::memcpy(g, &got, tes);
          ASSERT_TRUE(std::isnan(LoadAsDouble(g, to))) << "element " << i;
          continue;
        }
        ASSERT_EQ(got, expect) << "element " << i << " of value " << static_cast<double>(v);
      }
    }
  }
}

TEST(CastKernelTest, LargeOutputs) {
  std::mt19937_64 rng(15);
  const int64_t n = kLargeBytes / 2 + 11;
  for (auto [from, to] :
       {std::pair{DType::kFloat32, DType::kInt64}, std::pair{DType::kInt32, DType::kFloat16},
        std::pair{DType::kFloat64, DType::kBFloat16}}) {
    SCOPED_TRACE(to_string(from) + " -> " + to_string(to));
    const size_t fes = element_size(from), tes = element_size(to);
    Buffer in = RandomBuffer(rng, n, fes);
    if (IsFloat(from)) {
      std::uniform_real_distribution<double> dist(-1000, 1000);
      for (int64_t i = 0; i < n; ++i)
        StoreDouble(in.data() + i * static_cast<int64_t>(fes), from, dist(rng));
    }
    Buffer out = RandomBuffer(rng, n, tes);
    KernelContext ctx = Context(in, from, {n}, out, to, {n});
    RunKernel("cast", ctx);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t got = 0;
      std::memcpy(&got, out.data() + i * static_cast<int64_t>(tes), tes);
      ASSERT_EQ(
          got, CastReference(ExactValue(in.data() + i * static_cast<int64_t>(fes), from), from, to))
          << "element " << i;
    }
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
