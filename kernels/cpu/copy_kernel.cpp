// The CPU "copy" kernel: materialises any strided view (permuted, narrowed, expanded) into another
// strided view of the same shape, moving elements as raw bytes of their size.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include <tbb/blocked_range.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/stream_copy.h"
#include "kernels/index_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {

namespace {

// Below this many output bytes a copy is cheaper than waking TBB's workers.
constexpr int64_t kParallelBytes = 256 << 10;
// Smallest piece one TBB task copies: enough to amortise the chunk's start-index divisions.
constexpr int64_t kGrainBytes = 64 << 10;
// Contiguous runs at least this long in an output of kStreamBytes or more are written with
// StreamBytes; shorter ones would write too many partial lines.
constexpr int64_t kStreamRunBytes = 256;

// How the innermost dim moves in a parallel copy: both operands contiguous (memcpy), a broadcast
// source (fill), or anything else (element loop); long contiguous output runs of a large output
// are written with streaming stores (kStreamed, kStreamedFill).
// Fixed per copy, so the loop dispatches on it once.
enum class RunKind { kContiguous, kStreamed, kFill, kStreamedFill, kStrided };

// One run (or a chunk's piece of one) of the innermost dim in a parallel copy. Unsigned integer
// types of the element's size stand in for every dtype, so a fill of float16 is a vectorised fill
// of uint16_t.
template <RunKind kKind, class T>
inline void CopyRun(T* dst, int64_t dst_stride, const T* src, int64_t src_stride, int64_t n) {
  if constexpr (kKind == RunKind::kContiguous) {
    CopyBytes(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else if constexpr (kKind == RunKind::kStreamed) {
    StreamBytes(dst, src, n * static_cast<int64_t>(sizeof(T)));
  } else if constexpr (kKind == RunKind::kStreamedFill) {
    StreamFill(dst, *src, n);
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
  if constexpr (kKind == RunKind::kStreamed || kKind == RunKind::kStreamedFill) StreamFence();
}

template <RunKind kKind, class T>
void CopyParallelWithKind(const LoopDims<2>& d, int64_t numel, T* dst, const T* src) {
  ParallelFor(tbb::blocked_range<int64_t>(0, numel, kGrainBytes / sizeof(T)),
              [&](const tbb::blocked_range<int64_t>& r) {
                CopyRange<kKind>(d, dst, src, r.begin(), r.end());
              });
}

// Outputs past kParallelBytes: chunks of the row-major order over TBB.
template <class T>
void CopyParallel(const LoopDims<2>& d, int64_t numel, void* dst, const void* src) {
  T* out = static_cast<T*>(dst);
  const T* in = static_cast<const T*>(src);
  const int inner = d.ndim - 1;
  const int64_t dst_stride = d.stride[0][inner];
  const int64_t src_stride = d.stride[1][inner];
  const int64_t es = static_cast<int64_t>(sizeof(T));
  const bool stream =
      dst_stride == 1 && numel * es >= kStreamBytes && d.size[inner] * es >= kStreamRunBytes;
  if (src_stride == 0) {
    if (stream) {
      CopyParallelWithKind<RunKind::kStreamedFill>(d, numel, out, in);
    } else {
      CopyParallelWithKind<RunKind::kFill>(d, numel, out, in);
    }
  } else if (dst_stride == 1 && src_stride == 1) {
    if (stream) {
      CopyParallelWithKind<RunKind::kStreamed>(d, numel, out, in);
    } else {
      CopyParallelWithKind<RunKind::kContiguous>(d, numel, out, in);
    }
  } else {
    CopyParallelWithKind<RunKind::kStrided>(d, numel, out, in);
  }
}

// The serial path moves each run of the innermost dim with a functor chosen once per copy: every
// run of a copy has the same length, so the length's cases (CopyBytes' chain of comparisons,
// fill_n's vector prologue) are decided before the loop rather than at every run, and a short run
// becomes a few plain loads and stores. A run is read (Load) then written (Store), so that rows
// broadcast from one source run (an expanded middle dim) read it only once.

// A contiguous run of `tail + W` bytes, W <= length <= 2W: two W-byte moves, the second ending at
// the run's end (they overlap unless the length is 2W). Both are loaded before either store.
template <size_t W>
struct ShortMove {
  struct Bytes {
    uint8_t head[W], last[W];
  };
  size_t tail;
  Bytes Load(const uint8_t* src) const {
    Bytes b;
    std::memcpy(b.head, src, W);
    std::memcpy(b.last, src + tail, W);
    return b;
  }
  void Store(uint8_t* dst, const Bytes& b) const {
    std::memcpy(dst, b.head, W);
    std::memcpy(dst + tail, b.last, W);
  }
};

struct LongMove {
  size_t bytes;
  const uint8_t* Load(const uint8_t* src) const { return src; }
  void Store(uint8_t* dst, const uint8_t* src) const { std::memcpy(dst, src, bytes); }
};

// A contiguous run of (tail + W) / sizeof(T) copies of *src, W <= length <= 2W: the value repeated
// over W bytes, stored at the run's start and end. W and tail are multiples of sizeof(T), so the
// overlapping stores agree.
template <class T, size_t W>
struct ShortFill {
  struct Bytes {
    uint8_t pattern[W];
  };
  size_t tail;
  Bytes Load(const T* src) const {
    // ~0 / max(T) is 0x0101...01 for bytes, 0x00010001...0001 for uint16_t, and so on: the
    // multiplication repeats the value over 64 bits.
    constexpr uint64_t kSpread = ~uint64_t{0} / std::numeric_limits<T>::max();
    const uint64_t word = static_cast<uint64_t>(*src) * kSpread;
    Bytes b;
    if constexpr (W < 8) {
      std::memcpy(b.pattern, &word, W);
    } else {
      for (size_t i = 0; i < W; i += 8) std::memcpy(b.pattern + i, &word, 8);
    }
    return b;
  }
  void Store(T* dst, const Bytes& b) const {
    uint8_t* out = reinterpret_cast<uint8_t*>(dst);
    std::memcpy(out, b.pattern, W);
    std::memcpy(out + tail, b.pattern, W);
  }
};

template <class T>
struct LongFill {
  int64_t n;
  T Load(const T* src) const { return *src; }
  void Store(T* dst, T v) const { std::fill_n(dst, n, v); }
};

template <class T>
struct StridedFill {
  int64_t n, dst_stride;
  T Load(const T* src) const { return *src; }
  void Store(T* dst, T v) const {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = v;
  }
};

template <class T>
struct StridedRun {
  int64_t n, dst_stride, src_stride;
  const T* Load(const T* src) const { return src; }
  void Store(T* dst, const T* src) const {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
  }
};

// Calls f(std::integral_constant<size_t, W>{}) with the W for which W <= bytes <= 2W, for runs of
// 2 to 64 bytes (every run has at least 2 elements: InitCopyDims drops dims of size 1); returns
// false for longer runs.
template <class F>
bool WithShortWidth(size_t bytes, F&& f) {
  if (bytes > 64) return false;
  if (bytes >= 32) {
    f(std::integral_constant<size_t, 32>{});
  } else if (bytes >= 16) {
    f(std::integral_constant<size_t, 16>{});
  } else if (bytes >= 8) {
    f(std::integral_constant<size_t, 8>{});
  } else if (bytes >= 4) {
    f(std::integral_constant<size_t, 4>{});
  } else {
    f(std::integral_constant<size_t, 2>{});
  }
  return true;
}

// The whole loop, for outputs too small to split: the innermost dim is `run`, the two dims around
// it (rows and planes) are plain nested loops (a tiny broadcast copy is mostly many short runs),
// any outer ones advance as an odometer. Strides are multiplied by `unit` (the element size when
// contiguous runs move as bytes, else 1). kSameRow: the source's row stride is 0, so every row of
// a plane is the same source run, read once.
template <bool kSameRow, class T, class Run>
void CopyNest(const LoopDims<2>& d, int64_t unit, T* dst, const T* src, const Run& run) {
  const int r = d.ndim - 2;  // the rows: the dim around the run
  const int64_t rows = d.size[r];
  const int64_t dst_row = d.stride[0][r] * unit;
  const int64_t src_row = d.stride[1][r] * unit;
  int64_t planes = 1, dst_plane = 0, src_plane = 0;  // the dim around the rows, if any
  if (r > 0) {
    planes = d.size[r - 1];
    dst_plane = d.stride[0][r - 1] * unit;
    src_plane = d.stride[1][r - 1] * unit;
  }
  auto copy_planes = [&](T* out_plane, const T* in_plane) {
    for (int64_t p = planes; p > 0; --p, out_plane += dst_plane, in_plane += src_plane) {
      T* out = out_plane;
      if constexpr (kSameRow) {
        const auto v = run.Load(in_plane);
        for (int64_t i = rows; i > 0; --i, out += dst_row) run.Store(out, v);
      } else {
        const T* in = in_plane;
        for (int64_t i = rows; i > 0; --i, out += dst_row, in += src_row) {
          run.Store(out, run.Load(in));
        }
      }
    }
  };
  if (r <= 1) {
    copy_planes(dst, src);
    return;
  }
  const int outer = r - 1;  // the odometer's dims
  int64_t blocks = 1;
  for (int i = 0; i < outer; ++i) blocks *= d.size[i];
  LoopCursor<2> c;
  ResetCursor(outer, &c);
  for (int64_t b = 0; b < blocks; ++b) {
    copy_planes(dst + c.offset[0] * unit, src + c.offset[1] * unit);
    AdvanceCursor(d, outer, &c);
  }
}

template <class T, class Run>
void CopyAll(const LoopDims<2>& d, int64_t unit, T* dst, const T* src, const Run& run) {
  if (d.ndim == 1) {
    run.Store(dst, run.Load(src));
  } else if (d.stride[1][d.ndim - 2] == 0) {
    CopyNest<true>(d, unit, dst, src, run);
  } else {
    CopyNest<false>(d, unit, dst, src, run);
  }
}

// A serial copy whose runs are contiguous in both operands. Such runs are bytes whatever the
// dtype, so one loop per run width serves every element size.
void CopyContiguousRuns(const LoopDims<2>& d, void* dst, const void* src, size_t element_size) {
  const int64_t es = static_cast<int64_t>(element_size);
  uint8_t* out = static_cast<uint8_t*>(dst);
  const uint8_t* in = static_cast<const uint8_t*>(src);
  const size_t bytes = static_cast<size_t>(d.size[d.ndim - 1] * es);
  const bool short_run = WithShortWidth(bytes, [&](auto width) {
    CopyAll(d, es, out, in, ShortMove<width.value>{bytes - width.value});
  });
  if (!short_run) CopyAll(d, es, out, in, LongMove{bytes});
}

// A serial copy whose runs read with a stride (or broadcast one element) or write with a stride.
template <class T>
void CopyOtherRuns(const LoopDims<2>& d, void* dst, const void* src) {
  T* out = static_cast<T*>(dst);
  const T* in = static_cast<const T*>(src);
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  const int64_t dst_stride = d.stride[0][inner];
  const int64_t src_stride = d.stride[1][inner];
  if (src_stride == 0 && dst_stride == 1) {
    const size_t bytes = static_cast<size_t>(n) * sizeof(T);
    const bool short_run = WithShortWidth(bytes, [&](auto width) {
      if constexpr (width.value >= sizeof(T)) {  // runs have at least 2 elements
        CopyAll(d, 1, out, in, ShortFill<T, width.value>{bytes - width.value});
      }
    });
    if (!short_run) CopyAll(d, 1, out, in, LongFill<T>{n});
  } else if (src_stride == 0) {
    CopyAll(d, 1, out, in, StridedFill<T>{n, dst_stride});
  } else {
    CopyAll(d, 1, out, in, StridedRun<T>{n, dst_stride, src_stride});
  }
}

// InitLoopDims + SortDimsByStride + CoalesceDims in one pass for the usual case, where the output
// is already in memory order (dst strides decreasing): size-1 dims are dropped and each dim is
// merged into the one before it as it arrives. Only other outputs pay for the sort (the merged dims
// are a fixed point of CoalesceDims, so sorting and merging again is correct for them). Returns
// false for an empty copy; sets the number of elements otherwise.
bool InitCopyDims(LoopDims<2>* d, int64_t* numel, int ndim, const int64_t* size,
                  const int64_t* dst_stride, const int64_t* src_stride) {
  int i = 0;
  while (i < ndim && size[i] == 1) ++i;
  if (i == ndim) {  // a single element
    d->ndim = 0;
    *numel = 1;
    return true;
  }
  // The last dim so far is held in these locals, and stored when the next dim does not merge.
  int k = 0;
  int64_t n_k = size[i], ds_k = dst_stride[i], ss_k = src_stride[i];
  int64_t count = n_k;
  bool ordered = true;
  for (++i; i < ndim; ++i) {
    const int64_t n = size[i];
    if (n == 1) continue;
    count *= n;
    const int64_t ds = dst_stride[i];
    const int64_t ss = src_stride[i];
    if (ds_k == ds * n && ss_k == ss * n) {
      n_k *= n;
    } else {
      d->size[k] = n_k;
      d->stride[0][k] = ds_k;
      d->stride[1][k] = ss_k;
      // Positive decreasing dst strides are an order that SortDimsByStride keeps (WalkInside
      // decides by operand 0 alone).
      ordered = ordered && ds_k > ds;
      ++k;
      n_k = n;
    }
    ds_k = ds;
    ss_k = ss;
  }
  if (count == 0) return false;
  d->size[k] = n_k;
  d->stride[0][k] = ds_k;
  d->stride[1][k] = ss_k;
  d->ndim = k + 1;
  if (!ordered || ds_k <= 0) {
    SortDimsByStride(d);
    CoalesceDims(d);
  }
  *numel = count;
  return true;
}

}  // namespace

void StridedCopy(void* dst, const int64_t* dst_stride, const void* src, const int64_t* src_stride,
                 const int64_t* size, int ndim, size_t element_size) {
  LoopDims<2> d;
  int64_t numel;
  if (!InitCopyDims(&d, &numel, ndim, size, dst_stride, src_stride)) return;
  if (d.ndim == 0) {  // a single element
    std::memcpy(dst, src, element_size);
    return;
  }
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8) {
    throw InvalidArgument("copy: unsupported element size " + std::to_string(element_size));
  }
  if (numel * static_cast<int64_t>(element_size) > kParallelBytes) {
    switch (element_size) {
      case 1:
        return CopyParallel<uint8_t>(d, numel, dst, src);
      case 2:
        return CopyParallel<uint16_t>(d, numel, dst, src);
      case 4:
        return CopyParallel<uint32_t>(d, numel, dst, src);
      default:
        return CopyParallel<uint64_t>(d, numel, dst, src);
    }
  }
  const int inner = d.ndim - 1;
  if (d.stride[0][inner] == 1 && d.stride[1][inner] == 1) {
    if (inner == 0) {  // one contiguous block (a clone, or dims that all merged)
      CopyBytes(dst, src, static_cast<size_t>(numel) * element_size);
    } else {
      CopyContiguousRuns(d, dst, src, element_size);
    }
    return;
  }
  switch (element_size) {
    case 1:
      return CopyOtherRuns<uint8_t>(d, dst, src);
    case 2:
      return CopyOtherRuns<uint16_t>(d, dst, src);
    case 4:
      return CopyOtherRuns<uint32_t>(d, dst, src);
    default:
      return CopyOtherRuns<uint64_t>(d, dst, src);
  }
}

void CopyKernel(const KernelContext& ctx) {
  CheckCopyArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  StridedCopy(out.data, out.stride.data(), in.data, in.stride.data(), out.shape.data(),
              out.shape.ndim(), element_size(out.dtype));
}
OFL_REGISTER_CPU_KERNEL("copy", CopyKernel, CheckCopyArgs);

}  // namespace ofl::kernels::cpu
