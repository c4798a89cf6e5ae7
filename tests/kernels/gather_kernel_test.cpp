// The "gather" and "scatter_add" kernels of the device in OFL_TEST_DEVICE (the CPU's when unset;
// sim, and the CUDA kernels on the host grid) against references written here: every dtype and
// every dim of random shapes and layouts (permuted and gapped operands, index shapes smaller than
// the tensor's, repeated index values, whose sums scatter_add adds in order), 0-dim tensors, a
// large input (the parallel path), an index value out of bounds (on the CPU and sim; on CUDA it
// traps, a device fault tested in tests/cuda_host), and the argument errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gather.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

Attrs DimAttrs(const char* op, int64_t dim) {
  return Attrs(KernelAttrSchema(op, {"dim", AttrType::kInt}), dim);
}

// A random index shape for a tensor of `shape`: each dim but `dim` at most the tensor's, dim any.
std::vector<int64_t> IndexShape(std::mt19937_64& rng, const std::vector<int64_t>& shape, int dim) {
  std::vector<int64_t> s = shape;
  for (size_t d = 0; d < s.size(); ++d) {
    if (static_cast<int>(d) == dim) {
      s[d] = static_cast<int64_t>(rng() % 5);
    } else if (s[d] > 0) {
      s[d] = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(s[d]));
    }
  }
  return s;
}

Buffer IndexBuffer(std::mt19937_64& rng, const View& v, int64_t size) {
  Buffer b = RandomBuffer(rng, v.storage, 8);
  for (int64_t i = 0; i < v.storage; ++i) {
    const int64_t x = size > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(size)) : 0;
    std::memcpy(b.data() + i * 8, &x, 8);
  }
  return b;
}

int64_t IndexAt(const Buffer& b, const View& v, const std::vector<int64_t>& at) {
  int64_t x;
  std::memcpy(&x, b.data() + OffsetOf(v, at) * 8, 8);
  return x;
}

void CheckGather(std::mt19937_64& rng, DType dtype, const std::vector<int64_t>& shape, int dim) {
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  const int64_t size = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
  if (size == 0) return;  // nothing to pick
  const std::vector<int64_t> ishape = shape.empty() ? shape : IndexShape(rng, shape, dim);
  const View xv = RandomView(rng, shape, false), iv = RandomView(rng, ishape, true);
  const View ov = ContiguousView(ishape);
  SCOPED_TRACE("gather " + to_string(dtype) + " dim " + std::to_string(dim) + " x " + Describe(xv) +
               " index " + Describe(iv));
  Buffer x = RandomBuffer(rng, xv.storage, static_cast<size_t>(es));
  for (int64_t i = 0; i < xv.storage; ++i) {
    StoreWhole(x.data() + i * es, dtype, static_cast<int64_t>(rng() % 9) - 4);
  }
  Buffer index = IndexBuffer(rng, iv, size);
  Buffer out = RandomBuffer(rng, ov.storage, static_cast<size_t>(es));
  KernelContext ctx;
  ctx.attributes = DimAttrs("gather", dim);
  ctx.inputs.push_back(Arg(x, xv, dtype));
  ctx.inputs.push_back(Arg(index, iv, DType::kInt64));
  ctx.outputs.push_back(Arg(out, ov, dtype));
  RunKernel("gather", ctx);
  IndexWalker w(ishape);
  for (int64_t p = 0, n = Numel(ishape); p < n; ++p, w.Next()) {
    std::vector<int64_t> at = w.index();
    if (!at.empty()) at[static_cast<size_t>(dim)] = IndexAt(index, iv, w.index());
    ASSERT_EQ(ExactValue(out.data() + OffsetOf(ov, w.index()) * es, dtype),
              ExactValue(x.data() + OffsetOf(xv, at) * es, dtype))
        << "element " << p;
  }
}

