// The "reduce_sum_to" kernel of the device in OFL_TEST_DEVICE (the CPU's when unset) against an
// element-by-element reference (double sums for floats, wrapping 64-bit sums for integers): random
// shapes, reduced dims and input layouts, every dtype, tiny and parallel sizes, empty sums, bool
// rejection and bitwise determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

// Writes test values into every element of the input storage. Float values are multiples of 1/8
// below 8 in magnitude: exact in every float dtype, and their sums stay exact in float until the
// output's own rounding, so the float tolerance only has to cover that rounding.
void FillValues(std::mt19937_64& rng, Buffer* b, int64_t elems, DType dtype) {
  const size_t es = element_size(dtype);
  for (int64_t i = 0; i < elems; ++i) {
    char* p = b->data() + i * static_cast<int64_t>(es);
    if (IsFloat(dtype)) {
      StoreDouble(p, dtype, (static_cast<double>(rng() % 129) - 64.0) / 8.0);
    } else {
      const uint64_t v = rng();  // the full range: integer sums must wrap like the hardware
      std::memcpy(p, &v, es);
    }
  }
}

int64_t LoadAsInt(const char* p, DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt16:
      return *reinterpret_cast<const int16_t*>(p);
    case DType::kInt32:
      return *reinterpret_cast<const int32_t*>(p);
    case DType::kInt64:
      return *reinterpret_cast<const int64_t*>(p);
    default:
      ADD_FAILURE() << "not an integer dtype";
      return 0;
  }
}

struct Reference {
  std::vector<double> sums;        // float dtypes
  std::vector<double> abs_sums;    // sum of |x|, for tolerances
  std::vector<uint64_t> int_sums;  // integer dtypes, modulo 2^64
};

// Adds every input element into the output element it maps to (its index with summed dims set
// to 0).
Reference ReferenceSum(const Buffer& in, const View& in_view, const std::vector<int64_t>& out_shape,
                       DType dtype) {
  const size_t es = element_size(dtype);
  const int64_t out_numel = Numel(out_shape);
  Reference r;
  r.sums.assign(out_numel, 0.0);
  r.abs_sums.assign(out_numel, 0.0);
  r.int_sums.assign(out_numel, 0);
  const int64_t in_numel = Numel(in_view.shape);
  IndexWalker walker(in_view.shape);
  for (int64_t i = 0; i < in_numel; ++i, walker.Next()) {
    const std::vector<int64_t>& idx = walker.index();
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o = o * out_shape[d] + (out_shape[d] == 1 ? 0 : idx[d]);
    const char* p = in.data() + OffsetOf(in_view, idx) * static_cast<int64_t>(es);
    if (IsFloat(dtype)) {
      const double v = LoadAsDouble(p, dtype);
      r.sums[o] += v;
      r.abs_sums[o] += std::fabs(v);
    } else {
      r.int_sums[o] += static_cast<uint64_t>(LoadAsInt(p, dtype));
    }
  }
  return r;
}

// Relative rounding of one conversion into the output dtype.
double OutputEpsilon(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return std::ldexp(1.0, -11);
    case DType::kBFloat16:
      return std::ldexp(1.0, -8);
    case DType::kFloat32:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -53);
  }
}

KernelContext MakeContext(Buffer& in, const View& in_view, Buffer& out, const View& out_view,
                          DType dtype) {
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in, in_view, dtype));
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  return ctx;
}

void CheckReduce(std::mt19937_64& rng, DType dtype, const View& in_view,
                 const std::vector<int64_t>& out_shape) {
  SCOPED_TRACE("dtype " + to_string(dtype) + ", in " + Describe(in_view) + ", out shape " +
               ToString(out_shape));
  const size_t es = element_size(dtype);
  Buffer in = RandomBuffer(rng, in_view.storage, es);
  FillValues(rng, &in, in_view.storage, dtype);
  const View out_view = ContiguousView(out_shape);
  Buffer out = RandomBuffer(rng, out_view.storage, es);
  const Buffer before = out;
  const Reference ref = ReferenceSum(in, in_view, out_shape, dtype);
  KernelContext ctx = MakeContext(in, in_view, out, out_view, dtype);
  RunKernel("reduce_sum_to", ctx);
  const int64_t out_numel = Numel(out_shape);
  for (int64_t i = 0; i < out_numel; ++i) {
    const char* p = out.data() + i * static_cast<int64_t>(es);
    if (IsFloat(dtype)) {
      const double got = LoadAsDouble(p, dtype);
      const double tol = OutputEpsilon(dtype) * std::fabs(ref.sums[i]) + 1e-12;
      ASSERT_NEAR(got, ref.sums[i], tol) << "output element " << i;
    } else {
      uint64_t expected_bits = ref.int_sums[i];
      uint64_t got_bits = 0;
      std::memcpy(&got_bits, p, es);
      if (es < 8) expected_bits &= (uint64_t{1} << (8 * es)) - 1;
      ASSERT_EQ(got_bits, expected_bits) << "output element " << i;
    }
  }
  // Nothing written past the output.
  ASSERT_EQ(std::memcmp(out.data() + out.bytes, before.data() + out.bytes,
                        out.words.size() * 8 - out.bytes),
            0);
}

