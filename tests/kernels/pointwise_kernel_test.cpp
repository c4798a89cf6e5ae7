// The pointwise kernels (kernels/pointwise_ops.h: the comparisons, the logical ops, maximum and
// minimum, the bitwise ops, clamp, clamp_min, clamp_max and where) of the device in OFL_TEST_DEVICE
// (the CPU's when unset; sim, and the CUDA kernels on the host grid) against element-by-element
// references written here from the loaded values, exactly: floats as doubles (float16 and bfloat16
// load exactly), integers as their values (signed but for uint8), bool as 0 or 1. Float inputs draw
// from a few small integers with a NaN, an infinity, -0 or a half now and then, so that ties and
// NaN meet every op; integers draw from the same small values, random bits and the dtype's
// extremes. Random shapes and layouts (broadcast, permuted and gapped inputs; strided and in-place
// outputs), the NaN rules, clamp's crossed and NaN bounds, parallel sizes, and every argument
// error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_checks.h"
#include "kernels/pointwise_ops.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/scalar.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

using Op = PointwiseOp;

constexpr Op kTwoInputOps[] = {Op::kEq,         Op::kNe,        Op::kLt,         Op::kLe,
                               Op::kGt,         Op::kGe,        Op::kLogicalAnd, Op::kLogicalOr,
                               Op::kLogicalXor, Op::kMaximum,   Op::kMinimum,    Op::kBitwiseAnd,
                               Op::kBitwiseOr,  Op::kBitwiseXor};
constexpr Op kClampOps[] = {Op::kClamp, Op::kClampMin, Op::kClampMax};

