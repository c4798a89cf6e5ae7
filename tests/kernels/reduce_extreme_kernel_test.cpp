// The "max_dim" and "min_dim" kernels of the device in OFL_TEST_DEVICE (the CPU's when unset; sim,
// and the CUDA kernels on the host grid) against a reference scan written here: every dtype, every
// dim of random shapes and layouts (broadcast, permuted and gapped inputs, strided outputs), values
// with many ties and NaNs (the first index among ties, the first NaN wins), a large input (the
// parallel path), and the argument errors.
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

Attrs DimAttrs(const char* op, int64_t dim) {
  return Attrs(KernelAttrSchema(op, {"dim", AttrType::kInt}), dim);
}

double Value(const char* p, DType d) { return static_cast<double>(ExactValue(p, d)); }

void Store(char* p, DType d, double v) {
  switch (d) {
    case DType::kBool:
      *reinterpret_cast<uint8_t*>(p) = v != 0;
      return;
    case DType::kUInt8:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v < 0 ? -v : v);
      return;
    case DType::kInt8:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(v);
      return;
    case DType::kInt16: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(p, &x, 2);
      return;
    }
    case DType::kInt32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::kInt64: {
      const auto x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      return;
    }
    default:
      StoreDouble(p, d, v);
  }
}

void CheckOne(std::mt19937_64& rng, bool is_max, DType dtype, const std::vector<int64_t>& shape,
              int dim, const View& in_view, bool strided_out) {
  const char* op = is_max ? "max_dim" : "min_dim";
  std::vector<int64_t> keep = shape;
  if (!keep.empty()) keep[static_cast<size_t>(dim)] = 1;
  SCOPED_TRACE(std::string(op) + " " + to_string(dtype) + " dim " + std::to_string(dim) + ", in " +
               Describe(in_view));
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  Buffer in = RandomBuffer(rng, in_view.storage, static_cast<size_t>(es));
  for (int64_t i = 0; i < in_view.storage; ++i) {
    const uint64_t r = rng() % 16;
    double v = static_cast<double>(static_cast<int64_t>(rng() % 7) - 3);  // many ties
    if (r == 0 && IsFloat(dtype)) v = std::numeric_limits<double>::quiet_NaN();
    if (r == 1 && IsFloat(dtype)) v = -std::numeric_limits<double>::infinity();
    Store(in.data() + i * es, dtype, v);
  }
  const View vals_view = strided_out ? RandomView(rng, keep, false) : ContiguousView(keep);
  const View idx_view = ContiguousView(keep);
  Buffer vals = RandomBuffer(rng, vals_view.storage, static_cast<size_t>(es));
  Buffer idx = RandomBuffer(rng, idx_view.storage, 8);
  KernelContext ctx;
  ctx.attributes = DimAttrs(op, dim);
  ctx.inputs.push_back(Arg(in, in_view, dtype));
  ctx.outputs.push_back(Arg(vals, vals_view, dtype));
  ctx.outputs.push_back(Arg(idx, idx_view, DType::kInt64));
  RunKernel(op, ctx);
  const int64_t n = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
  IndexWalker walker(keep);
  for (int64_t p = 0, count = Numel(keep); p < count; ++p, walker.Next()) {
    std::vector<int64_t> at = walker.index();
    int64_t best_k = 0;
    double best = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (!at.empty()) at[static_cast<size_t>(dim)] = k;
      const double v = Value(in.data() + OffsetOf(in_view, at) * es, dtype);
      const bool better =
          k == 0 || (std::isnan(v) && !std::isnan(best)) || (is_max ? v > best : v < best);
      if (better) {
        best = v;
        best_k = k;
      }
    }
    int64_t got_k = 0;
    std::memcpy(&got_k, idx.data() + OffsetOf(idx_view, walker.index()) * 8, 8);
    ASSERT_EQ(got_k, best_k) << "position " << p;
    const double got = Value(vals.data() + OffsetOf(vals_view, walker.index()) * es, dtype);
    if (std::isnan(best)) {
      ASSERT_TRUE(std::isnan(got)) << "position " << p;
    } else {
      ASSERT_EQ(got, best) << "position " << p;
    }
  }
}

TEST(ReduceExtremeKernelTest, EveryDTypeAndDimOnRandomLayouts) {
  std::mt19937_64 rng(31);
  for (bool is_max : {true, false}) {
    for (DType dtype : AllDTypes()) {
      for (int iter = 0; iter < 10; ++iter) {
        std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 5));
        for (int64_t& s : shape) s = s == 0 ? 1 : s;  // no empty reduced dim
        const int dim = shape.empty() ? 0 : static_cast<int>(rng() % shape.size());
        CheckOne(rng, is_max, dtype, shape, dim, RandomView(rng, shape, /*broadcast=*/true),
                 iter % 2 == 1);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(ReduceExtremeKernelTest, LargeInputs) {
  std::mt19937_64 rng(32);
  const std::vector<int64_t> shape = {257, 301};
  CheckOne(rng, true, DType::kFloat32, shape, 1, ContiguousView(shape), false);
  CheckOne(rng, false, DType::kInt16, shape, 0, ContiguousView(shape), false);
  CheckOne(rng, true, DType::kFloat64, shape, 0, StridedView(shape, {1, 257}), true);
}

TEST(ReduceExtremeKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(3);
  Buffer in = RandomBuffer(rng, 64, 8), vals = RandomBuffer(rng, 64, 8),
         idx = RandomBuffer(rng, 64, 8);
  auto ctx_for = [&](const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape,
                     DType idx_dtype, int64_t dim) {
    KernelContext ctx;
    ctx.attributes = DimAttrs("max_dim", dim);
    ctx.inputs.push_back(Arg(in, ContiguousView(in_shape), DType::kFloat32));
    ctx.outputs.push_back(Arg(vals, ContiguousView(out_shape), DType::kFloat32));
    ctx.outputs.push_back(Arg(idx, ContiguousView(out_shape), idx_dtype));
    return ctx;
  };
  auto expect_error = [&](const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel("max_dim", ctx);
      ADD_FAILURE() << "no error, expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(ctx_for({2, 3}, {2, 1}, DType::kInt64, 2),
               "max_dim: dim 2 is out of range for a 2-dim tensor (expected -2 to 1)");
  expect_error(ctx_for({2, 0}, {2, 1}, DType::kInt64, 1),
               "max_dim: the input has no elements along dim 1 (shape (2,0))");
  expect_error(ctx_for({2, 3}, {1, 3}, DType::kInt64, 1),
               "max_dim: values shape (1,3) is not (2,1) (the input's shape with a 1 at dim 1)");
  expect_error(ctx_for({2, 3}, {2, 1}, DType::kInt32, -1),
               "max_dim: indices dtype int32 is not int64");
  KernelContext wrong_values = ctx_for({2, 3}, {2, 1}, DType::kInt64, 1);
  wrong_values.outputs[0].dtype = DType::kFloat64;
  expect_error(wrong_values, "max_dim: values dtype float64 differs from input dtype float32");
  KernelContext one_output = ctx_for({2, 3}, {2, 1}, DType::kInt64, 1);
  one_output.outputs.pop_back();
  expect_error(one_output, "max_dim: the kernel expects 1 input and 2 outputs, got 1 and 1");
}

}  // namespace
}  // namespace ofl::kernels::testing
