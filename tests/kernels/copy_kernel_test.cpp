// The "copy" kernel of the device in OFL_TEST_DEVICE (the CPU's when unset) against an
// element-by-element reference: random shapes and layouts (permuted, narrowed, broadcast inputs;
// permuted, gapped outputs), every dtype, tiny and parallel sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "oneflow_lite/error.h"
#include "tests/kernels/kernel_test_util.h"

namespace ofl::kernels::testing {
namespace {

// Copies `in_view` of `in` into `out_view` of `expected`, one element at a time.
void ReferenceCopy(const Buffer& in, const View& in_view, Buffer* expected, const View& out_view,
                   size_t es) {
  const int64_t n = Numel(out_view.shape);
  IndexWalker walker(out_view.shape);
  for (int64_t i = 0; i < n; ++i, walker.Next()) {
    const std::vector<int64_t>& idx = walker.index();
    std::memcpy(expected->data() + OffsetOf(out_view, idx) * es,
                in.data() + OffsetOf(in_view, idx) * es, es);
  }
}

// Runs the kernel on random bytes and compares the whole output storage with the reference, so a
// write outside the output view fails as well.
void CheckCopy(std::mt19937_64& rng, DType dtype, const View& in_view, const View& out_view) {
  SCOPED_TRACE("dtype " + to_string(dtype) + ", in " + Describe(in_view) + ", out " +
               Describe(out_view));
  const size_t es = element_size(dtype);
  Buffer in = RandomBuffer(rng, in_view.storage, es);
  Buffer out = RandomBuffer(rng, out_view.storage, es);
  Buffer expected = out;
  ReferenceCopy(in, in_view, &expected, out_view, es);
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in, in_view, dtype));
  ctx.outputs.push_back(Arg(out, out_view, dtype));
  RunKernel("copy", ctx);
  ASSERT_EQ(std::memcmp(out.data(), expected.data(), out.bytes), 0);
}

