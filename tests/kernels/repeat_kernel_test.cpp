// The "repeat" kernel of the device in OFL_TEST_DEVICE (the CPU's when unset) against the
// definition repeat == reshape -> expand -> reshape -> contiguous, evaluated element by element:
// random shapes, repeat counts and input layouts, every dtype, tiny and parallel sizes, plus
// PyTorch's documented examples.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

// The input (k dims) is reshaped to (1, s_0, 1, s_1, ...) with n - k leading 1s, expanded to
// (r_0, s_0, r_1, s_1, ...) and made contiguous; that memory, read as (r_0 * s_0, ...), is the
// result. Expanding gives the r dims stride 0, so element (a_0, b_0, a_1, b_1, ...) is input b.
void ReferenceRepeat(const Buffer& in, const View& in_view, const std::vector<int64_t>& repeats,
                     Buffer* out, size_t es) {
  const size_t n = repeats.size();
  const size_t k = in_view.shape.size();
  std::vector<int64_t> expanded_shape;
  std::vector<int64_t> expanded_stride;
  for (size_t i = 0; i < n; ++i) {
    const bool padded = i < n - k;
    expanded_shape.push_back(repeats[i]);
    expanded_stride.push_back(0);
    expanded_shape.push_back(padded ? 1 : in_view.shape[i - (n - k)]);
    expanded_stride.push_back(padded ? 0 : in_view.stride[i - (n - k)]);
  }
  View expanded{expanded_shape, expanded_stride, in_view.offset, in_view.storage};
  const int64_t total = Numel(expanded_shape);
  IndexWalker walker(expanded_shape);
  for (int64_t i = 0; i < total; ++i, walker.Next()) {
    std::memcpy(out->data() + i * es, in.data() + OffsetOf(expanded, walker.index()) * es, es);
  }
}

void CheckRepeat(std::mt19937_64& rng, DType dtype, const View& in_view,
                 const std::vector<int64_t>& repeats) {
  SCOPED_TRACE("dtype " + to_string(dtype) + ", in " + Describe(in_view) + ", repeats " +
               ToString(repeats));
  const size_t es = element_size(dtype);
  const size_t n = repeats.size();
  const size_t k = in_view.shape.size();
  std::vector<int64_t> out_shape(n);
  for (size_t i = 0; i < n; ++i) {
    out_shape[i] = repeats[i] * (i < n - k ? 1 : in_view.shape[i - (n - k)]);
  }
  const View out_view = ContiguousView(out_shape);
  Buffer in = RandomBuffer(rng, in_view.storage, es);
  Buffer out = RandomBuffer(rng, out_view.storage, es);
  Buffer expected = out;
  ReferenceRepeat(in, in_view, repeats, &expected, es);
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in, in_view, dtype));
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  ctx.attributes = RepeatAttrs(repeats);
  RunKernel("repeat", ctx);
  ASSERT_EQ(std::memcmp(out.data(), expected.data(), out.bytes), 0);
}

std::vector<int64_t> RandomRepeats(std::mt19937_64& rng, size_t n) {
  std::vector<int64_t> r(n);
  for (int64_t& x : r) x = rng() % 20 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
  return r;
}