void CheckScatterAdd(std::mt19937_64& rng, DType dtype, const std::vector<int64_t>& shape,
                     int dim) {
  const int64_t es = static_cast<int64_t>(element_size(dtype));
  const int64_t size = shape.empty() ? 1 : shape[static_cast<size_t>(dim)];
  std::vector<int64_t> ishape = shape.empty() ? shape : IndexShape(rng, shape, dim);
  if (size == 0 && !ishape.empty()) ishape[static_cast<size_t>(dim)] = 0;
  std::vector<int64_t> sshape = ishape;  // src at least the index's size
  for (int64_t& s : sshape) s += static_cast<int64_t>(rng() % 2);
  const View selfv = RandomView(rng, shape, false), iv = RandomView(rng, ishape, true);
  const View sv = RandomView(rng, sshape, false), ov = ContiguousView(shape);
  SCOPED_TRACE("scatter_add " + to_string(dtype) + " dim " + std::to_string(dim) + " self " +
               Describe(selfv) + " index " + Describe(iv) + " src " + Describe(sv));
  Buffer self = RandomBuffer(rng, selfv.storage, static_cast<size_t>(es));
  Buffer src = RandomBuffer(rng, sv.storage, static_cast<size_t>(es));
  for (int64_t i = 0; i < selfv.storage; ++i) {
    StoreWhole(self.data() + i * es, dtype, static_cast<int64_t>(rng() % 5));
  }
  for (int64_t i = 0; i < sv.storage; ++i) {
    StoreWhole(src.data() + i * es, dtype, static_cast<int64_t>(rng() % 5));
  }
  Buffer index = IndexBuffer(rng, iv, size);
  Buffer out = RandomBuffer(rng, ov.storage, static_cast<size_t>(es));
  KernelContext ctx;
  ctx.attributes = DimAttrs("scatter_add", dim);
  ctx.inputs.push_back(Arg(self, selfv, dtype));
  ctx.inputs.push_back(Arg(index, iv, DType::kInt64));
  ctx.inputs.push_back(Arg(src, sv, dtype));
  ctx.outputs.push_back(Arg(out, ov, dtype));
  RunKernel("scatter_add", ctx);
  std::vector<long double> want(static_cast<size_t>(Numel(shape)));
  IndexWalker sw(shape);
  for (size_t p = 0; p < want.size(); ++p, sw.Next()) {
    want[p] = ExactValue(self.data() + OffsetOf(selfv, sw.index()) * es, dtype);
  }
  IndexWalker w(ishape);
  for (int64_t p = 0, n = Numel(ishape); p < n; ++p, w.Next()) {
    std::vector<int64_t> at = w.index();
    if (!at.empty()) at[static_cast<size_t>(dim)] = IndexAt(index, iv, w.index());
    int64_t linear = 0;
    for (size_t d = 0; d < at.size(); ++d) linear = linear * shape[d] + at[d];
    want[static_cast<size_t>(linear)] +=
        ExactValue(src.data() + OffsetOf(sv, w.index()) * es, dtype);
  }
  IndexWalker ow(shape);
  for (size_t p = 0; p < want.size(); ++p, ow.Next()) {
    ASSERT_EQ(ExactValue(out.data() + OffsetOf(ov, ow.index()) * es, dtype), want[p])
        << "element " << p;
  }
}

TEST(GatherKernelTest, EveryDTypeAndDimOnRandomLayouts) {
  std::mt19937_64 rng(61);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 8; ++iter) {
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 4));
      const int dim = shape.empty() ? 0 : static_cast<int>(rng() % shape.size());
      CheckGather(rng, dtype, shape, dim);
      if (dtype != DType::kBool) CheckScatterAdd(rng, dtype, shape, dim);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(GatherKernelTest, LargeInputs) {
  std::mt19937_64 rng(62);
  CheckGather(rng, DType::kFloat32, {300, 260}, 1);
  CheckScatterAdd(rng, DType::kFloat64, {300, 260}, 0);
  CheckScatterAdd(rng, DType::kInt32, {260, 300}, 1);
}

