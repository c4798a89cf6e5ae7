// The "softmax" and "log_softmax" kernels of the device in OFL_TEST_DEVICE (the CPU's when unset;
// sim, and the CUDA kernels on the host grid) against a reference computed here in long double:
// every float dtype and every dim of random shapes and layouts (permuted and gapped inputs,
// strided outputs), large values (the max shift), rows with -inf, +inf and NaN (PyTorch's results),
// a large input (the parallel path), and the argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/softmax.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Attrs DimAttrs(const char* op, int64_t dim) {
  return Attrs(KernelAttrSchema(op, {"dim", AttrType::kInt}), dim);
}

double Tolerance(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat32:
      return 2e-6;
    default:
      return 1e-14;
  }
}

// Runs op over `values` laid out in in_view (row-major order of the shape) and checks each output.
void CheckOne(std::mt19937_64& rng, bool is_log, DType dtype, const std::vector<int64_t>& shape,
              int dim, const View& in_view, const std::vector<double>& values, bool strided_out) {
  const char* op = is_log ? "log_softmax" : "softmax";
  SCOPED_TRACE(std::string(op) + " " + to_string(dtype) + " dim " + std::to_string(dim) + ", in " +
               Describe(in_view));
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  Buffer in = RandomBuffer(rng, in_view.storage, static_cast<size_t>(es));
  const View out_view = strided_out ? RandomView(rng, shape, false) : ContiguousView(shape);
  Buffer out = RandomBuffer(rng, out_view.storage, static_cast<size_t>(es));
  IndexWalker w(shape);
  const int64_t numel = Numel(shape);
  for (int64_t p = 0; p < numel; ++p, w.Next()) {
    StoreDouble(in.data() + OffsetOf(in_view, w.index()) * es, dtype,
                values[static_cast<size_t>(p)]);
  }
  KernelContext ctx;
  ctx.attributes = DimAttrs(op, dim);
  ctx.inputs.push_back(Arg(in, in_view, dtype));
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  RunKernel(op, ctx);
  const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
  IndexWalker walker(shape);
  for (int64_t p = 0; p < numel; ++p, walker.Next()) {
    std::vector<int64_t> at = walker.index();
    const long double v = LoadAsDouble(in.data() + OffsetOf(in_view, at) * es, dtype);
    long double m = -kInf;
    int pos_inf = 0;
    bool nan = false;
    std::vector<long double> row;
    for (int64_t k = 0; k < n; ++k) {
      if (!at.empty()) at[static_cast<size_t>(dim)] = k;
      const long double x = LoadAsDouble(in.data() + OffsetOf(in_view, at) * es, dtype);
      row.push_back(x);
      nan |= std::isnan(x);
      pos_inf += x == kInf;
      if (x > m) m = x;
    }
    long double s = 0;
    for (long double x : row) s += std::exp(x - m);
    long double want = is_log ? v - m - std::log(s) : std::exp(v - m) / s;
    // PyTorch's results where the shift leaves inf - inf: NaN (a NaN or a +inf in the row, a row of
    // -inf only).
    if (nan || pos_inf > 0 || m == -kInf) want = kNaN;
    const double got = LoadAsDouble(out.data() + OffsetOf(out_view, walker.index()) * es, dtype);
    if (std::isnan(static_cast<double>(want))) {
      ASSERT_TRUE(std::isnan(got)) << "element " << p << " got " << got;
    } else if (std::isinf(static_cast<double>(want))) {
      ASSERT_EQ(got, static_cast<double>(want)) << "element " << p;
    } else {
      ASSERT_NEAR(got, static_cast<double>(want),
                  Tolerance(dtype) * std::max(1.0, std::fabs(static_cast<double>(want))))
          << "element " << p;
    }
  }
}

const std::vector<DType>& FloatDTypes() {
  static const std::vector<DType> d = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                       DType::kFloat64};
  return d;
}

TEST(SoftmaxKernelTest, EveryFloatDTypeAndDimOnRandomLayouts) {
  std::mt19937_64 rng(51);
  for (bool is_log : {false, true}) {
    for (DType dtype : FloatDTypes()) {
      for (int iter = 0; iter < 10; ++iter) {
        const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 5));
        const int dim = shape.empty() ? 0 : static_cast<int>(rng() % shape.size());
        std::vector<double> values(static_cast<size_t>(Numel(shape)));
        std::uniform_real_distribution<double> dist(-4, 4);
        for (double& v : values) v = dist(rng) + (iter % 3 == 0 ? 1000 : 0);  // large: the shift
        CheckOne(rng, is_log, dtype, shape, dim, RandomView(rng, shape, /*broadcast=*/true), values,
                 iter % 2 == 1);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(SoftmaxKernelTest, InfinitiesAndNaNsGivePyTorchsResults) {
  std::mt19937_64 rng(52);
  const std::vector<int64_t> shape = {6, 3};
  const std::vector<double> values = {-kInf, 1,     2,      // a -inf element gives 0 (log: -inf)
                                      -kInf, -kInf, -kInf,  // only -inf: NaN
                                      kInf,  1,     2,      // a +inf: NaN
                                      kInf,  kInf,  0,      // two +inf: NaN
                                      kNaN,  1,     2,      // a NaN: NaN
                                      3,     3,     3};     // ties: equal shares
  for (bool is_log : {false, true}) {
    for (DType dtype : FloatDTypes()) {
      CheckOne(rng, is_log, dtype, shape, 1, ContiguousView(shape), values, false);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(SoftmaxKernelTest, LargeInputs) {
  std::mt19937_64 rng(53);
  const std::vector<int64_t> shape = {301, 257};
  std::vector<double> values(static_cast<size_t>(Numel(shape)));
  std::uniform_real_distribution<double> dist(-10, 10);
  for (double& v : values) v = dist(rng);
  CheckOne(rng, false, DType::kFloat32, shape, 1, ContiguousView(shape), values, false);
  CheckOne(rng, true, DType::kFloat64, shape, 0, StridedView(shape, {1, 301}), values, true);
}

TEST(SoftmaxKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(54);
  Buffer in = RandomBuffer(rng, 64, 8), out = RandomBuffer(rng, 64, 8);
  auto ctx_for = [&](const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape,
                     DType in_dtype, DType out_dtype, int64_t dim) {
    KernelContext ctx;
    ctx.attributes = DimAttrs("softmax", dim);
    ctx.inputs.push_back(Arg(in, ContiguousView(in_shape), in_dtype));
    ctx.outputs.push_back(Arg(out, ContiguousView(out_shape), out_dtype));
    return ctx;
  };
  auto expect_error = [&](const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel("softmax", ctx);
      ADD_FAILURE() << "no error, expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(ctx_for({2, 3}, {2, 3}, DType::kFloat32, DType::kFloat32, 2),
               "softmax: dim 2 is out of range for a 2-dim tensor (expected -2 to 1)");
  expect_error(ctx_for({2, 3}, {2, 3}, DType::kInt32, DType::kInt32, 1),
               "softmax: dtype int32 is not supported (a float dtype is)");
  expect_error(ctx_for({2, 3}, {2, 3}, DType::kFloat32, DType::kFloat64, 1),
               "softmax: output dtype float64 differs from input dtype float32");
  expect_error(ctx_for({2, 3}, {3, 2}, DType::kFloat32, DType::kFloat32, 1),
               "softmax: output shape (3,2) differs from input shape (2,3)");
}

}  // namespace
}  // namespace ofl::kernels::testing