TEST(RepeatKernelTest, RandomSmallEveryDType) {
  std::mt19937_64 rng(11);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 300; ++iter) {
      const int k = static_cast<int>(rng() % 6);
      const int n = std::min(6, k + static_cast<int>(rng() % 3));
      const std::vector<int64_t> shape = RandomShape(rng, k);
      CheckRepeat(rng, dtype, RandomView(rng, shape, /*broadcast=*/true), RandomRepeats(rng, n));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// One random case whose output has at least min_bytes: input dims of 1..max_dim, repeats grown
// one at a time until the output is big enough.
void CheckGrownRepeat(std::mt19937_64& rng, DType dtype, int64_t min_bytes, int64_t max_dim) {
  const int64_t min_numel = min_bytes / static_cast<int64_t>(element_size(dtype));
  const int k = 1 + static_cast<int>(rng() % 4);
  const int n = k + static_cast<int>(rng() % 3);
  std::vector<int64_t> shape(k);
  for (int64_t& d : shape) d = 1 + static_cast<int64_t>(rng() % max_dim);
  std::vector<int64_t> repeats(n);
  for (int64_t& r : repeats) r = 1 + static_cast<int64_t>(rng() % 3);
  auto out_numel = [&] {
    int64_t total = Numel(shape);
    for (int64_t r : repeats) total *= r;
    return total;
  };
  while (out_numel() < min_numel) repeats[rng() % n] += 1;
  CheckRepeat(rng, dtype, RandomView(rng, shape, true), repeats);
}

TEST(RepeatKernelTest, RandomLargeEveryDType) {
  std::mt19937_64 rng(12);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 6; ++iter) {
      CheckGrownRepeat(rng, dtype, kLargeBytes, iter < 3 ? 12 : 60);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Outputs between the CPU kernel's one-pass gather (up to 4 KiB) and its parallel threshold: the
// three serial passes.
TEST(RepeatKernelTest, RandomMediumEveryDType) {
  std::mt19937_64 rng(15);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 20; ++iter) {
      CheckGrownRepeat(rng, dtype, 5000, 7);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(RepeatKernelTest, LargeSpecificLayouts) {
  std::mt19937_64 rng(13);
  for (DType dtype : {DType::kUInt8, DType::kBFloat16, DType::kFloat32, DType::kInt64}) {
    // One long row built from a tiny tile (doubling), many rows copied from the first tile, a big
    // tile repeated a few times, and a transposed input.
    CheckRepeat(rng, dtype, ContiguousView({3}), {200000});
    CheckRepeat(rng, dtype, ContiguousView({64, 48}), {40, 2});
    CheckRepeat(rng, dtype, ContiguousView({2, 1, 300, 64}), {1, 5, 1, 1});
    View transposed = ContiguousView({50, 40});
    transposed.stride = {1, 50};
    CheckRepeat(rng, dtype, transposed, {3, 20});
    View broadcast = ContiguousView({50, 400});
    broadcast.stride = {0, 1};
    CheckRepeat(rng, dtype, broadcast, {2, 1, 3});
  }
}

// Innermost runs of 2 KiB or more that are contiguous in the input: the CPU kernel copies each
// output row straight from its input row. Padded and broadcast outer dims, runs repeated within a
// row, rows split between threads mid-run, small and parallel sizes.
TEST(RepeatKernelTest, LongContiguousRunsEveryDType) {
  std::mt19937_64 rng(16);
  for (DType dtype : AllDTypes()) {
    const int64_t run = 2048 / static_cast<int64_t>(element_size(dtype)) + 3;
    CheckRepeat(rng, dtype, ContiguousView({run}), {2});
    CheckRepeat(rng, dtype, ContiguousView({3, run}), {2, 1, 3});
    View padded = ContiguousView({5, run});
    padded.stride = {run + 17, 1};
    padded.storage = 5 * (run + 17);
    CheckRepeat(rng, dtype, padded, {7, 3});
    View broadcast = ContiguousView({4, run});
    broadcast.stride = {0, 1};
    CheckRepeat(rng, dtype, broadcast, {3, 1, 2});
    CheckRepeat(rng, dtype, ContiguousView({2, 1, 9, run}), {1, 6, 1, 5});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// An output of kStreamBytes (32 MiB) or more from long runs: the direct pass writes it with
// streaming stores; the runs are not a multiple of 16 bytes, so most start off the boundary.
TEST(RepeatKernelTest, OutputLargeEnoughForStreamingStores) {
  std::mt19937_64 rng(17);
  View padded = ContiguousView({13, 517});
  padded.stride = {530, 1};
  padded.storage = 13 * 530;
  CheckRepeat(rng, DType::kInt64, padded, {79, 8});  // 33.6 MB
}

TEST(RepeatKernelTest, ScalarAndTwentyFiveDims) {
  std::mt19937_64 rng(14);
  for (DType dtype : AllDTypes()) {
    CheckRepeat(rng, dtype, ContiguousView({}), {});
    CheckRepeat(rng, dtype, ContiguousView({}), {2, 3});
    std::vector<int64_t> shape(20, 1);
    for (int i = 0; i < 6; ++i) shape[rng() % 20] = 2;
    for (int iter = 0; iter < 5; ++iter) {
      std::vector<int64_t> repeats(kMaxDims, 1);
      for (int i = 0; i < 6; ++i) repeats[rng() % kMaxDims] = 2;
      CheckRepeat(rng, dtype, RandomView(rng, shape, true), repeats);
    }
  }
}

TEST(RepeatKernelTest, TorchExampleFourDimsBySixRepeats) {
  // (4,1,3,5) repeated by (2,1,2,4,1,1) has shape (2,1,8,4,3,5) and out[idx] = in[idx mod s].
  const std::vector<int64_t> s = {1, 1, 4, 1, 3, 5};  // padded input shape
  const std::vector<int64_t> out_shape = {2, 1, 8, 4, 3, 5};
  std::vector<int32_t> in(60);
  for (int i = 0; i < 60; ++i) in[i] = i * 7 + 1;
  std::vector<int32_t> out(static_cast<size_t>(Numel(out_shape)), -1);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({4, 1, 3, 5});
  a.stride = Shape({15, 15, 5, 1});
  a.dtype = DType::kInt32;
  ctx.inputs.push_back(a);
  TensorArg o;
  o.data = out.data();
  o.shape = Shape(out_shape);
  o.stride = Shape(ContiguousView(out_shape).stride);
  o.dtype = DType::kInt32;
  ctx.outputs.push_back(o);
  ctx.attributes = RepeatAttrs({2, 1, 2, 4, 1, 1});
  RunKernel("repeat", ctx);
  for (int64_t i = 0; i < Numel(out_shape); ++i) {
    const std::vector<int64_t> idx = Unravel(out_shape, i);
    int64_t src = 0;
    for (size_t d = 0; d < s.size(); ++d) src = src * s[d] + idx[d] % s[d];
    ASSERT_EQ(out[i], in[src]) << "output element " << i;
  }
}

TEST(RepeatKernelTest, ZeroRepeatGivesEmptyOutput) {
  // torch: x of shape (3,1) repeated by (0,1) has shape (0,1); the output has no memory.
  std::vector<float> in = {1, 2, 3};
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({3, 1});
  a.stride = Shape({1, 1});
  ctx.inputs.push_back(a);
  TensorArg o;
  o.shape = Shape({0, 1});
  o.stride = Shape({1, 1});
  ctx.outputs.push_back(o);
  ctx.attributes = RepeatAttrs({0, 1});
  EXPECT_NO_THROW(RunKernel("repeat", ctx));
  // An empty input with nonzero repeats is empty too, and may have no data either.
  ctx.inputs[0].data = nullptr;
  ctx.inputs[0].shape = Shape({0, 2});
  ctx.outputs[0].shape = Shape({0, 6});
  ctx.attributes = RepeatAttrs({4, 3});
  EXPECT_NO_THROW(RunKernel("repeat", ctx));
}

TEST(RepeatKernelTest, WrongOutputShapeThrows) {
  std::vector<float> in(6), out(24);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({2, 3});
  a.stride = Shape({3, 1});
  ctx.inputs.push_back(a);
  TensorArg o;
  o.data = out.data();
  o.shape = Shape({4, 6});
  o.stride = Shape({6, 1});
  ctx.outputs.push_back(o);
  ctx.attributes = RepeatAttrs({2, 3});  // expects (4, 9)
  EXPECT_THROW(RunKernel("repeat", ctx), InvalidArgument);
  ctx.attributes = RepeatAttrs({3});  // fewer repeats than output dims
  EXPECT_THROW(RunKernel("repeat", ctx), InvalidArgument);
}

// Every device's kernel refuses at the call what would make it write out of bounds: negative
// repeats, an output that is not contiguous, fewer strides than dims.
TEST(RepeatKernelTest, NegativeRepeatsNonContiguousOutputAndMissingStridesThrow) {
  std::vector<float> in(6), out(64);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape({2, 3});
  a.stride = Shape({3, 1});
  ctx.inputs.push_back(a);
  TensorArg o;
  o.data = out.data();
  o.shape = Shape({4, 3});
  o.stride = Shape({3, 1});
  ctx.outputs.push_back(o);
  const auto expect_error = [&](const std::string& part) {
    try {
      RunKernel("repeat", ctx);
      ADD_FAILURE() << "no error; expected " << part;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  ctx.attributes = RepeatAttrs({2, 1});
  EXPECT_NO_THROW(RunKernel("repeat", ctx));
  ctx.attributes = RepeatAttrs({-2, -1});
  ctx.outputs[0].shape = Shape({4, 3});
  expect_error("repeat: output shape (4,3) does not match input shape (2,3) repeated by (-2,-1)");
  ctx.attributes = RepeatAttrs({2, 1});
  ctx.outputs[0].stride = Shape({6, 1});  // rows 6 apart: a narrowed view, not contiguous
  expect_error("repeat: output strides (6,1) are not contiguous for shape (4,3)");
  ctx.outputs[0].stride = Shape({1});
  expect_error("repeat: output has 1 stride(s) for shape (4,3) of 2 dim(s)");
}

}  // namespace
}  // namespace ofl::kernels::testing
