// The CPU "copy" kernel: materialises any strided view (permuted, narrowed, expanded) into another
// strided view of the same shape, moving elements as raw bytes of their size.
#include <algorithm>
#include <cstring>

#include <tbb/blocked_range.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/index_util.h"
#include "kernels/parallel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {

namespace {

// Below this many output bytes a copy is cheaper than waking TBB's workers.
constexpr int64_t kParallelBytes = 256 << 10;
// Smallest piece one TBB task copies: enough to amortise the chunk's start-index divisions.
constexpr int64_t kGrainBytes = 64 << 10;

// How the innermost dim moves: both operands contiguous (memcpy), a broadcast source (fill), or
// anything else (element loop). Fixed per copy, so the serial loop dispatches on it once.
enum class RunKind { kContiguous, kFill, kStrided };

// One run of the innermost dim. Unsigned integer types of the element's size stand in for every
// dtype, so a fill of float16 is a vectorised fill of uint16_t.
template <RunKind kKind, class T>
inline void CopyRun(T* dst, int64_t dst_stride, const T* src, int64_t src_stride, int64_t n) {
  if constexpr (kKind == RunKind::kContiguous) {
    CopyBytes(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else if constexpr (kKind == RunKind::kFill) {
    if (dst_stride == 1) {
      std::fill_n(dst, n, *src);
    } else {
      const T v = *src;
      for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = v;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
  }
}

// The whole loop, for outputs too small to split: the two inner dims as plain nested loops (a tiny
// broadcast copy is mostly many short runs), the outer ones as an odometer.
template <RunKind kKind, class T>
void CopyAll(const LoopDims<2>& d, T* dst, const T* src) {
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  const int64_t dst_stride = d.stride[0][inner];
  const int64_t src_stride = d.stride[1][inner];
  if (inner == 0) {
    CopyRun<kKind>(dst, dst_stride, src, src_stride, n);
    return;
  }
  const int mid = inner - 1;
  const int64_t rows = d.size[mid];
  const int64_t dst_row_stride = d.stride[0][mid];
  const int64_t src_row_stride = d.stride[1][mid];
  int64_t outer = 1;
  for (int i = 0; i < mid; ++i) outer *= d.size[i];
  LoopCursor<2> c;
  ResetCursor(mid, &c);
  for (int64_t o = 0; o < outer; ++o) {
    T* out = dst + c.offset[0];
    const T* in = src + c.offset[1];
    for (int64_t r = 0; r < rows; ++r, out += dst_row_stride, in += src_row_stride) {
      CopyRun<kKind>(out, dst_stride, in, src_stride, n);
    }
    AdvanceCursor(d, mid, &c);
  }
}

// Copies the elements [begin, end) of the loop's row-major order (one parallel chunk); operand 0 is
// dst, 1 is src. The start is located once, then the outer dims advance as an odometer.
template <RunKind kKind, class T>
void CopyRange(const LoopDims<2>& d, T* dst, const T* src, int64_t begin, int64_t end) {
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  const int64_t dst_stride = d.stride[0][inner];
  const int64_t src_stride = d.stride[1][inner];
  const int64_t row = begin / n;
  int64_t col = begin - row * n;
  LoopCursor<2> c;
  SeekCursor(d, inner, row, &c);
  int64_t pos = begin;
  for (;;) {
    const int64_t count = std::min(n - col, end - pos);
    CopyRun<kKind>(dst + c.offset[0] + col * dst_stride, dst_stride,
                   src + c.offset[1] + col * src_stride, src_stride, count);
    pos += count;
    if (pos >= end) break;
    col = 0;
    AdvanceCursor(d, inner, &c);
  }
}

template <RunKind kKind, class T>
void CopyWithKind(const LoopDims<2>& d, T* dst, const T* src) {
  const int64_t numel = NumElements(d);
  if (numel * static_cast<int64_t>(sizeof(T)) <= kParallelBytes) {
    CopyAll<kKind>(d, dst, src);
    return;
  }
  ParallelFor(tbb::blocked_range<int64_t>(0, numel, kGrainBytes / sizeof(T)),
              [&](const tbb::blocked_range<int64_t>& r) {
                CopyRange<kKind>(d, dst, src, r.begin(), r.end());
              });
}

template <class T>
void CopyTyped(const LoopDims<2>& d, void* dst, const void* src) {
  T* out = static_cast<T*>(dst);
  const T* in = static_cast<const T*>(src);
  const int inner = d.ndim - 1;
  const int64_t dst_stride = d.stride[0][inner];
  const int64_t src_stride = d.stride[1][inner];
  if (src_stride == 0) {
    CopyWithKind<RunKind::kFill>(d, out, in);
  } else if (dst_stride == 1 && src_stride == 1) {
    CopyWithKind<RunKind::kContiguous>(d, out, in);
  } else {
    CopyWithKind<RunKind::kStrided>(d, out, in);
  }
}

}  // namespace

void StridedCopy(void* dst, const int64_t* dst_stride, const void* src, const int64_t* src_stride,
                 const int64_t* size, int ndim, size_t element_size) {
  for (int i = 0; i < ndim; ++i) {
    if (size[i] == 0) return;
  }
  LoopDims<2> d;
  InitLoopDims(&d, ndim, size, {dst_stride, src_stride});
  SortDimsByStride(&d);
  CoalesceDims(&d);
  if (d.ndim == 0) {  // a single element
    std::memcpy(dst, src, element_size);
    return;
  }
  switch (element_size) {
    case 1:
      CopyTyped<uint8_t>(d, dst, src);
      return;
    case 2:
      CopyTyped<uint16_t>(d, dst, src);
      return;
    case 4:
      CopyTyped<uint32_t>(d, dst, src);
      return;
    case 8:
      CopyTyped<uint64_t>(d, dst, src);
      return;
    default:
      throw InvalidArgument("copy: unsupported element size " + std::to_string(element_size));
  }
}

void CopyKernel(const KernelContext& ctx) {
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (in.shape != out.shape) {
    throw InvalidArgument("copy: input shape " + in.shape.str() + " differs from output shape " +
                          out.shape.str());
  }
  if (in.dtype != out.dtype) {
    throw InvalidArgument("copy: input dtype " + to_string(in.dtype) +
                          " differs from output dtype " + to_string(out.dtype));
  }
  StridedCopy(out.data, out.stride.data(), in.data, in.stride.data(), out.shape.data(),
              out.shape.ndim(), element_size(out.dtype));
}

}  // namespace ofl::kernels::cpu