TEST(GatherKernelTest, ArgumentErrorsNameTheOpAndTheValues) {
  std::mt19937_64 rng(63);
  Buffer x = RandomBuffer(rng, 64, 8), index = RandomBuffer(rng, 64, 8),
         out = RandomBuffer(rng, 64, 8);
  for (int i = 0; i < 64; ++i) std::memset(index.data() + i * 8, 0, 8);
  auto gather_ctx = [&](const std::vector<int64_t>& xs, const std::vector<int64_t>& is,
                        const std::vector<int64_t>& os, DType index_dtype, int64_t dim) {
    KernelContext ctx;
    ctx.attributes = DimAttrs("gather", dim);
    ctx.inputs.push_back(Arg(x, ContiguousView(xs), DType::kFloat32));
    ctx.inputs.push_back(Arg(index, ContiguousView(is), index_dtype));
    ctx.outputs.push_back(Arg(out, ContiguousView(os), DType::kFloat32));
    return ctx;
  };
  auto expect_error = [&](const char* op, const KernelContext& ctx, const std::string& what) {
    try {
      RunKernel(op, ctx);
      ADD_FAILURE() << "no error, expected " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("gather", gather_ctx({2, 3}, {2, 3}, {2, 3}, DType::kInt32, 1),
               "gather: index dtype int32 is not int64");
  expect_error("gather", gather_ctx({2, 3}, {3, 3}, {3, 3}, DType::kInt64, 1),
               "gather: index shape (3,3) is larger than input shape (2,3) in dim 0 (only dim 1 "
               "may be)");
  expect_error("gather", gather_ctx({2, 3}, {2}, {2}, DType::kInt64, 0),
               "gather: index has 1 dims, input 2 (they must have the same number)");
  expect_error("gather", gather_ctx({2, 3}, {2, 3}, {2, 3}, DType::kInt64, 2),
               "gather: dim 2 is out of range for a 2-dim tensor (expected -2 to 1)");
  KernelContext scatter;
  scatter.attributes = DimAttrs("scatter_add", 0);
  scatter.inputs.push_back(Arg(x, ContiguousView({2, 3}), DType::kFloat32));
  scatter.inputs.push_back(Arg(index, ContiguousView({2, 3}), DType::kInt64));
  scatter.inputs.push_back(Arg(out, ContiguousView({2, 2}), DType::kFloat32));
  scatter.outputs.push_back(Arg(out, ContiguousView({2, 3}), DType::kFloat32));
  expect_error("scatter_add", scatter,
               "scatter_add: index shape (2,3) is larger than src shape (2,2) in dim 1");
  if (KernelTestDevice().type() == DeviceType::kCUDA ||
      KernelTestDevice().str().rfind("cudahost", 0) == 0) {
    return;  // an index out of bounds traps there: tests/cuda_host
  }
  const int64_t bad = 5;
  std::memcpy(index.data() + 8, &bad, 8);
  expect_error("gather", gather_ctx({2, 3}, {2, 3}, {2, 3}, DType::kInt64, 1),
               "gather: index 5 is out of bounds for dim 1 with size 3");
  KernelContext scatter_bad;
  scatter_bad.attributes = DimAttrs("scatter_add", 1);
  scatter_bad.inputs.push_back(Arg(x, ContiguousView({2, 3}), DType::kFloat32));
  scatter_bad.inputs.push_back(Arg(index, ContiguousView({2, 3}), DType::kInt64));
  scatter_bad.inputs.push_back(Arg(out, ContiguousView({2, 3}), DType::kFloat32));
  scatter_bad.outputs.push_back(Arg(x, ContiguousView({2, 3}), DType::kFloat32));
  expect_error("scatter_add", scatter_bad,
               "scatter_add: index 5 is out of bounds for dim 1 with size 3");
}

}  // namespace
}  // namespace ofl::kernels::testing
