// Index arithmetic shared by the kernels: collapsing the dims of a strided loop nest (drop size-1
// dims, order dims by memory layout, merge dims that address memory as one) and turning linear
// positions of the loop into operand offsets. Header-only, with no allocation and no threading, so
// that the CUDA kernels can use the same code on the device.
#pragma once

#include <cstdint>
#include <cstring>

#include "oneflow_lite/shape.h"

#if defined(__CUDACC__)
#define OFL_HOST_DEVICE __host__ __device__
#else
#define OFL_HOST_DEVICE
#endif

namespace ofl::kernels {

// A loop nest of `ndim` dims (dim 0 outermost) walked by kNumOperands operands, each with its own
// strides in elements. The arrays past ndim are deliberately left uninitialised: zeroing
// 25 * (1 + kNumOperands) int64s would cost more than a tiny op's whole copy.
template <int kNumOperands>
struct LoopDims {
  int ndim = 0;
  int64_t size[kMaxDims];
  int64_t stride[kNumOperands][kMaxDims];
};

// Position in a LoopDims: the multi-index of its first `ndim` dims and each operand's offset.
template <int kNumOperands>
struct LoopCursor {
  int64_t index[kMaxDims];
  int64_t offset[kNumOperands];
};

template <int N>
OFL_HOST_DEVICE inline int64_t NumElements(const LoopDims<N>& d) {
  int64_t n = 1;
  for (int i = 0; i < d.ndim; ++i) n *= d.size[i];
  return n;
}

// Appends one dim (sizes of 1 are skipped: they never move any offset).
template <int N>
OFL_HOST_DEVICE inline void PushDim(LoopDims<N>* d, int64_t size, const int64_t (&strides)[N]) {
  if (size == 1) return;
  d->size[d->ndim] = size;
  for (int op = 0; op < N; ++op) d->stride[op][d->ndim] = strides[op];
  ++d->ndim;
}

// Builds a LoopDims from a shape and one stride array per operand, skipping size-1 dims.
template <int N>
OFL_HOST_DEVICE inline void InitLoopDims(LoopDims<N>* d, int ndim, const int64_t* size,
                                         const int64_t* const (&strides)[N]) {
  d->ndim = 0;
  for (int i = 0; i < ndim; ++i) {
    if (size[i] == 1) continue;
    d->size[d->ndim] = size[i];
    for (int op = 0; op < N; ++op) d->stride[op][d->ndim] = strides[op][i];
    ++d->ndim;
  }
}

// True when dim `a` should be walked inside dim `b`: the first operand that tells them apart
// (broadcast strides of 0 tell nothing) has the smaller stride on `a`.
template <int N>
OFL_HOST_DEVICE inline bool WalkInside(const LoopDims<N>& d, int a, int b) {
  for (int op = 0; op < N; ++op) {
    const int64_t sa = d.stride[op][a] < 0 ? -d.stride[op][a] : d.stride[op][a];
    const int64_t sb = d.stride[op][b] < 0 ? -d.stride[op][b] : d.stride[op][b];
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sa < sb;
  }
  return false;
}

// Reorders dims so that operand 0 (then 1, ...) is walked in memory order, innermost last. Stable,
// so already ordered (e.g. contiguous) operands keep their order and cost one comparison per dim.
// Only valid for loops whose result does not depend on the visiting order (copies, fills).
template <int N>
OFL_HOST_DEVICE inline void SortDimsByStride(LoopDims<N>* d) {
  for (int i = 1; i < d->ndim; ++i) {
    for (int j = i; j > 0 && WalkInside(*d, j - 1, j); --j) {
      const int64_t s = d->size[j];
      d->size[j] = d->size[j - 1];
      d->size[j - 1] = s;
      for (int op = 0; op < N; ++op) {
        const int64_t t = d->stride[op][j];
        d->stride[op][j] = d->stride[op][j - 1];
        d->stride[op][j - 1] = t;
      }
    }
  }
}

// Merges dims i and i+1 when every operand addresses them as one dim of size[i] * size[i+1], i.e.
// stride[i] == stride[i+1] * size[i+1]. The linear order of the loop is unchanged.
template <int N>
OFL_HOST_DEVICE inline void CoalesceDims(LoopDims<N>* d) {
  if (d->ndim <= 1) return;
  int last = 0;
  for (int i = 1; i < d->ndim; ++i) {
    bool mergeable = true;
    for (int op = 0; op < N; ++op) {
      if (d->stride[op][last] != d->stride[op][i] * d->size[i]) mergeable = false;
    }
    if (mergeable) {
      d->size[last] *= d->size[i];
      for (int op = 0; op < N; ++op) d->stride[op][last] = d->stride[op][i];
    } else {
      ++last;
      d->size[last] = d->size[i];
      for (int op = 0; op < N; ++op) d->stride[op][last] = d->stride[op][i];
    }
  }
  d->ndim = last + 1;
}

// Each operand's offset of the element at `linear` (row-major over all dims of d). One division per
// dim: meant for the start of a chunk or a GPU thread, not for every element of a CPU loop.
template <int N>
OFL_HOST_DEVICE inline void LinearToOffsets(const LoopDims<N>& d, int64_t linear,
                                            int64_t (&offset)[N]) {
  for (int op = 0; op < N; ++op) offset[op] = 0;
  for (int i = d.ndim - 1; i >= 0; --i) {
    const int64_t q = linear / d.size[i];
    const int64_t idx = linear - q * d.size[i];
    for (int op = 0; op < N; ++op) offset[op] += idx * d.stride[op][i];
    linear = q;
  }
}

// Places the cursor at `linear` over the outer `ndim` dims of d (the caller usually walks the
// innermost dim itself and passes d.ndim - 1).
template <int N>
OFL_HOST_DEVICE inline void SeekCursor(const LoopDims<N>& d, int ndim, int64_t linear,
                                       LoopCursor<N>* c) {
  for (int op = 0; op < N; ++op) c->offset[op] = 0;
  if (linear == 0) {  // the usual case for a serial loop: skip ndim 64-bit divisions
    for (int i = 0; i < ndim; ++i) c->index[i] = 0;
    return;
  }
  for (int i = ndim - 1; i >= 0; --i) {
    const int64_t q = linear / d.size[i];
    const int64_t idx = linear - q * d.size[i];
    c->index[i] = idx;
    for (int op = 0; op < N; ++op) c->offset[op] += idx * d.stride[op][i];
    linear = q;
  }
}

template <int N>
OFL_HOST_DEVICE inline void ResetCursor(int ndim, LoopCursor<N>* c) {
  for (int i = 0; i < ndim; ++i) c->index[i] = 0;
  for (int op = 0; op < N; ++op) c->offset[op] = 0;
}

// Odometer step over the outer `ndim` dims: no division, and usually only the last dim moves.
// Stepping past the last position wraps around to 0.
template <int N>
OFL_HOST_DEVICE inline void AdvanceCursor(const LoopDims<N>& d, int ndim, LoopCursor<N>* c) {
  for (int i = ndim - 1; i >= 0; --i) {
    if (++c->index[i] < d.size[i]) {
      for (int op = 0; op < N; ++op) c->offset[op] += d.stride[op][i];
      return;
    }
    c->index[i] = 0;
    for (int op = 0; op < N; ++op) c->offset[op] -= (d.size[i] - 1) * d.stride[op][i];
  }
}

// memcpy for the short runs that strided loops produce (a broadcast row of 3 floats, say): up to
// 64 bytes take two possibly overlapping fixed-size moves, which compile to plain loads and stores,
// instead of a library call that costs more than the copy. A byte loop would not do: compilers turn
// it back into the call.
OFL_HOST_DEVICE inline void CopyBytes(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (n > 64) {
    std::memcpy(d, s, n);
  } else if (n >= 32) {
    char head[32], tail[32];  // both loaded before either store: the halves may overlap
    std::memcpy(head, s, 32);
    std::memcpy(tail, s + n - 32, 32);
    std::memcpy(d, head, 32);
    std::memcpy(d + n - 32, tail, 32);
  } else if (n >= 16) {
    char head[16], tail[16];
    std::memcpy(head, s, 16);
    std::memcpy(tail, s + n - 16, 16);
    std::memcpy(d, head, 16);
    std::memcpy(d + n - 16, tail, 16);
  } else if (n >= 8) {
    uint64_t head, tail;
    std::memcpy(&head, s, 8);
    std::memcpy(&tail, s + n - 8, 8);
    std::memcpy(d, &head, 8);
    std::memcpy(d + n - 8, &tail, 8);
  } else if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, s, 4);
    std::memcpy(&tail, s + n - 4, 4);
    std::memcpy(d, &head, 4);
    std::memcpy(d + n - 4, &tail, 4);
  } else if (n >= 2) {
    uint16_t head, tail;
    std::memcpy(&head, s, 2);
    std::memcpy(&tail, s + n - 2, 2);
    std::memcpy(d, &head, 2);
    std::memcpy(d + n - 2, &tail, 2);
  } else if (n == 1) {
    *d = *s;
  }
}

}  // namespace ofl::kernels
