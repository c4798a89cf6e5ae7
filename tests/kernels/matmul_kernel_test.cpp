// The "mm" and "bmm" kernels of the device in OFL_TEST_DEVICE (the CPU's when unset; sim, and the
// CUDA kernels on the host grid, whose cuBLAS calls run in tests/cuda_host/cublas_shim.cpp)
// against a reference product written here: every dtype but bool, operands row-major and
// column-major (transposed views) with padded leading dimensions, batch entries padded apart or
// broadcast (batch stride 0), empty sizes (k = 0 gives zeros), integer wrap-around, a product large
// enough for the libraries' blocked paths, and the argument errors. The values are small integers,
// so every float dtype holds each product and sum exactly and results compare exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

// A batch x rows x cols operand (rows x cols when !batched) in a random GEMM layout: row- or
// column-major, the leading dimension padded sometimes, batch entries padded apart or broadcast.
View MatrixView(std::mt19937_64& rng, int64_t batch, int64_t rows, int64_t cols, bool batched) {
  const bool col_major = rng() % 2 == 0;
  const int64_t gap = rng() % 3 == 0 ? static_cast<int64_t>(rng() % 3) : 0;
  const int64_t ld = std::max<int64_t>(col_major ? rows : cols, 1) + gap;
  const int64_t span = ld * std::max<int64_t>(col_major ? cols : rows, 1);
  const int64_t rs = col_major ? 1 : ld, cs = col_major ? ld : 1;
  View v;
  if (batched) {
    const int64_t bs = batch > 1 && rng() % 4 == 0 ? 0 : span + static_cast<int64_t>(rng() % 2);
    v = StridedView({batch, rows, cols}, {bs, rs, cs});
  } else {
    v = StridedView({rows, cols}, {rs, cs});
  }
  v.offset = static_cast<int64_t>(rng() % 3);
  v.storage = StorageFor(v);
  return v;
}

// Runs op on random small-integer operands of the given sizes and checks every output element.
void CheckProduct(std::mt19937_64& rng, bool batched, DType dtype, int64_t batch, int64_t m,
                  int64_t n, int64_t k) {
  const char* op = batched ? "bmm" : "mm";
  const View av = MatrixView(rng, batch, m, k, batched);
  const View bv = MatrixView(rng, batch, k, n, batched);
  const View cv = batched ? ContiguousView({batch, m, n}) : ContiguousView({m, n});
  SCOPED_TRACE(std::string(op) + " " + to_string(dtype) + " a " + Describe(av) + " b " +
               Describe(bv));
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  const bool is_unsigned = dtype == DType::kUInt8;
  Buffer a = RandomBuffer(rng, av.storage, static_cast<size_t>(es));
  Buffer b = RandomBuffer(rng, bv.storage, static_cast<size_t>(es));
  Buffer c = RandomBuffer(rng, cv.storage, static_cast<size_t>(es));
  auto fill = [&](Buffer& buf, int64_t elems) {
    for (int64_t i = 0; i < elems; ++i) {
      const int64_t v =
          is_unsigned ? static_cast<int64_t>(rng() % 4) : static_cast<int64_t>(rng() % 7) - 3;
      StoreWhole(buf.data() + i * es, dtype, v);
    }
  };
  fill(a, av.storage);
  fill(b, bv.storage);
  KernelContext ctx;
  ctx.inputs.push_back(Arg(a, av, dtype));
  ctx.inputs.push_back(Arg(b, bv, dtype));
  ctx.outputs.push_back(Arg(c, cv, dtype));
  RunKernel(op, ctx);
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        long double want = 0;
        for (int64_t q = 0; q < k; ++q) {
          const auto at = [&](int64_t x, int64_t y) {
            return batched ? std::vector<int64_t>{i, x, y} : std::vector<int64_t>{x, y};
          };
          want += ExactValue(a.data() + OffsetOf(av, at(r, q)) * es, dtype) *
                  ExactValue(b.data() + OffsetOf(bv, at(q, j)) * es, dtype);
        }
        const std::vector<int64_t> ci =
            batched ? std::vector<int64_t>{i, r, j} : std::vector<int64_t>{r, j};
        ASSERT_EQ(ExactValue(c.data() + OffsetOf(cv, ci) * es, dtype), want)
            << "batch " << i << " row " << r << " col " << j;
      }
    }
  }
}

std::vector<DType> ProductDTypes() {
  std::vector<DType> out;
  for (DType d : AllDTypes()) {
    if (d != DType::kBool) out.push_back(d);
  }
  return out;
}