const DType kFloats[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
const DType kIntegers[] = {DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32,
                           DType::kInt64};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The dtypes `op` takes: integers and bool for the bitwise ops, integers and floats for clamp's
// family, every one for the others.
std::vector<DType> DTypesOf(Op op) {
  std::vector<DType> v;
  for (DType d : AllDTypes()) {
    if (PointwiseIsBitwise(op) && IsFloat(d)) continue;
    if (PointwiseIsClamp(op) && d == DType::kBool) continue;
    v.push_back(d);
  }
  return v;
}

// One element as the references see it.
struct Value {
  bool is_float = false;
  double f = 0;      // a float's value
  int64_t i = 0;     // an integer's value (uint8 unsigned, the others signed); bool's 0 or 1
  uint64_t raw = 0;  // the element's bytes
  bool nan() const { return is_float && std::isnan(f); }
  bool truth() const { return is_float ? f != 0 : i != 0; }  // NaN is true
  std::string str() const {
    if (!is_float) return std::to_string(i);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", f);
    return buf;
  }
};

Value Load(const char* p, DType dtype) {
  Value v;
  const size_t es = element_size(dtype);
  std::memcpy(&v.raw, p, es);
  if (IsFloat(dtype)) {
    v.is_float = true;
    v.f = LoadAsDouble(p, dtype);
  } else if (dtype == DType::kBool || dtype == DType::kUInt8 || es == 8) {
    v.i = static_cast<int64_t>(v.raw);
  } else {  // sign-extended
    const uint64_t sign = uint64_t{1} << (es * 8 - 1);
    v.i = static_cast<int64_t>(v.raw ^ sign) - static_cast<int64_t>(sign);
  }
  return v;
}

Value Bool(bool b) { return Load(reinterpret_cast<const char*>(&b), DType::kBool); }
Value Float(double f) {
  Value v;
  v.is_float = true;
  v.f = f;
  return v;
}
// The integer `i` in `dtype`, wrapped modulo 2^bits (bool: its lowest bit).
Value Int(int64_t i, DType dtype) {
  const uint64_t u = static_cast<uint64_t>(i);
  char bytes[8];
  std::memcpy(bytes, &u, 8);  // little-endian: the low bytes first
  return Load(bytes, dtype);
}

// The lowest and highest values of an integer dtype.
int64_t Lowest(DType d) {
  switch (d) {
    case DType::kInt8:
      return std::numeric_limits<int8_t>::lowest();
    case DType::kInt16:
      return std::numeric_limits<int16_t>::lowest();
    case DType::kInt32:
      return std::numeric_limits<int32_t>::lowest();
    case DType::kInt64:
      return std::numeric_limits<int64_t>::lowest();
    default:
      return 0;  // uint8, bool
  }
}
int64_t Highest(DType d) {
  switch (d) {
    case DType::kUInt8:
      return std::numeric_limits<uint8_t>::max();
    case DType::kInt8:
      return std::numeric_limits<int8_t>::max();
    case DType::kInt16:
      return std::numeric_limits<int16_t>::max();
    case DType::kInt32:
      return std::numeric_limits<int32_t>::max();
    case DType::kInt64:
      return std::numeric_limits<int64_t>::max();
    default:
      return 1;  // bool
  }
}

// `elems` elements of `dtype`: bool 0 or 1; floats mostly the integers -3..3 (many ties), now and
// then NaN, an infinity, -0 or a half; integers the same small values, the dtype's extremes, or
// random bits (the whole range).
Buffer TestValues(std::mt19937_64& rng, int64_t elems, DType dtype) {
  const size_t es = element_size(dtype);
  Buffer b = RandomBuffer(rng, elems, es);
  for (int64_t i = 0; i < elems; ++i) {
    char* p = b.data() + i * static_cast<int64_t>(es);
    const uint64_t r = rng();
    const int64_t small = static_cast<int64_t>((r >> 8) % 7) - 3;
    if (dtype == DType::kBool) {
      *p = static_cast<char>(r & 1);
    } else if (IsFloat(dtype)) {
      const int k = static_cast<int>(r % 32);
      const double v = k == 0   ? kNaN
                       : k == 1 ? kInf
                       : k == 2 ? -kInf
                       : k == 3 ? -0.0
                       : k == 4 ? static_cast<double>(small) + 0.5
                                : static_cast<double>(small);
      StoreDouble(p, dtype, v);
    } else {
      const int k = static_cast<int>(r % 16);
      if (k >= 8) continue;  // random bits
      const uint64_t v = static_cast<uint64_t>(k == 0   ? Lowest(dtype)
                                               : k == 1 ? Highest(dtype)
                                                        : small);
      std::memcpy(p, &v, es);
    }
  }
  return b;
}

// ---- The reference runner ----

struct Operand {
  DType dtype;
  View view;
  Buffer buffer;
};

Operand RandomOperand(std::mt19937_64& rng, DType dtype, const View& view) {
  return {dtype, view, TestValues(rng, view.storage, dtype)};
}

using Reference = std::function<Value(const std::vector<Value>&)>;

// Whether the kernel's `got` is the reference's `want`: equal values (any NaN for NaN, either zero
// for a zero), or with `exact_bits` (where copies elements) the same bits but for a NaN's payload.
bool Matches(const Value& want, const Value& got, bool exact_bits) {
  if (want.nan()) return got.nan();
  if (exact_bits) return want.raw == got.raw;
  return want.is_float ? got.f == want.f : got.i == want.i;
}

constexpr int kNoAlias = -1;

// Runs `kernel` with `attrs` over `ins` into an output of `out_dtype` laid out as `out_view`, and
// checks every output element against `ref` of the input elements at its index, and that no other
// element of the output's storage changed. With `alias` >= 0 the output is written in place over
// that input, whose view must be `out_view`.
void RunAndCheck(std::mt19937_64& rng, const std::string& kernel, const Attrs& attrs,
                 std::vector<Operand> ins, DType out_dtype, const View& out_view, int alias,
                 const Reference& ref, bool exact_bits = false) {
  std::string what = kernel + (attrs.str().empty() ? "" : "(" + attrs.str() + ")");
  for (size_t k = 0; k < ins.size(); ++k) {
    what += ", input " + std::to_string(k) + " " + to_string(ins[k].dtype) + " " +
            Describe(ins[k].view);
  }
  SCOPED_TRACE(what + ", output " + to_string(out_dtype) + " " + Describe(out_view) +
               (alias >= 0 ? ", in place over input " + std::to_string(alias) : ""));
  const int64_t oes = static_cast<int64_t>(element_size(out_dtype));
  Buffer out = alias >= 0 ? ins[static_cast<size_t>(alias)].buffer
                          : RandomBuffer(rng, out_view.storage, static_cast<size_t>(oes));
  const Buffer before = out;
  KernelContext ctx;
  ctx.attributes = attrs;
  ctx.outputs.push_back(Arg(out, out_view, out_dtype));
  for (size_t k = 0; k < ins.size(); ++k) {
    ctx.inputs.push_back(static_cast<int>(k) == alias
                             ? ctx.outputs[0]
                             : Arg(ins[k].buffer, ins[k].view, ins[k].dtype));
  }
  RunKernel(kernel, ctx);
  std::vector<bool> written(static_cast<size_t>(out_view.storage), false);
  std::vector<Value> args(ins.size());
  IndexWalker walker(out_view.shape);
  for (int64_t i = 0, n = Numel(out_view.shape); i < n; ++i, walker.Next()) {
    const std::vector<int64_t>& idx = walker.index();
    for (size_t k = 0; k < ins.size(); ++k) {
      const int64_t es = static_cast<int64_t>(element_size(ins[k].dtype));
      args[k] = Load(ins[k].buffer.data() + OffsetOf(ins[k].view, idx) * es, ins[k].dtype);
    }
    const Value want = ref(args);
    const int64_t o = OffsetOf(out_view, idx);
    written[static_cast<size_t>(o)] = true;
    const Value got = Load(out.data() + o * oes, out_dtype);
    if (!Matches(want, got, exact_bits)) {
      std::string values;
      for (const Value& a : args) values += (values.empty() ? "" : ", ") + a.str();
      FAIL() << "element " << i << " " << ToString(idx) << " of (" << values << "): expected "
             << want.str() << ", got " << got.str() << " (bits 0x" << std::hex << want.raw
             << " vs 0x" << got.raw << std::dec << ")";
    }
  }
  for (int64_t i = 0; i < out_view.storage; ++i) {
    if (written[static_cast<size_t>(i)]) continue;
    ASSERT_EQ(std::memcmp(out.data() + i * oes, before.data() + i * oes, static_cast<size_t>(oes)),
              0)
        << "storage element " << i << " outside the output was written";
  }
}

// ---- The references ----

Value TwoInputReference(Op op, DType dtype, const Value& a, const Value& b) {
  const bool fl = a.is_float;
  const bool lt = fl ? a.f < b.f : a.i < b.i;
  const bool gt = fl ? a.f > b.f : a.i > b.i;
  const bool eq = fl ? a.f == b.f : a.i == b.i;
  switch (op) {
    case Op::kEq:
      return Bool(eq);
    case Op::kNe:
      return Bool(!eq);
    case Op::kLt:
      return Bool(lt);
    case Op::kLe:
      return Bool(lt || eq);
    case Op::kGt:
      return Bool(gt);
    case Op::kGe:
      return Bool(gt || eq);
    case Op::kLogicalAnd:
      return Bool(a.truth() && b.truth());
    case Op::kLogicalOr:
      return Bool(a.truth() || b.truth());
    case Op::kLogicalXor:
      return Bool(a.truth() != b.truth());
    case Op::kMaximum:
    case Op::kMinimum:
      if (a.nan()) return a;
      if (b.nan()) return b;
      return (op == Op::kMaximum ? gt : lt) ? a : b;
    case Op::kBitwiseAnd:
      return Int(a.i & b.i, dtype);
    case Op::kBitwiseOr:
      return Int(a.i | b.i, dtype);
    case Op::kBitwiseXor:
      return Int(a.i ^ b.i, dtype);
    default:
      ADD_FAILURE() << "not a two-input op";
      return a;
  }
}

Value NotReference(Op op, DType dtype, const Value& x) {
  if (op == Op::kLogicalNot || dtype == DType::kBool) return Bool(!x.truth());
  return Int(~x.i, dtype);
}

// min(max(x, lo), hi), without the bound the op lacks; NaN in x or in a bound gives NaN. The
// float bounds of these tests are exact in every float dtype.
Value ClampReference(Op op, DType dtype, const Value& x, const Scalar& lo, const Scalar& hi) {
  const bool use_lo = op != Op::kClampMax;
  const bool use_hi = op != Op::kClampMin;
  if (x.is_float) {
    const double l = lo.to_double(), h = hi.to_double();
    if (x.nan() || (use_lo && std::isnan(l)) || (use_hi && std::isnan(h))) return Float(kNaN);
    double r = x.f;
    if (use_lo) r = std::max(r, l);
    if (use_hi) r = std::min(r, h);
    return Float(r);
  }
  int64_t r = x.i;
  if (use_lo) r = std::max(r, lo.int64_value());
  if (use_hi) r = std::min(r, hi.int64_value());
  return Int(r, dtype);
}

AttrSchema Schema(const char* op, std::vector<AttrDef> defs) {
  AttrSchema s(std::move(defs));
  s.set_op(op);
  return s;
}

// The attributes of clamp's family as the ops declare them: clamp's "min" and "max", clamp_min's
// "min", clamp_max's "max" (scalars).
Attrs ClampAttrs(Op op, const Scalar& lo, const Scalar& hi) {
  static const AttrSchema clamp =
      Schema("clamp", {{"min", AttrType::kScalar}, {"max", AttrType::kScalar}});
  static const AttrSchema clamp_min = Schema("clamp_min", {{"min", AttrType::kScalar}});
  static const AttrSchema clamp_max = Schema("clamp_max", {{"max", AttrType::kScalar}});
  if (op == Op::kClamp) return Attrs(clamp, lo, hi);
  if (op == Op::kClampMin) return Attrs(clamp_min, lo);
  return Attrs(clamp_max, hi);
}

// An output layout for `shape`: contiguous or a random permuted, gapped one.
View RandomOutputView(std::mt19937_64& rng, const std::vector<int64_t>& shape) {
  return rng() % 3 == 0 ? ContiguousView(shape) : RandomView(rng, shape, /*broadcast=*/false);
}

// ---- The tests ----

TEST(PointwiseKernelTest, TwoInputOpsOnEveryDTypeAndRandomLayouts) {
  std::mt19937_64 rng(21);
  for (Op op : kTwoInputOps) {
    for (DType dtype : DTypesOf(op)) {
      const DType out_dtype = PointwiseGivesBool(op) ? DType::kBool : dtype;
      const Reference ref = [op, dtype](const std::vector<Value>& v) {
        return TwoInputReference(op, dtype, v[0], v[1]);
      };
      for (int iter = 0; iter < 16; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        // Some same-dtype ops write over their first input.
        const bool in_place = !PointwiseGivesBool(op) && iter % 4 == 3;
        const View out_view = RandomOutputView(rng, shape);
        Operand a = RandomOperand(rng, dtype, in_place ? out_view : RandomView(rng, shape, true));
        Operand b = RandomOperand(rng, dtype, RandomView(rng, shape, true));
        RunAndCheck(rng, PointwiseOpName(op), Attrs(), {a, b}, out_dtype, out_view,
                    in_place ? 0 : kNoAlias, ref);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// a ** b of integers by repeated squaring, written apart from the kernel's loop: mod 2^64, then
// wrapped to the dtype; a negative exponent gives 0 but for a base of 1 or -1 (PyTorch's rule).
Value IntPowReference(DType dtype, const Value& a, const Value& b) {
  if (b.i < 0 && dtype != DType::kUInt8) {
    if (a.i == 1) return Int(1, dtype);
    if (a.i == -1) return Int(b.i % 2 == 0 ? 1 : -1, dtype);
    return Int(0, dtype);
  }
  uint64_t result = 1;
  uint64_t base = static_cast<uint64_t>(a.i);
  for (uint64_t e = static_cast<uint64_t>(b.i); e > 0; e /= 2) {
    if (e % 2 == 1) result = result * base;
    base = base * base;
  }
  return Int(static_cast<int64_t>(result), dtype);
}

TEST(PointwiseKernelTest, PowOfIntegersIsExactOnRandomLayouts) {
  std::mt19937_64 rng(31);
  for (DType dtype : kIntegers) {
    const Reference ref = [dtype](const std::vector<Value>& v) {
      return IntPowReference(dtype, v[0], v[1]);
    };
    for (int iter = 0; iter < 12; ++iter) {
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 5));
      const View out_view = RandomOutputView(rng, shape);
      Operand a = RandomOperand(rng, dtype, RandomView(rng, shape, true));
      Operand b = RandomOperand(rng, dtype, RandomView(rng, shape, true));
      RunAndCheck(rng, "pow", Attrs(), {a, b}, dtype, out_view, kNoAlias, ref);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(PointwiseKernelTest, PowOfFloatsAtExactPoints) {
  // Points where every correctly rounded pow is exact, in every float dtype.
  const std::vector<double> base = {2, 4, 16, -2, 0, 0, 1, kNaN, 3, -8};
  const std::vector<double> expo = {3, 0.5, -0.5, 3, -1, 0, kNaN, 0, 1, 1.0 / 3};
  const std::vector<double> want = {8, 2, 0.25, -8, kInf, 1, 1, 1, 3, kNaN};
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(to_string(dtype));
    const std::vector<int64_t> shape = {static_cast<int64_t>(base.size())};
    std::mt19937_64 rng(3);
    Operand a{dtype, ContiguousView(shape), {}};
    Operand b{dtype, ContiguousView(shape), {}};
    a.buffer = RandomBuffer(rng, a.view.storage, element_size(dtype));
    b.buffer = RandomBuffer(rng, b.view.storage, element_size(dtype));
    for (size_t i = 0; i < base.size(); ++i) {
      if (dtype == DType::kFloat32) {
        const float x = static_cast<float>(base[i]), y = static_cast<float>(expo[i]);
        std::memcpy(a.buffer.data() + i * 4, &x, 4);
        std::memcpy(b.buffer.data() + i * 4, &y, 4);
      } else {
        std::memcpy(a.buffer.data() + i * 8, &base[i], 8);
        std::memcpy(b.buffer.data() + i * 8, &expo[i], 8);
      }
    }
    const Reference ref = [&, dtype](const std::vector<Value>& v) {
      for (size_t i = 0; i < base.size(); ++i) {
        const bool same_base =
            std::isnan(base[i])
                ? v[0].nan()
                : v[0].f == (dtype == DType::kFloat32 ? double(float(base[i])) : base[i]);
        const bool same_exp =
            std::isnan(expo[i])
                ? v[1].nan()
                : v[1].f == (dtype == DType::kFloat32 ? double(float(expo[i])) : expo[i]);
        if (same_base && same_exp) {
          return Float(dtype == DType::kFloat32 ? double(float(want[i])) : want[i]);
        }
      }
      ADD_FAILURE() << "no point for " << v[0].str() << " ** " << v[1].str();
      return Float(0);
    };
    RunAndCheck(rng, "pow", Attrs(), {a, b}, dtype, ContiguousView(shape), kNoAlias, ref);
  }
}

// A comparison with NaN is false but for ne; maximum and minimum with a NaN operand give NaN; the
// logical ops take NaN for true.
TEST(PointwiseKernelTest, NaNComparesUnorderedCountsAsTrueAndPropagatesThroughMaximumMinimum) {
  const double a_values[] = {kNaN, kNaN, 1, 0, kNaN, -kInf};
  const double b_values[] = {1, kNaN, kNaN, kNaN, -kInf, kNaN};
  constexpr int n = 6;
  struct Expect {
    Op op;
    int bools[n];  // -1: NaN
  };
  const Expect expects[] = {
      {Op::kEq, {0, 0, 0, 0, 0, 0}},
      {Op::kNe, {1, 1, 1, 1, 1, 1}},
      {Op::kLt, {0, 0, 0, 0, 0, 0}},
      {Op::kLe, {0, 0, 0, 0, 0, 0}},
      {Op::kGt, {0, 0, 0, 0, 0, 0}},
      {Op::kGe, {0, 0, 0, 0, 0, 0}},
      {Op::kLogicalAnd, {1, 1, 1, 0, 1, 1}},
      {Op::kLogicalOr, {1, 1, 1, 1, 1, 1}},
      {Op::kLogicalXor, {0, 0, 0, 1, 0, 0}},
      {Op::kMaximum, {-1, -1, -1, -1, -1, -1}},
      {Op::kMinimum, {-1, -1, -1, -1, -1, -1}},
  };
  std::mt19937_64 rng(22);
  const View v = ContiguousView({n});
  for (DType dtype : kFloats) {
    const int64_t es = static_cast<int64_t>(element_size(dtype));
    Buffer a = RandomBuffer(rng, n, static_cast<size_t>(es));
    Buffer b = RandomBuffer(rng, n, static_cast<size_t>(es));
    for (int i = 0; i < n; ++i) {
      StoreDouble(a.data() + i * es, dtype, a_values[i]);
      StoreDouble(b.data() + i * es, dtype, b_values[i]);
    }
    for (const Expect& e : expects) {
      SCOPED_TRACE(std::string(PointwiseOpName(e.op)) + " " + to_string(dtype));
      const DType out_dtype = PointwiseGivesBool(e.op) ? DType::kBool : dtype;
      const int64_t oes = static_cast<int64_t>(element_size(out_dtype));
      Buffer out = RandomBuffer(rng, n, static_cast<size_t>(oes));
      KernelContext ctx;
      ctx.outputs.push_back(Arg(out, v, out_dtype));
      ctx.inputs.push_back(Arg(a, v, dtype));
      ctx.inputs.push_back(Arg(b, v, dtype));
      RunKernel(PointwiseOpName(e.op), ctx);
      for (int i = 0; i < n; ++i) {
        const Value got = Load(out.data() + i * oes, out_dtype);
        if (e.bools[i] < 0) {
          EXPECT_TRUE(got.nan()) << "element " << i << ": " << got.str();
        } else {
          EXPECT_EQ(got.i, e.bools[i])
              << "element " << i << " of (" << a_values[i] << ", " << b_values[i] << ")";
        }
      }
    }
    // logical_not of NaN is false (NaN is true), of -0 true.
    const double x_values[] = {kNaN, -0.0, 0.0, kInf, -2};
    const int not_expect[] = {0, 1, 1, 0, 0};
    Buffer x = RandomBuffer(rng, 5, static_cast<size_t>(es));
    for (int i = 0; i < 5; ++i) StoreDouble(x.data() + i * es, dtype, x_values[i]);
    Buffer out = RandomBuffer(rng, 5, 1);
    KernelContext ctx;
    ctx.outputs.push_back(Arg(out, ContiguousView({5}), DType::kBool));
    ctx.inputs.push_back(Arg(x, ContiguousView({5}), dtype));
    RunKernel("logical_not", ctx);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(out.data()[i], not_expect[i])
          << "logical_not of " << x_values[i] << " " << to_string(dtype);
    }
  }
}

TEST(PointwiseKernelTest, LogicalNotAndBitwiseNotOnEveryDTypeExactly) {
  std::mt19937_64 rng(23);
  for (Op op : {Op::kLogicalNot, Op::kBitwiseNot}) {
    for (DType dtype : DTypesOf(op)) {
      const DType out_dtype = op == Op::kLogicalNot ? DType::kBool : dtype;
      const Reference ref = [op, dtype](const std::vector<Value>& v) {
        return NotReference(op, dtype, v[0]);
      };
      for (int iter = 0; iter < 12; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        const bool in_place = op == Op::kBitwiseNot && iter % 4 == 3;
        const View out_view = RandomOutputView(rng, shape);
        Operand x = RandomOperand(rng, dtype, in_place ? out_view : RandomView(rng, shape, true));
        RunAndCheck(rng, PointwiseOpName(op), Attrs(), {x}, out_dtype, out_view,
                    in_place ? 0 : kNoAlias, ref);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // The extremes: ~x is -x - 1 in two's complement, every bit flipped for uint8, not for bool.
  struct Case {
    DType dtype;
    int64_t x, expect;
  };
  const Case cases[] = {
      {DType::kInt8, -128, 127},
      {DType::kInt8, 127, -128},
      {DType::kInt8, -1, 0},
      {DType::kUInt8, 0, 255},
      {DType::kUInt8, 255, 0},
      {DType::kUInt8, 0x5a, 0xa5},
      {DType::kInt16, std::numeric_limits<int16_t>::lowest(), std::numeric_limits<int16_t>::max()},
      {DType::kInt32, 0, -1},
      {DType::kInt64, std::numeric_limits<int64_t>::lowest(), std::numeric_limits<int64_t>::max()},
      {DType::kBool, 1, 0},
      {DType::kBool, 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("bitwise_not of " + std::to_string(c.x) + " " + to_string(c.dtype));
    const size_t es = element_size(c.dtype);
    Buffer in = RandomBuffer(rng, 1, es);
    const uint64_t bits = static_cast<uint64_t>(c.x);
    std::memcpy(in.data(), &bits, es);
    Buffer out = RandomBuffer(rng, 1, es);
    KernelContext ctx;
    ctx.outputs.push_back(Arg(out, ContiguousView({}), c.dtype));
    ctx.inputs.push_back(Arg(in, ContiguousView({}), c.dtype));
    RunKernel("bitwise_not", ctx);
    EXPECT_EQ(Load(out.data(), c.dtype).i, c.expect);
  }
}

// clamp, clamp_min and clamp_max on floats: bounds of both signs, equal and crossed bounds (lo > hi
// gives hi), NaN bounds and infinite ones, over inputs with NaN, infinities and -0.
TEST(PointwiseKernelTest, ClampOnFloatsWithNaNAndCrossedBounds) {
  const std::pair<double, double> bounds[] = {{-1.5, 2},  {0.5, 0.5},   {2, -1},    {kNaN, 1},
                                              {-1, kNaN}, {-kInf, 2.5}, {-2, kInf}, {0, 0}};
  std::mt19937_64 rng(24);
  for (Op op : kClampOps) {
    for (DType dtype : kFloats) {
      for (int iter = 0; iter < 16; ++iter) {
        const Scalar lo(bounds[iter % 8].first), hi(bounds[iter % 8].second);
        const Reference ref = [op, dtype, lo, hi](const std::vector<Value>& v) {
          return ClampReference(op, dtype, v[0], lo, hi);
        };
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        const bool in_place = iter % 4 == 3;
        const View out_view = RandomOutputView(rng, shape);
        Operand x = RandomOperand(rng, dtype, in_place ? out_view : RandomView(rng, shape, true));
        RunAndCheck(rng, PointwiseOpName(op), ClampAttrs(op, lo, hi), {x}, dtype, out_view,
                    in_place ? 0 : kNoAlias, ref);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// clamp's family on integers, exactly: bounds anywhere in the dtype's range, its extremes
// included, crossed ones, and bool bounds (0 and 1).
TEST(PointwiseKernelTest, ClampOnIntegersExactlyUpToTheDTypeExtremes) {
  std::mt19937_64 rng(25);
  for (Op op : kClampOps) {
    for (DType dtype : kIntegers) {
      const int64_t lowest = Lowest(dtype), highest = Highest(dtype);
      auto bound = [&]() -> Scalar {
        switch (rng() % 6) {
          case 0:
            return Scalar(lowest);
          case 1:
            return Scalar(highest);
          case 2:
            return Scalar(rng() % 2 == 0);
          case 3: {  // anywhere in the range
            const uint64_t span = static_cast<uint64_t>(highest) - static_cast<uint64_t>(lowest);
            const uint64_t r = span == ~uint64_t{0} ? rng() : rng() % (span + 1);
            return Scalar(static_cast<int64_t>(static_cast<uint64_t>(lowest) + r));
          }
          default:  // among the small values most inputs hold
            return Scalar(
                std::clamp<int64_t>(static_cast<int64_t>(rng() % 9) - 4, lowest, highest));
        }
      };
      for (int iter = 0; iter < 16; ++iter) {
        const Scalar lo = bound(), hi = bound();
        const Reference ref = [op, dtype, lo, hi](const std::vector<Value>& v) {
          return ClampReference(op, dtype, v[0], lo, hi);
        };
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        const bool in_place = iter % 4 == 3;
        const View out_view = RandomOutputView(rng, shape);
        Operand x = RandomOperand(rng, dtype, in_place ? out_view : RandomView(rng, shape, true));
        RunAndCheck(rng, PointwiseOpName(op), ClampAttrs(op, lo, hi), {x}, dtype, out_view,
                    in_place ? 0 : kNoAlias, ref);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// A negative integer bound for uint8, which Scalar's rule (oneflow_lite/scalar.h: fits) lets uint8
// hold down to -255 as two's complement (-1 is 255), as PyTorch's clamp converts it: clamp_min(x,
// -1) is 255, clamp_max(x, -1) is x, clamp(x, -10, -1) is clamp(x, 246, 255).
TEST(PointwiseKernelTest, ClampOnUInt8TakesANegativeBoundAsTwosComplement) {
  std::mt19937_64 rng(29);
  const uint8_t xs[] = {0, 5, 245, 246, 250, 255};
  constexpr int n = 6;
  struct Case {
    Op op;
    int64_t lo, hi;
    uint8_t expect[n];
  };
  const Case cases[] = {
      {Op::kClampMin, -1, 0, {255, 255, 255, 255, 255, 255}},
      {Op::kClampMax, 0, -1, {0, 5, 245, 246, 250, 255}},
      {Op::kClamp, -10, -1, {246, 246, 246, 246, 250, 255}},
      {Op::kClamp, 3, -255, {1, 1, 1, 1, 1, 1}},  // -255 is 1: crossed bounds give hi
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(PointwiseOpName(c.op)) + "(" + std::to_string(c.lo) + ", " +
                 std::to_string(c.hi) + ")");
    Buffer in = RandomBuffer(rng, n, 1);
    std::memcpy(in.data(), xs, n);
    Buffer out = RandomBuffer(rng, n, 1);
    KernelContext ctx;
    ctx.attributes = ClampAttrs(c.op, Scalar(c.lo), Scalar(c.hi));
    ctx.outputs.push_back(Arg(out, ContiguousView({n}), DType::kUInt8));
    ctx.inputs.push_back(Arg(in, ContiguousView({n}), DType::kUInt8));
    RunKernel(PointwiseOpName(c.op), ctx);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(static_cast<int>(static_cast<uint8_t>(out.data()[i])),
                static_cast<int>(c.expect[i]))
          << "x = " << static_cast<int>(xs[i]);
    }
  }
}

TEST(PointwiseKernelTest, WhereOnEveryDTypeWithBroadcastOperands) {
  std::mt19937_64 rng(26);
  const Reference ref = [](const std::vector<Value>& v) { return v[0].i != 0 ? v[1] : v[2]; };
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 16; ++iter) {
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
      const bool in_place = iter % 4 == 3;
      const View out_view = RandomOutputView(rng, shape);
      Operand cond = RandomOperand(rng, DType::kBool, RandomView(rng, shape, true));
      Operand x = RandomOperand(rng, dtype, RandomView(rng, shape, true));
      Operand y = RandomOperand(rng, dtype, RandomView(rng, shape, true));
      if (in_place) {  // written over x or y
        (iter % 8 == 3 ? x : y) = RandomOperand(rng, dtype, out_view);
      }
      RunAndCheck(rng, "where", Attrs(), {cond, x, y}, dtype, out_view,
                  in_place ? (iter % 8 == 3 ? 1 : 2) : kNoAlias, ref, /*exact_bits=*/true);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Outputs of kLargeBytes or more, past every kernel's parallel threshold: a comparison and maximum
// with a transposed input, clamp of a transposed input, and where with one condition per row
// (stride 0 along the columns) and y one row broadcast down the rows.
TEST(PointwiseKernelTest, LargeOutputs) {
  std::mt19937_64 rng(27);
  const int64_t cols = 257;
  const int64_t rows = kLargeBytes / cols + 1;  // >= kLargeBytes elements of one byte or more
  const std::vector<int64_t> large = {rows, cols};
  const View contiguous = ContiguousView(large);
  const View transposed = StridedView(large, {1, rows});
  {
    const Reference ref = [](const std::vector<Value>& v) {
      return TwoInputReference(Op::kLt, DType::kFloat32, v[0], v[1]);
    };
    RunAndCheck(rng, "lt", Attrs(),
                {RandomOperand(rng, DType::kFloat32, contiguous),
                 RandomOperand(rng, DType::kFloat32, transposed)},
                DType::kBool, contiguous, kNoAlias, ref);
  }
  {
    const Reference ref = [](const std::vector<Value>& v) {
      return TwoInputReference(Op::kMaximum, DType::kInt16, v[0], v[1]);
    };
    RunAndCheck(rng, "maximum", Attrs(),
                {RandomOperand(rng, DType::kInt16, transposed),
                 RandomOperand(rng, DType::kInt16, contiguous)},
                DType::kInt16, contiguous, kNoAlias, ref);
  }
  {
    const Scalar lo(-1), hi(2);
    const Reference ref = [lo, hi](const std::vector<Value>& v) {
      return ClampReference(Op::kClamp, DType::kInt8, v[0], lo, hi);
    };
    RunAndCheck(rng, "clamp", ClampAttrs(Op::kClamp, lo, hi),
                {RandomOperand(rng, DType::kInt8, transposed)}, DType::kInt8, contiguous, kNoAlias,
                ref);
  }
  {
    const Reference ref = [](const std::vector<Value>& v) { return v[0].i != 0 ? v[1] : v[2]; };
    RunAndCheck(rng, "where", Attrs(),
                {RandomOperand(rng, DType::kBool, StridedView(large, {1, 0})),
                 RandomOperand(rng, DType::kFloat64, contiguous),
                 RandomOperand(rng, DType::kFloat64, StridedView(large, {0, 1}))},
                DType::kFloat64, contiguous, kNoAlias, ref, /*exact_bits=*/true);
  }
}

// A context over `in` and `out` (64 bytes each at least) with contiguous operands of the dtypes
// and shapes given.
KernelContext Context(Buffer& in, const std::vector<std::pair<DType, std::vector<int64_t>>>& ins,
                      Buffer& out, DType out_dtype, const std::vector<int64_t>& out_shape,
                      Attrs attrs = Attrs()) {
  KernelContext ctx;
  ctx.attributes = std::move(attrs);
  for (const auto& [dtype, shape] : ins)
    ctx.inputs.push_back(Arg(in, ContiguousView(shape), dtype));
  ctx.outputs.push_back(Arg(out, ContiguousView(out_shape), out_dtype));
  return ctx;
}

TEST(PointwiseKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(28);
  Buffer in = RandomBuffer(rng, 64, 8);
  for (int i = 0; i < 64 * 8; ++i) in.data()[i] &= 1;  // valid bools too
  Buffer out = RandomBuffer(rng, 64, 8);
  auto expect_error = [&](const char* op, const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel(op, ctx);
      ADD_FAILURE() << op << ": no error, expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  using D = DType;
  const D f32 = D::kFloat32, i32 = D::kInt32, b = D::kBool;
  // Operand counts.
  expect_error("eq", Context(in, {{f32, {4}}}, out, b, {4}),
               "eq: the kernel expects 2 inputs and 1 output, got 1 and 1");
  expect_error("bitwise_not", Context(in, {{i32, {4}}, {i32, {4}}}, out, i32, {4}),
               "bitwise_not: the kernel expects 1 input and 1 output, got 2 and 1");
  expect_error("where", Context(in, {{b, {4}}, {f32, {4}}}, out, f32, {4}),
               "where: the kernel expects 3 inputs and 1 output, got 2 and 1");
  KernelContext two_outputs = Context(in, {{f32, {4}}, {f32, {4}}}, out, b, {4});
  two_outputs.outputs.push_back(two_outputs.outputs[0]);
  expect_error("logical_or", two_outputs,
               "logical_or: the kernel expects 2 inputs and 1 output, got 2 and 2");
  // Shapes and strides.
  expect_error("lt", Context(in, {{f32, {4}}, {f32, {3}}}, out, b, {4}),
               "lt: input 1 shape (3) differs from output shape (4)");
  expect_error("where", Context(in, {{b, {2, 2}}, {f32, {4}}, {f32, {4}}}, out, f32, {4}),
               "where: input 0 shape (2,2) differs from output shape (4)");
  expect_error("clamp_min",
               Context(in, {{f32, {2, 2}}}, out, f32, {4},
                       ClampAttrs(Op::kClampMin, Scalar(0.0), Scalar(0.0))),
               "clamp_min: input 0 shape (2,2) differs from output shape (4)");
  KernelContext bad_stride = Context(in, {{f32, {2, 2}}, {f32, {2, 2}}}, out, b, {2, 2});
  bad_stride.outputs[0].stride = Shape(std::vector<int64_t>{1});
  expect_error("gt", bad_stride, "gt: output has 1 stride(s) for shape (2,2) of 2 dim(s)");
  // Dtypes.
  expect_error("maximum", Context(in, {{f32, {4}}, {i32, {4}}}, out, f32, {4}),
               "maximum: input 1 dtype int32 differs from input 0 dtype float32");
  expect_error("where", Context(in, {{i32, {4}}, {f32, {4}}, {f32, {4}}}, out, f32, {4}),
               "where: the condition's dtype is int32; expected bool");
  expect_error("where", Context(in, {{b, {4}}, {f32, {4}}, {D::kFloat64, {4}}}, out, f32, {4}),
               "where: input 2 dtype float64 differs from input 1 dtype float32");
  expect_error("eq", Context(in, {{f32, {4}}, {f32, {4}}}, out, f32, {4}),
               "eq: output dtype float32 is not bool (a bool result)");
  expect_error("logical_not", Context(in, {{D::kInt8, {4}}}, out, D::kInt8, {4}),
               "logical_not: output dtype int8 is not bool (a bool result)");
  expect_error("minimum", Context(in, {{i32, {4}}, {i32, {4}}}, out, D::kInt64, {4}),
               "minimum: output dtype int64 is not int32 (the inputs' dtype)");
  expect_error("where", Context(in, {{b, {4}}, {f32, {4}}, {f32, {4}}}, out, b, {4}),
               "where: output dtype bool is not float32 (the inputs' dtype)");
  expect_error("bitwise_xor", Context(in, {{f32, {4}}, {f32, {4}}}, out, f32, {4}),
               "bitwise_xor: dtype float32 is not supported (an integer or bool dtype is)");
  expect_error("bitwise_not", Context(in, {{D::kBFloat16, {4}}}, out, D::kBFloat16, {4}),
               "bitwise_not: dtype bfloat16 is not supported (an integer or bool dtype is)");
  expect_error("clamp",
               Context(in, {{b, {4}}}, out, b, {4}, ClampAttrs(Op::kClamp, Scalar(0), Scalar(1))),
               "clamp: dtype bool is not supported (an integer or float dtype is)");
  // Bounds the dtype cannot hold.
  expect_error(
      "clamp",
      Context(in, {{i32, {4}}}, out, i32, {4}, ClampAttrs(Op::kClamp, Scalar(2.5), Scalar(4))),
      "clamp: min 2.5 is not a whole number, for dtype int32");
  expect_error("clamp",
               Context(in, {{D::kInt16, {4}}}, out, D::kInt16, {4},
                       ClampAttrs(Op::kClamp, Scalar(0), Scalar(kNaN))),
               "clamp: max nan is not a whole number, for dtype int16");
  expect_error("clamp_max",
               Context(in, {{D::kUInt8, {4}}}, out, D::kUInt8, {4},
                       ClampAttrs(Op::kClampMax, Scalar(0), Scalar(300))),
               "clamp_max: max 300 cannot be converted to type uint8 without overflow");
  expect_error("clamp_min",
               Context(in, {{D::kUInt8, {4}}}, out, D::kUInt8, {4},
                       ClampAttrs(Op::kClampMin, Scalar(-256), Scalar(0))),
               "clamp_min: min -256 cannot be converted to type uint8 without overflow");
  expect_error("clamp_min",
               Context(in, {{D::kInt8, {4}}}, out, D::kInt8, {4},
                       ClampAttrs(Op::kClampMin, Scalar(-129), Scalar(0))),
               "clamp_min: min -129 cannot be converted to type int8 without overflow");
  expect_error("clamp",
               Context(in, {{D::kInt64, {4}}}, out, D::kInt64, {4},
                       ClampAttrs(Op::kClamp, Scalar(0), Scalar(uint64_t{1} << 63))),
               "clamp: max 9223372036854775808 cannot be converted to type int64 without overflow");
}

}  // namespace
}  // namespace ofl::kernels::testing
