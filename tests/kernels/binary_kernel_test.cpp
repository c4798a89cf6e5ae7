// The elementwise-binary kernels ("add", "sub", "mul", "div") of the device in OFL_TEST_DEVICE
// (the CPU's when unset) against an element-by-element reference that follows the contract:
// floats computed in their own type (float16 and bfloat16 in float, rounded by the runtime's own
// conversions), integers modulo 2^bits. Random shapes and layouts (broadcast, permuted, gapped
// inputs; permuted, gapped outputs), in-place outputs, every dtype, tiny, parallel and streamed
// sizes, rows at every 16-byte alignment, and every argument error.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr BinaryOp kOps[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv};

// The dtypes `op` takes: every one but bool, and only the floats for div.
std::vector<DType> DTypesOf(BinaryOp op) {
  std::vector<DType> v;
  for (DType d : AllDTypes()) {
    if (d == DType::kBool || (op == BinaryOp::kDiv && !IsFloat(d))) continue;
    v.push_back(d);
  }
  return v;
}

template <class T>
T Ld(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void St(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <class T>
T Op(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::kAdd:
      return x + y;
    case BinaryOp::kSub:
      return x - y;
    case BinaryOp::kMul:
      return x * y;
    case BinaryOp::kDiv:
      return x / y;
  }
  return x;
}

// One element of the reference.
void ReferenceElement(BinaryOp op, DType dtype, const char* a, const char* b, char* out) {
  switch (dtype) {
    case DType::kFloat16:
      return St(out, float16(Op<float>(op, Ld<float16>(a), Ld<float16>(b))));
    case DType::kBFloat16:
      return St(out, bfloat16(Op<float>(op, Ld<bfloat16>(a), Ld<bfloat16>(b))));
    case DType::kFloat32:
      return St(out, Op(op, Ld<float>(a), Ld<float>(b)));
    case DType::kFloat64:
      return St(out, Op(op, Ld<double>(a), Ld<double>(b)));
    default: {  // integers: the low bytes of the 64-bit result (little-endian)
      const size_t es = element_size(dtype);
      uint64_t x = 0, y = 0;
      std::memcpy(&x, a, es);
      std::memcpy(&y, b, es);
      const uint64_t r = Op(op, x, y);
      std::memcpy(out, &r, es);
    }
  }
}

void Reference(BinaryOp op, DType dtype, const Buffer& a, const View& av, const Buffer& b,
               const View& bv, Buffer* out, const View& ov) {
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  const int64_t n = Numel(ov.shape);
  IndexWalker walker(ov.shape);
  for (int64_t i = 0; i < n; ++i, walker.Next()) {
    const std::vector<int64_t>& idx = walker.index();
    ReferenceElement(op, dtype, a.data() + OffsetOf(av, idx) * es,
                     b.data() + OffsetOf(bv, idx) * es, out->data() + OffsetOf(ov, idx) * es);
  }
}

bool IsNaN(const char* p, DType dtype) {
  return IsFloat(dtype) && std::isnan(LoadAsDouble(p, dtype));
}

// Every element of the storage equal (NaN to any NaN: devices may differ in payloads), so a write
// outside the output view fails too.
void ExpectSameStorage(const Buffer& expected, const Buffer& actual, int64_t elems, DType dtype) {
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  for (int64_t i = 0; i < elems; ++i) {
    const char* e = expected.data() + i * es;
    const char* a = actual.data() + i * es;
    if (std::memcmp(e, a, es) == 0 || (IsNaN(e, dtype) && IsNaN(a, dtype))) continue;
    uint64_t eb = 0, ab = 0;
    std::memcpy(&eb, e, es);
    std::memcpy(&ab, a, es);
    FAIL() << "storage element " << i << ": expected bits 0x" << std::hex << eb << ", got 0x" << ab
           << std::dec
           << (IsFloat(dtype) ? " (" + std::to_string(LoadAsDouble(e, dtype)) + " vs " +
                                    std::to_string(LoadAsDouble(a, dtype)) + ")"
                              : std::string());
  }
}

// Input values: random bits (every pattern: NaNs, infinities, subnormals, integers' full range),
// or for floats moderate values with full mantissas, whose results round in every op.
enum class Values { kBits, kModerate };

Buffer RandomValues(std::mt19937_64& rng, int64_t elems, DType dtype, Values values) {
  const size_t es = element_size(dtype);
  Buffer b = RandomBuffer(rng, elems, es);
  if (values == Values::kModerate && IsFloat(dtype)) {
    std::uniform_real_distribution<double> dist(-8.0, 8.0);
    for (int64_t i = 0; i < elems; ++i) {
      StoreDouble(b.data() + i * static_cast<int64_t>(es), dtype, dist(rng));
    }
  }
  return b;
}

// Which inputs are the output's view.
enum class Alias { kNone, kA, kB, kBoth };

std::string Name(BinaryOp op) { return BinaryOpName(op); }

// Runs `op` over random inputs and compares the whole output storage with the reference.
void CheckBinary(std::mt19937_64& rng, BinaryOp op, DType dtype, const View& a_view,
                 const View& b_view, const View& out_view, Alias alias = Alias::kNone,
                 Values values = Values::kBits) {
  SCOPED_TRACE(Name(op) + ", dtype " + to_string(dtype) + ", a " + Describe(a_view) + ", b " +
               Describe(b_view) + ", out " + Describe(out_view) +
               (alias == Alias::kA      ? ", out is a"
                : alias == Alias::kB    ? ", out is b"
                : alias == Alias::kBoth ? ", out is a and b"
                                        : ""));
  Buffer a = RandomValues(rng, a_view.storage, dtype, values);
  Buffer b = RandomValues(rng, b_view.storage, dtype, values);
  Buffer out = alias == Alias::kNone ? RandomBuffer(rng, out_view.storage, element_size(dtype))
                                     : RandomValues(rng, out_view.storage, dtype, values);
  // An input that is the output's view has the output's values before the op.
  const bool a_is_out = alias == Alias::kA || alias == Alias::kBoth;
  const bool b_is_out = alias == Alias::kB || alias == Alias::kBoth;
  if (a_is_out) a = out;
  if (b_is_out) b = out;
  Buffer expected = out;
  Reference(op, dtype, a, a_is_out ? out_view : a_view, b, b_is_out ? out_view : b_view, &expected,
            out_view);
  KernelContext ctx;
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  ctx.inputs.push_back(a_is_out ? ctx.outputs[0] : Arg(a, a_view, dtype));
  ctx.inputs.push_back(b_is_out ? ctx.outputs[0] : Arg(b, b_view, dtype));
  RunKernel(Name(op), ctx);
  ExpectSameStorage(expected, out, out_view.storage, dtype);
}

TEST(BinaryKernelTest, RandomSmallLayoutsEveryOpAndDType) {
  std::mt19937_64 rng(1);
  for (BinaryOp op : kOps) {
    for (DType dtype : DTypesOf(op)) {
      for (int iter = 0; iter < 120; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 7));
        const View out = iter % 3 == 0 ? ContiguousView(shape) : RandomView(rng, shape, false);
        CheckBinary(rng, op, dtype, RandomView(rng, shape, /*broadcast=*/true),
                    RandomView(rng, shape, /*broadcast=*/true), out, Alias::kNone,
                    iter % 2 == 0 ? Values::kBits : Values::kModerate);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// (M,N) op (1,N), (M,N) op (M,1), (1,N) op (M,1), a transposed input, a transposed (column)
// output, and a broadcast row on the left.
TEST(BinaryKernelTest, BroadcastAndPermutedOperands) {
  std::mt19937_64 rng(2);
  const std::vector<int64_t> shape = {7, 13};
  const View contiguous = ContiguousView(shape);
  const View row = StridedView(shape, {0, 1});
  const View column = StridedView(shape, {1, 0});
  const View transposed = StridedView(shape, {1, 7});
  const View scalar = StridedView(shape, {0, 0});
  for (BinaryOp op : kOps) {
    for (DType dtype : DTypesOf(op)) {
      for (Values values : {Values::kBits, Values::kModerate}) {
        CheckBinary(rng, op, dtype, contiguous, row, contiguous, Alias::kNone, values);
        CheckBinary(rng, op, dtype, contiguous, column, contiguous, Alias::kNone, values);
        CheckBinary(rng, op, dtype, row, column, contiguous, Alias::kNone, values);
        CheckBinary(rng, op, dtype, row, contiguous, contiguous, Alias::kNone, values);
        CheckBinary(rng, op, dtype, transposed, contiguous, contiguous, Alias::kNone, values);
        CheckBinary(rng, op, dtype, contiguous, scalar, transposed, Alias::kNone, values);
        CheckBinary(rng, op, dtype, scalar, scalar, contiguous, Alias::kNone, values);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// The output is input a's view (a op= b), input b's (b = a op b), or both inputs' (x op= x): every
// element is read before it is written.
TEST(BinaryKernelTest, InPlaceOutputs) {
  std::mt19937_64 rng(3);
  for (BinaryOp op : kOps) {
    for (DType dtype : DTypesOf(op)) {
      for (int iter = 0; iter < 30; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 6));
        const View out = iter / 3 % 2 == 0 ? ContiguousView(shape) : RandomView(rng, shape, false);
        const Alias alias = iter % 3 == 0 ? Alias::kA : iter % 3 == 1 ? Alias::kB : Alias::kBoth;
        const View other = RandomView(rng, shape, true);
        CheckBinary(rng, op, dtype, alias == Alias::kB ? other : out,
                    alias == Alias::kB ? out : other, out, alias,
                    iter % 2 == 0 ? Values::kBits : Values::kModerate);
        if (::testing::Test::HasFatalFailure()) return;
      }
      // (M,N) += (1,N), (M,N) += (M,1) and (M,N) = (1,N) op (M,N).
      const View m = ContiguousView({9, 33});
      CheckBinary(rng, op, dtype, m, StridedView({9, 33}, {0, 1}), m, Alias::kA);
      CheckBinary(rng, op, dtype, m, StridedView({9, 33}, {1, 0}), m, Alias::kA);
      CheckBinary(rng, op, dtype, StridedView({9, 33}, {0, 1}), m, m, Alias::kB);
    }
  }
}

// Past the parallel threshold: contiguous with a broadcast row or column, random layouts with
// strided outputs, and in place.
TEST(BinaryKernelTest, LargeOutputs) {
  std::mt19937_64 rng(4);
  for (BinaryOp op : kOps) {
    for (DType dtype : DTypesOf(op)) {
      const int64_t min_numel = kLargeBytes / static_cast<int64_t>(element_size(dtype));
      const std::vector<int64_t> shape = {min_numel / 509 + 1, 509};
      const View contiguous = ContiguousView(shape);
      CheckBinary(rng, op, dtype, contiguous, StridedView(shape, {0, 1}), contiguous);
      CheckBinary(rng, op, dtype, StridedView(shape, {1, 0}), contiguous, contiguous);
      CheckBinary(rng, op, dtype, contiguous, StridedView(shape, {0, 1}), contiguous, Alias::kA,
                  Values::kModerate);
      for (int iter = 0; iter < 2; ++iter) {
        const std::vector<int64_t> s = LargeShape(rng, 1 + static_cast<int>(rng() % 4), min_numel);
        CheckBinary(rng, op, dtype, RandomView(rng, s, true), RandomView(rng, s, true),
                    iter == 0 ? ContiguousView(s) : RandomView(rng, s, false), Alias::kNone,
                    Values::kModerate);
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Outputs of 32 MiB or more, which the CPU kernel writes with streaming stores from a staging
// buffer: a broadcast row into an output whose rows start off the 16-byte boundary, and a run of
// 16-bit elements split between threads.
TEST(BinaryKernelTest, OutputsLargeEnoughForStreamingStores) {
  std::mt19937_64 rng(5);
  const std::vector<int64_t> shape = {8192, 1025};  // float32: 33.6 MB
  View offset_out = ContiguousView(shape);
  offset_out.offset = 3;
  offset_out.storage = StorageFor(offset_out) + 5;
  CheckBinary(rng, BinaryOp::kAdd, DType::kFloat32, ContiguousView(shape),
              StridedView(shape, {0, 1}), offset_out, Alias::kNone, Values::kModerate);
  const std::vector<int64_t> flat = {int64_t{17} << 20};  // bfloat16: 35.7 MB
  CheckBinary(rng, BinaryOp::kMul, DType::kBFloat16, ContiguousView(flat), ContiguousView(flat),
              ContiguousView(flat), Alias::kNone, Values::kModerate);
}

// Rows of every length around one and two 16-byte vectors, at every output start within 16
// bytes, with inputs contiguous at their own starts, gapped, or broadcast: the CUDA kernel cuts
// each row at the output's 16-byte boundaries and loads an input's vector only where it is
// aligned alike.
TEST(BinaryKernelTest, RowsOfEveryLengthAtEveryAlignment) {
  std::mt19937_64 rng(6);
  // 0: contiguous rows, 1: rows one element apart, -1: one value per row.
  const int kInputs[][2] = {{0, 0}, {0, -1}, {-1, 0}, {1, 0}, {0, 1}};
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    const BinaryOp op = dtype == DType::kUInt8 ? BinaryOp::kMul : BinaryOp::kDiv;
    const int64_t per = 16 / static_cast<int64_t>(element_size(dtype));
    for (int64_t inner = per - 1; inner <= 2 * per + 1; ++inner) {
      for (int64_t out_offset = 0; out_offset < per; ++out_offset) {
        for (const auto& kinds : kInputs) {
          View out_view = ContiguousView({3, inner});
          out_view.offset = out_offset;
          out_view.storage = StorageFor(out_view);
          View in[2];
          for (int k = 0; k < 2; ++k) {
            in[k] = kinds[k] < 0 ? StridedView({3, inner}, {1, 0})
                                 : StridedView({3, inner}, {inner + kinds[k], 1});
            in[k].offset = static_cast<int64_t>(rng() % per);
            in[k].storage = StorageFor(in[k]);
          }
          CheckBinary(rng, op, dtype, in[0], in[1], out_view, Alias::kNone, Values::kModerate);
          if (::testing::Test::HasFatalFailure()) return;
        }
        View m = ContiguousView({3, inner});
        m.offset = out_offset;
        m.storage = StorageFor(m);
        CheckBinary(rng, op, dtype, m, StridedView({3, inner}, {inner, 1}), m, Alias::kA,
                    Values::kModerate);
      }
    }
  }
}

TEST(BinaryKernelTest, ZeroDimAndTwentyFiveDims) {
  std::mt19937_64 rng(7);
  for (BinaryOp op : kOps) {
    for (DType dtype : DTypesOf(op)) {
      View a = ContiguousView({});
      a.offset = 3;
      a.storage = 4;
      CheckBinary(rng, op, dtype, a, ContiguousView({}), ContiguousView({}));
      CheckBinary(rng, op, dtype, ContiguousView({}), ContiguousView({}), ContiguousView({}),
                  Alias::kA);
      std::vector<int64_t> shape(kMaxDims, 1);
      for (int i = 0; i < 8; ++i) shape[rng() % kMaxDims] = 2;
      CheckBinary(rng, op, dtype, RandomView(rng, shape, true), RandomView(rng, shape, true),
                  RandomView(rng, shape, false));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(BinaryKernelTest, EmptyOutputsWithNullData) {
  for (BinaryOp op : kOps) {
    KernelContext ctx;
    TensorArg a;
    a.shape = Shape({3, 0, 2});
    a.stride = Shape({0, 2, 1});
    ctx.inputs.push_back(a);
    ctx.inputs.push_back(a);
    a.stride = Shape({2, 2, 1});
    ctx.outputs.push_back(a);
    EXPECT_NO_THROW(RunKernel(Name(op), ctx)) << Name(op);
  }
}

// Runs `op` on one-dimensional host vectors of `dtype` (its storage type T).
template <class T>
std::vector<T> RunVectors(BinaryOp op, DType dtype, std::vector<T> a, std::vector<T> b) {
  std::vector<T> out(a.size());
  KernelContext ctx;
  TensorArg arg;
  arg.shape = Shape({static_cast<int64_t>(a.size())});
  arg.stride = Shape({1});
  arg.dtype = dtype;
  arg.data = a.data();
  ctx.inputs.push_back(arg);
  arg.data = b.data();
  ctx.inputs.push_back(arg);
  arg.data = out.data();
  ctx.outputs.push_back(arg);
  RunKernel(Name(op), ctx);
  return out;
}

uint16_t HalfBits(float f) { return float16(f).bits; }
uint16_t BFloatBits(float f) { return bfloat16(f).bits; }

// The float result rounds once to the 16-bit output, to nearest even: exact ties go to the even
// neighbour, overflow becomes infinity, tiny products become subnormals.
TEST(BinaryKernelTest, Float16AndBFloat16RoundOnceToNearestEven) {
  struct Case {
    BinaryOp op;
    float a, b;
    uint16_t expect;
  };
  const float u11 = std::ldexp(1.0f, -11);
  const std::vector<Case> half = {
      // 1 + 2^-11 and 1 + 3 * 2^-11: ties, to the even 1 and 1 + 2^-9.
      {BinaryOp::kAdd, 1.0f, u11, 0x3c00},
      {BinaryOp::kAdd, 1.0f, 3 * u11, 0x3c02},
      // 65520: a tie just past the largest half, so infinity; 65512 rounds down to 65504.
      {BinaryOp::kAdd, 65504.0f, 16.0f, 0x7c00},
      {BinaryOp::kAdd, 65504.0f, 8.0f, 0x7bff},
      {BinaryOp::kSub, -65504.0f, 32.0f, 0xfc00},
      // Subnormal products: 2^-19; 2^-25, a tie to 0; 1.5 * 2^-24, a tie to the even 2^-23.
      {BinaryOp::kMul, std::ldexp(1.0f, -14), std::ldexp(1.0f, -5), 0x0020},
      {BinaryOp::kMul, std::ldexp(1.0f, -14), std::ldexp(1.0f, -11), 0x0000},
      {BinaryOp::kMul, 3 * std::ldexp(1.0f, -13), std::ldexp(1.0f, -12), 0x0002},
      {BinaryOp::kDiv, 1.0f, 3.0f, 0x3555},
      {BinaryOp::kDiv, 2.0f, 3.0f, 0x3955},
  };
  for (const Case& c : half) {
    const std::vector<uint16_t> out = RunVectors<uint16_t>(
        c.op, DType::kFloat16, {HalfBits(c.a), HalfBits(c.a)}, {HalfBits(c.b), HalfBits(c.b)});
    EXPECT_EQ(out[0], c.expect) << Name(c.op) << " " << c.a << " " << c.b;
    EXPECT_EQ(out[1], c.expect);
  }
  const float u8 = std::ldexp(1.0f, -8);
  const std::vector<Case> bf = {
      {BinaryOp::kAdd, 1.0f, u8, 0x3f80},                    // a tie, to even 1
      {BinaryOp::kAdd, 1.0f, 3 * u8, 0x3f82},                // a tie, to even 1 + 2^-6
      {BinaryOp::kSub, 1.0f, std::ldexp(1.0f, -9), 0x3f80},  // 1 - 2^-9: a tie, to even 1
      {BinaryOp::kMul, 3.0f, 3.0f, 0x4110},
      {BinaryOp::kDiv, 1.0f, 3.0f, 0x3eab},
      {BinaryOp::kMul, std::ldexp(1.0f, 100), std::ldexp(1.0f, 100), 0x7f80},  // infinity
  };
  for (const Case& c : bf) {
    const std::vector<uint16_t> out =
        RunVectors<uint16_t>(c.op, DType::kBFloat16, {BFloatBits(c.a)}, {BFloatBits(c.b)});
    EXPECT_EQ(out[0], c.expect) << Name(c.op) << " " << c.a << " " << c.b;
  }
}

TEST(BinaryKernelTest, FloatDivisionByZeroAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> out =
      RunVectors<float>(BinaryOp::kDiv, DType::kFloat32, {1.0f, -1.0f, 0.0f, nan, inf, 1.0f},
                        {0.0f, 0.0f, 0.0f, 1.0f, inf, -0.0f});
  EXPECT_EQ(out[0], inf);
  EXPECT_EQ(out[1], -inf);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_TRUE(std::isnan(out[4]));
  EXPECT_EQ(out[5], -inf);
  const std::vector<double> d =
      RunVectors<double>(BinaryOp::kAdd, DType::kFloat64, {1e308, -1e308}, {1e308, -1e308});
  EXPECT_EQ(d[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[1], -std::numeric_limits<double>::infinity());
}

TEST(BinaryKernelTest, IntegersWrapAround) {
  EXPECT_EQ(RunVectors<int8_t>(BinaryOp::kAdd, DType::kInt8, {127, -128}, {1, -1}),
            (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(RunVectors<int8_t>(BinaryOp::kMul, DType::kInt8, {-128, 16}, {-1, 16}),
            (std::vector<int8_t>{-128, 0}));
  EXPECT_EQ(RunVectors<uint8_t>(BinaryOp::kSub, DType::kUInt8, {0, 5}, {1, 250}),
            (std::vector<uint8_t>{255, 11}));
  EXPECT_EQ(RunVectors<uint8_t>(BinaryOp::kMul, DType::kUInt8, {255, 16}, {255, 17}),
            (std::vector<uint8_t>{1, 16}));
  EXPECT_EQ(RunVectors<int16_t>(BinaryOp::kMul, DType::kInt16, {-32768, 300}, {-1, 300}),
            (std::vector<int16_t>{-32768, 24464}));
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(RunVectors<int32_t>(BinaryOp::kSub, DType::kInt32, {i32min, i32max}, {1, -1}),
            (std::vector<int32_t>{i32max, i32min}));
  EXPECT_EQ(RunVectors<int32_t>(BinaryOp::kMul, DType::kInt32, {65536, i32min}, {65536, -1}),
            (std::vector<int32_t>{0, i32min}));
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(RunVectors<int64_t>(BinaryOp::kAdd, DType::kInt64, {i64max, i64min}, {1, -1}),
            (std::vector<int64_t>{i64min, i64max}));
  EXPECT_EQ(RunVectors<int64_t>(BinaryOp::kMul, DType::kInt64, {int64_t{1} << 32, i64min},
                                {int64_t{1} << 32, -1}),
            (std::vector<int64_t>{0, i64min}));
}

// ---- Argument errors: InvalidArgument at the call, before anything is touched, with the same
// text on every device.

// Runs `op` expecting InvalidArgument whose message contains `part`; the output buffer must be
// untouched.
void ExpectRefused(const std::string& op, const KernelContext& ctx, const std::string& part,
                   const std::vector<float>& out_before, const std::vector<float>& out) {
  try {
    RunKernel(op, ctx);
    ADD_FAILURE() << op << ": no error, expected one containing '" << part << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::memcmp(out.data(), out_before.data(), out.size() * sizeof(float)), 0);
}

// Three (2,3) float32 operands; the buffers have room for 8-byte elements, as a device copies
// what a case with another dtype reaches.
constexpr size_t kErrorFloats = 12;

std::vector<float> Untouched() { return std::vector<float>(kErrorFloats, 7.0f); }

struct ErrorCase {
  std::vector<float> a = std::vector<float>(kErrorFloats, 1.0f);
  std::vector<float> b = std::vector<float>(kErrorFloats, 2.0f);
  std::vector<float> out = Untouched();
  KernelContext ctx;
  ErrorCase() {
    TensorArg t;
    t.shape = Shape({2, 3});
    t.stride = Shape({3, 1});
    t.dtype = DType::kFloat32;
    t.data = a.data();
    ctx.inputs.push_back(t);
    t.data = b.data();
    ctx.inputs.push_back(t);
    t.data = out.data();
    ctx.outputs.push_back(t);
  }
};

TEST(BinaryKernelTest, ShapesThatDifferThrowNamingBoth) {
  for (BinaryOp op : kOps) {
    SCOPED_TRACE(Name(op));
    {
      ErrorCase c;
      c.ctx.inputs[1].shape = Shape({3, 2});
      c.ctx.inputs[1].stride = Shape({2, 1});
      ExpectRefused(Name(op), c.ctx,
                    Name(op) + ": input a shape (2,3) differs from input b shape (3,2)",
                    Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.outputs[0].shape = Shape({6});
      c.ctx.outputs[0].stride = Shape({1});
      ExpectRefused(Name(op), c.ctx, Name(op) + ": output shape (6) differs from input shape (2,3)",
                    Untouched(), c.out);
    }
  }
}

TEST(BinaryKernelTest, DTypesThatDifferThrowNamingBoth) {
  for (BinaryOp op : kOps) {
    SCOPED_TRACE(Name(op));
    {
      ErrorCase c;
      c.ctx.inputs[1].dtype = DType::kInt32;
      ExpectRefused(Name(op), c.ctx,
                    Name(op) + ": input a dtype float32 differs from input b dtype int32",
                    Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.outputs[0].dtype = DType::kFloat64;
      ExpectRefused(Name(op), c.ctx,
                    Name(op) + ": output dtype float64 differs from input dtype float32",
                    Untouched(), c.out);
    }
  }
}

TEST(BinaryKernelTest, OperandCountsOtherThanTwoInputsAndOneOutputThrow) {
  for (BinaryOp op : kOps) {
    SCOPED_TRACE(Name(op));
    const std::string expects = Name(op) + ": the kernel expects 2 inputs and 1 output, got ";
    {
      ErrorCase c;
      c.ctx.inputs.pop_back();
      ExpectRefused(Name(op), c.ctx, expects + "1 and 1", Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.inputs.clear();
      ExpectRefused(Name(op), c.ctx, expects + "0 and 1", Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.inputs.push_back(c.ctx.inputs[0]);
      ExpectRefused(Name(op), c.ctx, expects + "3 and 1", Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.outputs.push_back(c.ctx.outputs[0]);
      ExpectRefused(Name(op), c.ctx, expects + "2 and 2", Untouched(), c.out);
    }
    {
      ErrorCase c;
      c.ctx.outputs.clear();
      ExpectRefused(Name(op), c.ctx, expects + "2 and 0", Untouched(), c.out);
    }
  }
}

TEST(BinaryKernelTest, StrideCountsOtherThanTheRankThrowNamingTheOperand) {
  for (BinaryOp op : kOps) {
    for (int which = 0; which < 3; ++which) {
      ErrorCase c;
      TensorArg& t = which < 2 ? c.ctx.inputs[which] : c.ctx.outputs[0];
      t.stride = Shape({1});
      const char* name = which == 0 ? "input a" : which == 1 ? "input b" : "output";
      ExpectRefused(Name(op), c.ctx,
                    Name(op) + ": " + name + " has 1 stride(s) for shape (2,3) of 2 dim(s)",
                    Untouched(), c.out);
    }
  }
}

TEST(BinaryKernelTest, BoolThrows) {
  for (BinaryOp op : kOps) {
    ErrorCase c;
    for (TensorArg& t : c.ctx.inputs) t.dtype = DType::kBool;
    c.ctx.outputs[0].dtype = DType::kBool;
    ExpectRefused(Name(op), c.ctx, Name(op) + ": dtype bool is not supported", Untouched(), c.out);
  }
}

TEST(BinaryKernelTest, IntegerDivisionThrowsNamingTheDType) {
  for (DType dtype : AllDTypes()) {
    if (dtype == DType::kBool || IsFloat(dtype)) continue;
    ErrorCase c;
    for (TensorArg& t : c.ctx.inputs) t.dtype = dtype;
    c.ctx.outputs[0].dtype = dtype;
    ExpectRefused(
        "div", c.ctx,
        "div: integer dtype " + to_string(dtype) + " is not supported (no integer division",
        Untouched(), c.out);
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