TEST(MatmulKernelTest, EveryDTypeAndLayout) {
  std::mt19937_64 rng(41);
  for (DType dtype : ProductDTypes()) {
    for (int iter = 0; iter < 12; ++iter) {
      const bool batched = iter % 2 == 1;
      auto size = [&] { return 1 + static_cast<int64_t>(rng() % 5); };
      const int64_t batch = batched ? size() : 1;
      CheckProduct(rng, batched, dtype, batch, size(), size(), size());
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(MatmulKernelTest, EmptySizesGiveEmptyOutputsOrZeros) {
  std::mt19937_64 rng(42);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    CheckProduct(rng, false, dtype, 1, 3, 4, 0);  // k = 0: zeros
    CheckProduct(rng, false, dtype, 1, 0, 4, 3);
    CheckProduct(rng, false, dtype, 1, 3, 0, 3);
    CheckProduct(rng, true, dtype, 2, 3, 2, 0);
    CheckProduct(rng, true, dtype, 0, 3, 2, 2);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(MatmulKernelTest, LargeProducts) {
  std::mt19937_64 rng(43);
  CheckProduct(rng, false, DType::kFloat32, 1, 67, 45, 130);
  CheckProduct(rng, false, DType::kFloat64, 1, 33, 70, 64);
  CheckProduct(rng, true, DType::kBFloat16, 3, 17, 9, 40);
  CheckProduct(rng, false, DType::kInt64, 1, 40, 33, 50);
}

TEST(MatmulKernelTest, IntegersWrapAround) {
  std::mt19937_64 rng(44);
  Buffer a = RandomBuffer(rng, 2, 1), b = RandomBuffer(rng, 2, 1), c = RandomBuffer(rng, 1, 1);
  a.data()[0] = 100;
  a.data()[1] = 27;
  b.data()[0] = 3;
  b.data()[1] = 1;
  KernelContext ctx;
  ctx.inputs.push_back(Arg(a, ContiguousView({1, 2}), DType::kInt8));
  ctx.inputs.push_back(Arg(b, ContiguousView({2, 1}), DType::kInt8));
  ctx.outputs.push_back(Arg(c, ContiguousView({1, 1}), DType::kInt8));
  RunKernel("mm", ctx);
  EXPECT_EQ(static_cast<int8_t>(c.data()[0]), static_cast<int8_t>(327 - 256));
}

TEST(MatmulKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(45);
  Buffer a = RandomBuffer(rng, 64, 8), b = RandomBuffer(rng, 64, 8), c = RandomBuffer(rng, 64, 8);
  auto ctx_for = [&](const View& av, const View& bv, const View& cv, DType dtype) {
    KernelContext ctx;
    ctx.inputs.push_back(Arg(a, av, dtype));
    ctx.inputs.push_back(Arg(b, bv, dtype));
    ctx.outputs.push_back(Arg(c, cv, dtype));
    return ctx;
  };
  auto expect_error = [&](const char* op, const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel(op, ctx);
      ADD_FAILURE() << "no error, expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const View a23 = ContiguousView({2, 3}), b34 = ContiguousView({3, 4}),
             c24 = ContiguousView({2, 4});
  expect_error("mm", ctx_for(a23, ContiguousView({4, 4}), c24, DType::kFloat32),
               "mm: input shapes (2,3) and (4,4) cannot be multiplied");
  expect_error("mm", ctx_for(a23, b34, ContiguousView({2, 3}), DType::kFloat32),
               "mm: output shape (2,3) is not (2,4)");
  expect_error("mm", ctx_for(a23, b34, c24, DType::kBool),
               "mm: dtype bool is not supported (an integer or float dtype is)");
  expect_error("mm", ctx_for(StridedView({2, 3}, {6, 2}), b34, c24, DType::kFloat32),
               "mm: input a (shape (2,3), strides (6,2)) is neither row- nor column-major");
  expect_error("mm", ctx_for(a23, StridedView({3, 4}, {0, 1}), c24, DType::kFloat32),
               "mm: input b (shape (3,4), strides (0,1)) is neither row- nor column-major");
  expect_error("mm", ctx_for(a23, b34, StridedView({2, 4}, {1, 2}), DType::kFloat32),
               "mm: the output must be contiguous, got strides (1,2)");
  expect_error("bmm", ctx_for(a23, b34, c24, DType::kFloat32),
               "bmm: input a has shape (2,3), expected 3 dims");
  expect_error("bmm",
               ctx_for(ContiguousView({2, 2, 3}), ContiguousView({3, 3, 4}),
                       ContiguousView({2, 2, 4}), DType::kFloat32),
               "bmm: input shapes (2,2,3) and (3,3,4) cannot be multiplied");
  KernelContext mixed = ctx_for(a23, b34, c24, DType::kFloat32);
  mixed.inputs[1].dtype = DType::kFloat64;
  expect_error("mm", mixed, "mm: dtypes float32, float64 and output float32 differ");
  KernelContext one_input = ctx_for(a23, b34, c24, DType::kFloat32);
  one_input.inputs.pop_back();
  expect_error("mm", one_input, "mm: the kernel expects 2 inputs and 1 output, got 1 and 1");
}

}  // namespace
}  // namespace ofl::kernels::testing
