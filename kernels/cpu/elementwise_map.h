// out[idx] = F(in[idx]) over strided views of one shape: the CPU loop of the one-input elementwise
// kernels (unary_kernel.cpp, cast_kernel.cpp, pointwise_kernel.cpp); MapElementsN below is its
// form with several inputs (pointwise_kernel.cpp). The loop nest is simplified first (size-1 dims
// dropped, dims in the output's memory order, mergeable dims merged); a run whose output and input
// are contiguous, or whose input is one value (stride 0), is a simple loop over __restrict
// pointers that the compiler vectorises, any other an element loop with strides. Outputs past
// kParallelBytes are split over oneTBB. The output may be the input's own view (an in-place op):
// each element is read before it is written, and a contiguous run of an in-place op reads and
// writes the same pointer (no __restrict then).
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include <tbb/blocked_range.h>

#include "kernels/index_util.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"

namespace ofl::kernels::cpu {

namespace map_detail {

// Below this many output bytes, computing is cheaper than waking TBB's workers.
constexpr int64_t kParallelBytes = 256 << 10;
// Smallest piece one TBB task computes.
constexpr int64_t kGrainBytes = 64 << 10;

using Dims = LoopDims<2>;
// One ComputeRange instantiation; the parallel loop around it is not a template.
using RangeFn = void (*)(const Dims&, void*, const void*, const void*, int64_t, int64_t);

inline void ComputeAll(RangeFn range, const Dims& d, int64_t numel, int64_t element_size, void* out,
                       const void* in, const void* params) {
  if (numel * element_size <= kParallelBytes) {
    range(d, out, in, params, 0, numel);
    return;
  }
  ParallelFor(
      tbb::blocked_range<int64_t>(0, numel, kGrainBytes / element_size),
      [&](const tbb::blocked_range<int64_t>& r) { range(d, out, in, params, r.begin(), r.end()); });
}

enum class RunKind { kContiguous, kBroadcast, kInPlace, kStrided };

// F: a type with Out and In (the stored types) and `static Out Apply(In, const Params&)`.
template <class F, RunKind kKind>
void ComputeRange(const Dims& d, void* out_ptr, const void* in_ptr, const void* params_ptr,
                  int64_t begin, int64_t end) {
  using Out = typename F::Out;
  using In = typename F::In;
  const auto& p = *static_cast<const typename F::Params*>(params_ptr);
  Out* out = static_cast<Out*>(out_ptr);
  const In* in = static_cast<const In*>(in_ptr);
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  const int64_t so = d.stride[0][inner];
  const int64_t si = d.stride[1][inner];
  const int64_t row = begin / n;
  int64_t col = begin - row * n;
  LoopCursor<2> c;
  SeekCursor(d, inner, row, &c);
  for (int64_t pos = begin;;) {
    const int64_t count = std::min(n - col, end - pos);
    Out* o = out + c.offset[0] + col * so;
    const In* x = in + c.offset[1] + col * si;
    if constexpr (kKind == RunKind::kContiguous) {
      Out* __restrict ro = o;
      const In* __restrict rx = x;
      for (int64_t i = 0; i < count; ++i) ro[i] = F::Apply(rx[i], p);
    } else if constexpr (kKind == RunKind::kBroadcast) {
      Out* __restrict ro = o;
      const Out v = F::Apply(x[0], p);
      for (int64_t i = 0; i < count; ++i) ro[i] = v;
    } else if constexpr (kKind == RunKind::kInPlace) {
      for (int64_t i = 0; i < count; ++i) o[i] = F::Apply(x[i], p);
    } else {
      for (int64_t i = 0; i < count; ++i) o[i * so] = F::Apply(x[i * si], p);
    }
    pos += count;
    if (pos >= end) break;
    col = 0;
    AdvanceCursor(d, inner, &c);
  }
}

}  // namespace map_detail

// out = F(in) elementwise; out and in have one shape (any strides), out's dtype F::Out's, in's
// F::In's (the caller checked both).
template <class F>
void MapElements(const TensorArg& out, const TensorArg& in, const typename F::Params& params) {
  using namespace map_detail;  // NOLINT(google-build-using-namespace): this header's own parts
  if (out.shape.numel() == 0) return;
  Dims d;
  const int64_t* const strides[2] = {out.stride.data(), in.stride.data()};
  InitLoopDims<2>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  if (d.ndim == 0) {  // one element
    *static_cast<typename F::Out*>(out.data) =
        F::Apply(*static_cast<const typename F::In*>(in.data), params);
    return;
  }
  const int inner = d.ndim - 1;
  const int64_t so = d.stride[0][inner], si = d.stride[1][inner];
  bool same_view = out.data == in.data && sizeof(typename F::Out) == sizeof(typename F::In);
  for (int i = 0; same_view && i < d.ndim; ++i) same_view = d.stride[0][i] == d.stride[1][i];
  RangeFn range = &ComputeRange<F, RunKind::kStrided>;
  if (so == 1 && same_view) {
    range = &ComputeRange<F, RunKind::kInPlace>;
  } else if (so == 1 && si == 1) {
    range = &ComputeRange<F, RunKind::kContiguous>;
  } else if (so == 1 && si == 0) {
    range = &ComputeRange<F, RunKind::kBroadcast>;
  }
  ComputeAll(range, d, NumElements(d), static_cast<int64_t>(sizeof(typename F::Out)), out.data,
             in.data, &params);
}

namespace map_detail {

// The several-input loop: operand 0 the output, 1.. the inputs. A run where every operand is
// contiguous is a plain loop the compiler can vectorise; any other (broadcast inputs included)
// steps each operand by its stride. The output may be an input's view: each element is read
// before it is written.
template <int kN>
using RangeFnN = void (*)(const LoopDims<kN>&, void* const*, const void*, int64_t, int64_t);

template <class F, bool kContiguous, size_t... I>
void ComputeRangeN(const LoopDims<sizeof...(I) + 1>& d, void* const* ptrs, const void* params_ptr,
                   int64_t begin, int64_t end) {
  constexpr int kN = sizeof...(I) + 1;
  using Out = typename F::Out;
  using Ins = typename F::Ins;
  const auto& p = *static_cast<const typename F::Params*>(params_ptr);
  Out* out = static_cast<Out*>(ptrs[0]);
  const std::tuple<const std::tuple_element_t<I, Ins>*...> in{
      static_cast<const std::tuple_element_t<I, Ins>*>(ptrs[I + 1])...};
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  int64_t s[kN];
  for (int k = 0; k < kN; ++k) s[k] = d.stride[k][inner];
  const int64_t row = begin / n;
  int64_t col = begin - row * n;
  LoopCursor<kN> c;
  SeekCursor(d, inner, row, &c);
  for (int64_t pos = begin;;) {
    const int64_t count = std::min(n - col, end - pos);
    Out* o = out + c.offset[0] + col * s[0];
    const std::tuple<const std::tuple_element_t<I, Ins>*...> x{std::get<I>(in) + c.offset[I + 1] +
                                                               col * s[I + 1]...};
    if constexpr (kContiguous) {
      for (int64_t i = 0; i < count; ++i) o[i] = F::Apply(std::get<I>(x)[i]..., p);
    } else {
      for (int64_t i = 0; i < count; ++i) {
        o[i * s[0]] = F::Apply(std::get<I>(x)[i * s[I + 1]]..., p);
      }
    }
    pos += count;
    if (pos >= end) break;
    col = 0;
    AdvanceCursor(d, inner, &c);
  }
}

template <int kN>
void ComputeAllN(RangeFnN<kN> range, const LoopDims<kN>& d, int64_t numel, int64_t element_size,
                 void* const* ptrs, const void* params) {
  if (numel * element_size <= kParallelBytes) {
    range(d, ptrs, params, 0, numel);
    return;
  }
  ParallelFor(
      tbb::blocked_range<int64_t>(0, numel, kGrainBytes / element_size),
      [&](const tbb::blocked_range<int64_t>& r) { range(d, ptrs, params, r.begin(), r.end()); });
}

template <class F, size_t... I>
void MapN(const TensorArg& out, const typename F::Params& params,
          const TensorArg* const (&ins)[sizeof...(I)], std::index_sequence<I...>) {
  constexpr int kN = sizeof...(I) + 1;
  if (out.shape.numel() == 0) return;
  LoopDims<kN> d;
  const int64_t* const strides[kN] = {out.stride.data(), ins[I]->stride.data()...};
  InitLoopDims<kN>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  void* const ptrs[kN] = {out.data, const_cast<void*>(ins[I]->data)...};
  if (d.ndim == 0) {  // one element
    *static_cast<typename F::Out*>(out.data) = F::Apply(
        *static_cast<const std::tuple_element_t<I, typename F::Ins>*>(ins[I]->data)..., params);
    return;
  }
  const int inner = d.ndim - 1;
  bool contiguous = true;
  for (int k = 0; k < kN; ++k) contiguous = contiguous && d.stride[k][inner] == 1;
  const RangeFnN<kN> range =
      contiguous ? &ComputeRangeN<F, true, I...> : &ComputeRangeN<F, false, I...>;
  ComputeAllN<kN>(range, d, NumElements(d), static_cast<int64_t>(sizeof(typename F::Out)), ptrs,
                  &params);
}

}  // namespace map_detail

// out = F(ins...) elementwise over several inputs of out's shape (any strides; broadcast inputs
// have stride 0). F: Out, Ins (a std::tuple of the inputs' stored types), Params, and
// `static Out Apply(In0, In1, ..., const Params&)`; the caller checked the dtypes.
template <class F, class... Args>
void MapElementsN(const TensorArg& out, const typename F::Params& params, const Args&... ins) {
  static_assert(sizeof...(Args) == std::tuple_size_v<typename F::Ins>, "one TensorArg per input");
  const TensorArg* const ptrs[sizeof...(Args)] = {&ins...};
  map_detail::MapN<F>(out, params, ptrs, std::make_index_sequence<sizeof...(Args)>());
}

}  // namespace ofl::kernels::cpu