// Rows of every length around one and two 16-byte vectors, at every start within 16 bytes, read
// from rows with gaps or broadcast: the CUDA kernel cuts each row at the output's 16-byte
// boundaries (an unaligned head, whole vectors, a tail), loading vectors only where the input is
// aligned alike.
TEST(CopyKernelTest, RowsOfEveryLengthAtEveryAlignment) {
  std::mt19937_64 rng(11);
  for (DType dtype : {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64}) {
    const int64_t per = 16 / static_cast<int64_t>(element_size(dtype));
    for (int64_t inner = per - 1; inner <= 2 * per + 1; ++inner) {
      for (int64_t out_offset = 0; out_offset < per; ++out_offset) {
        for (int64_t in_gap : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
          View out_view = ContiguousView({3, inner});
          out_view.offset = out_offset;
          out_view.storage = StorageFor(out_view);
          // in_gap -1: each row one value (the input broadcast along the row).
          View in_view = in_gap < 0 ? StridedView({3, inner}, {1, 0})
                                    : StridedView({3, inner}, {inner + in_gap, 1});
          in_view.offset = static_cast<int64_t>(rng() % per);
          in_view.storage = StorageFor(in_view);
          CheckCopy(rng, dtype, in_view, out_view);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(CopyKernelTest, RandomSmallLayoutsEveryDType) {
  std::mt19937_64 rng(1);
  for (DType dtype : AllDTypes()) {
    for (int iter = 0; iter < 300; ++iter) {
      const std::vector<int64_t> shape = RandomShape(rng, static_cast<int>(rng() % 7));
      CheckCopy(rng, dtype, RandomView(rng, shape, /*broadcast=*/true),
                RandomView(rng, shape, /*broadcast=*/false));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(CopyKernelTest, RandomLargeLayoutsEveryDType) {
  std::mt19937_64 rng(2);
  for (DType dtype : AllDTypes()) {
    const int64_t min_numel = kLargeBytes / static_cast<int64_t>(element_size(dtype));
    for (int iter = 0; iter < 4; ++iter) {
      const std::vector<int64_t> shape =
          LargeShape(rng, 1 + static_cast<int>(rng() % 5), min_numel);
      const bool contiguous_out = iter % 2 == 0;
      CheckCopy(rng, dtype, RandomView(rng, shape, /*broadcast=*/true),
                contiguous_out ? ContiguousView(shape) : RandomView(rng, shape, false));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(CopyKernelTest, LargeContiguousAndBroadcastRows) {
  std::mt19937_64 rng(3);
  // One huge contiguous run (split inside the run), inner broadcast (fills), outer broadcast.
  const std::vector<int64_t> shape = {300, 517};
  View contiguous = ContiguousView(shape);
  const View inner_bcast = StridedView(shape, {1, 0});
  const View outer_bcast = StridedView(shape, {0, 1});
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64}) {
    CheckCopy(rng, dtype, contiguous, contiguous);
    CheckCopy(rng, dtype, inner_bcast, contiguous);
    CheckCopy(rng, dtype, outer_bcast, contiguous);
  }
}

// Outputs of kStreamBytes (32 MiB) or more: the CPU kernel writes long contiguous runs and fills
// with streaming stores. A run split between threads, rows copied from a broadcast input, a fill
// per row, and an offset output whose runs start off the 16-byte boundary.
TEST(CopyKernelTest, OutputsLargeEnoughForStreamingStores) {
  std::mt19937_64 rng(4);
  const std::vector<int64_t> shape = {1025, 4099};  // 8-byte elements: 33.6 MB
  const View rows = StridedView(shape, {0, 1});
  const View fill = StridedView(shape, {1, 0});
  View offset_out = ContiguousView(shape);
  offset_out.offset = 3;
  offset_out.storage = StorageFor(offset_out) + 5;
  CheckCopy(rng, DType::kInt64, ContiguousView(shape), ContiguousView(shape));
  CheckCopy(rng, DType::kInt64, rows, offset_out);
  CheckCopy(rng, DType::kInt64, fill, offset_out);
  const View fill16 = StridedView({1025, 8198}, {1, 0});  // 2-byte elements, 16.8 MB: below
  CheckCopy(rng, DType::kFloat16, fill16, ContiguousView({1025, 8198}));
}

TEST(CopyKernelTest, ScalarAndTwentyFiveDims) {
  std::mt19937_64 rng(4);
  for (DType dtype : AllDTypes()) {
    CheckCopy(rng, dtype, ContiguousView({}), ContiguousView({}));
    View in = ContiguousView({});
    in.offset = 3;
    in.storage = 4;
    CheckCopy(rng, dtype, in, ContiguousView({}));
    std::vector<int64_t> shape(kMaxDims, 1);
    for (int i = 0; i < 10; ++i) shape[rng() % kMaxDims] = 2 + static_cast<int64_t>(rng() % 2);
    for (int iter = 0; iter < 5; ++iter) {
      CheckCopy(rng, dtype, RandomView(rng, shape, true), RandomView(rng, shape, false));
    }
  }
}

// cpu::StridedCopy itself (whatever OFL_TEST_DEVICE says) on raw bytes of size `es`, against the
// element-by-element reference, comparing the whole output storage.
void CheckStridedCopy(std::mt19937_64& rng, size_t es, const View& in_view, const View& out_view) {
  SCOPED_TRACE("element size " + std::to_string(es) + ", in " + Describe(in_view) + ", out " +
               Describe(out_view));
  Buffer in = RandomBuffer(rng, in_view.storage, es);
  Buffer out = RandomBuffer(rng, out_view.storage, es);
  Buffer expected = out;
  ReferenceCopy(in, in_view, &expected, out_view, es);
  cpu::StridedCopy(out.data() + out_view.offset * static_cast<int64_t>(es), out_view.stride.data(),
                   in.data() + in_view.offset * static_cast<int64_t>(es), in_view.stride.data(),
                   out_view.shape.data(), static_cast<int>(out_view.shape.size()), es);
  ASSERT_EQ(std::memcmp(out.data(), expected.data(), out.bytes), 0);
}

// The serial path's short runs: every run length from 1 to past 64 bytes for each element size,
// as copies (contiguous runs), fills (a broadcast inner dim), strided reads, rows that repeat one
// source run (a broadcast middle dim), strided writes, and 1 to 4 dims around the run.
TEST(CopyKernelTest, StridedCopyEveryShortRunLength) {
  std::mt19937_64 rng(5);
  for (size_t es : {1, 2, 4, 8}) {
    for (int64_t n = 1; n * static_cast<int64_t>(es) <= 72; ++n) {
      for (int outer = 0; outer <= 3; ++outer) {
        std::vector<int64_t> shape;
        for (int i = 0; i < outer; ++i) shape.push_back(2 + i);
        shape.push_back(n);
        const int inner = outer;
        View contiguous = ContiguousView(shape);
        View gapped = contiguous;  // each row padded by one element
        for (int i = 0; i < inner; ++i) gapped.stride[i] = gapped.stride[i] / n * (n + 1);
        gapped.offset = 1;
        gapped.storage = StorageFor(gapped);
        std::vector<View> inputs = {contiguous, gapped};
        for (int b = 0; b <= inner; ++b) {  // each dim broadcast in turn: fills, repeated rows
          View v = gapped;
          v.stride[b] = 0;
          v.storage = StorageFor(v);
          inputs.push_back(v);
        }
        View strided = contiguous;  // the run read every third element
        for (int i = 0; i <= inner; ++i) strided.stride[i] *= 3;
        strided.storage = StorageFor(strided);
        inputs.push_back(strided);
        View column = contiguous;  // the run written down a column of the output
        column.stride[inner] = Numel(shape) / n;
        for (int i = 0; i < inner; ++i) column.stride[i] /= n;
        column.storage = StorageFor(column);
        for (const View& in : inputs) {
          for (const View& out : {contiguous, gapped, column}) {
            CheckStridedCopy(rng, es, in, out);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Random small layouts through cpu::StridedCopy: ranks 0 to 6 with size-0, size-1, broadcast,
// permuted and gapped dims, inner runs of up to 80 bytes, in- or out-of-order outputs.
TEST(CopyKernelTest, StridedCopyRandomSmallLayouts) {
  std::mt19937_64 rng(6);
  for (size_t es : {1, 2, 4, 8}) {
    for (int iter = 0; iter < 2000; ++iter) {
      const int ndim = static_cast<int>(rng() % 7);
      std::vector<int64_t> shape = RandomShape(rng, ndim);
      if (ndim > 0 && rng() % 2 == 0) {
        shape[rng() % ndim] = 1 + static_cast<int64_t>(rng() % (80 / es));
      }
      const View in = RandomView(rng, shape, /*broadcast=*/true);
      const View out = rng() % 2 == 0 ? ContiguousView(shape) : RandomView(rng, shape, false);
      CheckStridedCopy(rng, es, in, out);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Fills the expanded view of a contiguous input with distinct values and checks each output
// element by its formula.
template <class F>
void CheckExpand(const std::vector<int64_t>& out_shape, const View& in_view, int64_t in_numel,
                 F source_index) {
  std::vector<float> in(static_cast<size_t>(in_numel));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) + 0.5f;
  std::vector<float> out(static_cast<size_t>(Numel(out_shape)), -1.0f);
  KernelContext ctx;
  TensorArg a;
  a.data = in.data();
  a.shape = Shape(in_view.shape);
  a.stride = Shape(in_view.stride);
  a.dtype = DType::kFloat32;
  ctx.inputs.push_back(a);
  View out_view = ContiguousView(out_shape);
  TensorArg o;
  o.data = out.data();
  o.shape = Shape(out_shape);
  o.stride = Shape(out_view.stride);
  o.dtype = DType::kFloat32;
  ctx.outputs.push_back(o);
  RunKernel("copy", ctx);
  for (int64_t i = 0; i < Numel(out_shape); ++i) {
    ASSERT_EQ(out[i], in[source_index(Unravel(out_shape, i))]) << "output element " << i;
  }
}

TEST(CopyKernelTest, ExpandInnerSizeOneDim) {
  // (4,3,1,2) -> (4,3,5,2): the broadcast dim sits between two contiguous ones.
  View in;
  in.shape = {4, 3, 5, 2};
  in.stride = {6, 2, 0, 1};
  CheckExpand({4, 3, 5, 2}, in, 24,
              [](const std::vector<int64_t>& i) { return i[0] * 6 + i[1] * 2 + i[3]; });
}

TEST(CopyKernelTest, ExpandWithNewLeadingDims) {
  // (1,4,3,5) -> (2,1,2,4,3,5).
  View in;
  in.shape = {2, 1, 2, 4, 3, 5};
  in.stride = {0, 60, 0, 15, 5, 1};
  CheckExpand({2, 1, 2, 4, 3, 5}, in, 60,
              [](const std::vector<int64_t>& i) { return i[3] * 15 + i[4] * 5 + i[5]; });
}

TEST(CopyKernelTest, TinyExpandOfSizeOneDim) {
  // (4,1,3) -> (4,5,3), the shape of the per-op throughput benchmark.
  View in;
  in.shape = {4, 5, 3};
  in.stride = {3, 0, 1};
  CheckExpand({4, 5, 3}, in, 12, [](const std::vector<int64_t>& i) { return i[0] * 3 + i[2]; });
}

TEST(CopyKernelTest, TransposedInput) {
  View in;
  in.shape = {7, 9};
  in.stride = {1, 7};
  CheckExpand({7, 9}, in, 63, [](const std::vector<int64_t>& i) { return i[1] * 7 + i[0]; });
}

TEST(CopyKernelTest, EmptyTensorWithNullData) {
  KernelContext ctx;
  TensorArg a;
  a.shape = Shape({3, 0, 2});
  a.stride = Shape({0, 2, 1});
  ctx.inputs.push_back(a);
  a.stride = Shape({2, 2, 1});
  ctx.outputs.push_back(a);
  EXPECT_NO_THROW(RunKernel("copy", ctx));
}

TEST(CopyKernelTest, MismatchedShapesOrDTypesThrow) {
  std::vector<float> buf(6);
  KernelContext ctx;
  TensorArg a;
  a.data = buf.data();
  a.shape = Shape({2, 3});
  a.stride = Shape({3, 1});
  ctx.inputs.push_back(a);
  a.shape = Shape({3, 2});
  a.stride = Shape({2, 1});
  ctx.outputs.push_back(a);
  EXPECT_THROW(RunKernel("copy", ctx), InvalidArgument);
  ctx.outputs[0] = ctx.inputs[0];
  ctx.outputs[0].dtype = DType::kInt32;
  EXPECT_THROW(RunKernel("copy", ctx), InvalidArgument);
}

// A missing operand would be read past the end of the context's vectors: every device's built-in
// kernels refuse it at the call.
TEST(CopyKernelTest, AMissingOperandThrowsNamingTheKernel) {
  std::vector<float> buf(6);
  TensorArg a;
  a.data = buf.data();
  a.shape = Shape({2, 3});
  a.stride = Shape({3, 1});
  for (const char* op : {"copy", "repeat", "reduce_sum_to"}) {
    SCOPED_TRACE(op);
    KernelContext ctx;
    ctx.outputs.push_back(a);
    ctx.attributes = RepeatAttrs({1, 1});
    try {
      RunKernel(op, ctx);
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(
                    std::string(op) + ": the kernel expects 1 input and 1 output, got 0 and 1"),
                std::string::npos)
          << e.what();
    }
  }
}

// Fewer (or more) strides than dims would make a kernel read past its stride array: every device's
// kernel refuses it at the call, naming the kernel and the operand.
TEST(CopyKernelTest, AStrideCountOtherThanTheRankThrowsNamingTheKernel) {
  std::vector<float> buf(24);
  for (bool output : {false, true}) {
    SCOPED_TRACE(output ? "output" : "input");
    KernelContext ctx;
    TensorArg a;
    a.data = buf.data();
    a.shape = Shape({2, 3, 4});
    a.stride = Shape({12, 4, 1});
    ctx.inputs.push_back(a);
    ctx.outputs.push_back(a);
    (output ? ctx.outputs : ctx.inputs)[0].stride = Shape({4, 1});
    try {
      RunKernel("copy", ctx);
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("copy: ") + (output ? "output" : "input") +
                                           " has 2 stride(s) for shape (2,3,4) of 3 dim(s)"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ofl::kernels::testing