// A random output shape: each dim kept or summed (set to 1).
std::vector<int64_t> RandomTarget(std::mt19937_64& rng, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = shape;
  for (int64_t& d : out) {
    if (rng() % 2 == 0) d = 1;
  }
  return out;
}

std::vector<DType> SummableDTypes() {
  std::vector<DType> all;
  for (DType d : AllDTypes()) {
    if (d != DType::kBool) all.push_back(d);
  }
  return all;
}

TEST(ReduceSumToKernelTest, RandomSmallEveryDType) {
  std::mt19937_64 rng(21);
  for (DType dtype : SummableDTypes()) {
    for (int iter = 0; iter < 300; ++iter) {
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 7));
      CheckReduce(rng, dtype, RandomView(rng, shape, /*broadcast=*/true), RandomTarget(rng, shape));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(ReduceSumToKernelTest, RandomLargeEveryDType) {
  std::mt19937_64 rng(22);
  for (DType dtype : SummableDTypes()) {
    const int64_t min_numel = kLargeBytes / static_cast<int64_t>(element_size(dtype));
    for (int iter = 0; iter < 5; ++iter) {
      const std::vector<int64_t> shape =
          LargeShape(rng, 2 + static_cast<int>(rng() % 3), min_numel);
      CheckReduce(rng, dtype, RandomView(rng, shape, true), RandomTarget(rng, shape));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(ReduceSumToKernelTest, LargeSpecificLayouts) {
  std::mt19937_64 rng(23);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                      DType::kInt8, DType::kInt64}) {
    // Backward of an outer expand (columns), of an inner expand (contiguous runs), a middle dim,
    // everything, and a transposed input.
    CheckReduce(rng, dtype, ContiguousView({700, 513}), {1, 513});
    CheckReduce(rng, dtype, ContiguousView({700, 513}), {700, 1});
    CheckReduce(rng, dtype, ContiguousView({40, 90, 33}), {40, 1, 33});
    CheckReduce(rng, dtype, ContiguousView({40, 90, 33}), {1, 1, 1});
    View transposed = ContiguousView({300, 400});
    transposed.stride = {1, 300};
    CheckReduce(rng, dtype, transposed, {1, 400});
    CheckReduce(rng, dtype, transposed, {300, 1});
  }
}

TEST(ReduceSumToKernelTest, ScalarAndTwentyFiveDims) {
  std::mt19937_64 rng(24);
  for (DType dtype : SummableDTypes()) {
    CheckReduce(rng, dtype, ContiguousView({}), {});
    std::vector<int64_t> shape(kMaxDims, 1);
    for (int i = 0; i < 10; ++i) shape[rng() % kMaxDims] = 2 + static_cast<int64_t>(rng() % 2);
    for (int iter = 0; iter < 5; ++iter) {
      CheckReduce(rng, dtype, RandomView(rng, shape, true), RandomTarget(rng, shape));
    }
  }
}

TEST(ReduceSumToKernelTest, NothingToSumIsACopy) {
  std::mt19937_64 rng(25);
  const std::vector<int64_t> shape = {5, 1, 7};
  for (DType dtype : SummableDTypes()) CheckReduce(rng, dtype, RandomView(rng, shape, true), shape);
}

TEST(ReduceSumToKernelTest, EmptySumGivesZeros) {
  for (DType dtype : SummableDTypes()) {
    SCOPED_TRACE(to_string(dtype));
    const size_t es = element_size(dtype);
    std::vector<uint64_t> out(13, ~uint64_t{0});  // one word more than any dtype needs
    KernelContext ctx;
    TensorArg a;
    a.shape = Shape({3, 0, 4});
    a.stride = Shape({4, 4, 1});
    a.dtype = dtype;
    ctx.inputs.push_back(a);
    a.data = out.data();
    a.shape = Shape({3, 1, 4});
    ctx.outputs.push_back(a);
    RunKernel("reduce_sum_to", ctx);
    std::vector<char> zeros(12 * es, 0);
    EXPECT_EQ(std::memcmp(out.data(), zeros.data(), zeros.size()), 0);
    EXPECT_EQ(reinterpret_cast<const char*>(out.data())[12 * es], static_cast<char>(0xff));
  }
}

TEST(ReduceSumToKernelTest, EmptyOutputDoesNothing) {
  KernelContext ctx;
  TensorArg a;
  a.shape = Shape({0, 4});
  a.stride = Shape({4, 1});
  ctx.inputs.push_back(a);
  a.shape = Shape({0, 1});
  a.stride = Shape({1, 1});
  ctx.outputs.push_back(a);
  EXPECT_NO_THROW(RunKernel("reduce_sum_to", ctx));
}

TEST(ReduceSumToKernelTest, IntegerSumsWrap) {
  std::vector<int8_t> in = {100, 100, -50, 120};
  std::vector<int8_t> out(1);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({4});
  a.stride = Shape({1});
  a.dtype = DType::kInt8;
  ctx.inputs.push_back(a);
  a.data = out.data();
  a.shape = Shape({1});
  ctx.outputs.push_back(a);
  RunKernel("reduce_sum_to", ctx);
  EXPECT_EQ(out[0], static_cast<int8_t>(270 - 256));
}

TEST(ReduceSumToKernelTest, BoolThrowsInvalidArgument) {
  uint8_t in[4] = {1, 0, 1, 1};
  uint8_t out[1] = {0};
  KernelContext ctx;
  TensorArg a;
  a.data = in;
  a.shape = Shape({4});
  a.stride = Shape({1});
  a.dtype = DType::kBool;
  ctx.inputs.push_back(a);
  a.data = out;
  a.shape = Shape({1});
  ctx.outputs.push_back(a);
  try {
    RunKernel("reduce_sum_to", ctx);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("reduce_sum_to: dtype bool is not supported"),
              std::string::npos)
        << e.what();
  }
}

TEST(ReduceSumToKernelTest, IncompatibleShapesThrow) {
  std::vector<float> in(6), out(4);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({2, 3});
  a.stride = Shape({3, 1});
  ctx.inputs.push_back(a);
  a.data = out.data();
  a.shape = Shape({2, 2});
  a.stride = Shape({2, 1});
  ctx.outputs.push_back(a);
  EXPECT_THROW(RunKernel("reduce_sum_to", ctx), InvalidArgument);
  ctx.outputs[0].shape = Shape({2});
  ctx.outputs[0].stride = Shape({1});
  EXPECT_THROW(RunKernel("reduce_sum_to", ctx), InvalidArgument);
}

// Arbitrary (non-dyadic) values: sums round, so compare against the error bound of a double
// accumulation (every float dtype's), n * 2^-53 * sum|x|, plus the output's rounding.
TEST(ReduceSumToKernelTest, GeneralFloatValuesWithinErrorBound) {
  std::mt19937_64 rng(26);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const auto& [shape, target] :
         std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{300, 200}, {1, 200}}, {{300, 200}, {300, 1}}, {{17, 31, 9}, {1, 31, 1}}}) {
      SCOPED_TRACE(to_string(dtype) + " " + ToString(shape) + " -> " + ToString(target));
      const size_t es = element_size(dtype);
      const View in_view = ContiguousView(shape);
      Buffer in = RandomBuffer(rng, in_view.storage, es);
      for (int64_t i = 0; i < in_view.storage; ++i) {
        StoreDouble(in.data() + i * static_cast<int64_t>(es), dtype, dist(rng));
      }
      const View out_view = ContiguousView(target);
      Buffer out = RandomBuffer(rng, out_view.storage, es);
      const Reference ref = ReferenceSum(in, in_view, target, dtype);
      KernelContext ctx = MakeContext(in, in_view, out, out_view, dtype);
      RunKernel("reduce_sum_to", ctx);
      const double terms = static_cast<double>(Numel(shape) / Numel(target));
      const double acc_eps = std::ldexp(1.0, -53);
      for (int64_t i = 0; i < Numel(target); ++i) {
        const double got = LoadAsDouble(out.data() + i * static_cast<int64_t>(es), dtype);
        const double tol = terms * acc_eps * ref.abs_sums[i] +
                           OutputEpsilon(dtype) * (std::fabs(ref.sums[i]) + 1e-3);
        ASSERT_NEAR(got, ref.sums[i], tol) << "output element " << i;
      }
    }
  }
}

TEST(ReduceSumToKernelTest, LargeFloatSumIsBitwiseDeterministic) {
  std::mt19937_64 rng(27);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::vector<int64_t> shape = {1500, 700};
  std::vector<float> in(1500 * 700);
  for (float& x : in) x = dist(rng);
  for (const std::vector<int64_t>& target :
       {std::vector<int64_t>{1, 700}, std::vector<int64_t>{1500, 1}, std::vector<int64_t>{1, 1}}) {
    // Different initial contents: a run whose output never arrives (a lost copy back from a
    // device) must not pass as two equal runs.
    std::vector<float> first(static_cast<size_t>(Numel(target)), -1.0f);
    std::vector<float> second(first.size(), -2.0f);
    for (std::vector<float>* out : {&first, &second}) {
      KernelContext ctx;
      TensorArg a;
      a.data = in.data();
      a.shape = Shape(shape);
      a.stride = Shape({700, 1});
      ctx.inputs.push_back(a);
      a.data = out->data();
      a.shape = Shape(target);
      a.stride = Shape(ContiguousView(target).stride);
      ctx.outputs.push_back(a);
      RunKernel("reduce_sum_to", ctx);
    }
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
        << ToString(target);
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
