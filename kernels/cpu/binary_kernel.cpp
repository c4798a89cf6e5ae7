// The CPU elementwise-binary kernels, "add", "sub", "mul" and "div": out[idx] = a[idx] op b[idx]
// over strided views of one shape (broadcast inputs have stride 0).
//
// The loop nest is simplified first (size-1 dims dropped, dims in the output's memory order,
// mergeable dims merged). When the output's innermost run is contiguous and each input's is
// contiguous, broadcast (stride 0) or the output itself (an in-place op), every run is one simple
// loop over __restrict pointers that the compiler vectorises; anything else runs an element loop
// with strides. Large outputs are split over oneTBB; outputs too large for the cache are computed
// a few KiB at a time into an L1-resident buffer and written with streaming stores
// (kernels/cpu/stream_copy.h), so a fresh output is not read before it is written.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <tbb/blocked_range.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/elem.h"
#include "kernels/cpu/half_cast.h"
#include "kernels/cpu/stream_copy.h"
#include "kernels/index_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {

namespace {

// Below this many output bytes, computing is cheaper than waking TBB's workers (copy_kernel.cpp's
// threshold).
constexpr int64_t kParallelBytes = 256 << 10;
// Smallest piece one TBB task computes: enough to amortise the chunk's start-index divisions.
constexpr int64_t kGrainBytes = 64 << 10;
// Contiguous output runs at least this long in an output of kStreamBytes or more are written with
// streaming stores; shorter ones would write too many partial lines.
constexpr int64_t kStreamRunBytes = 256;
// The buffer a streamed run is computed into before it is stored: small enough to stay in L1,
// a whole number of cache lines.
constexpr int64_t kStageBytes = 2048;

template <BinaryOp kOp, class C>
inline C Apply(C x, C y) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return x + y;
  } else if constexpr (kOp == BinaryOp::kSub) {
    return x - y;
  } else if constexpr (kOp == BinaryOp::kMul) {
    return x * y;
  } else {
    return x / y;
  }
}

// How an input's innermost run is read, when the output's is contiguous: contiguous, one value
// (stride 0), or the output's own elements (the input is the output's view: an in-place op).
enum class In { kContiguous, kBroadcast, kOutput };

// One run of n elements into a contiguous output. With kOutput the input's pointer is unused and
// the output is read before it is written, element by element, so the output may be __restrict.
template <BinaryOp kOp, class T, In kA, In kB>
inline void Run(typename Elem<T>::Storage* __restrict o,
                const typename Elem<T>::Storage* __restrict a,
                const typename Elem<T>::Storage* __restrict b, int64_t n) {
  using E = Elem<T>;
  using C = typename E::Compute;
  const C a0 = kA == In::kBroadcast ? E::Load(a[0]) : C(0);
  const C b0 = kB == In::kBroadcast ? E::Load(b[0]) : C(0);
  for (int64_t i = 0; i < n; ++i) {
    const C x = kA == In::kContiguous ? E::Load(a[i]) : kA == In::kOutput ? E::Load(o[i]) : a0;
    const C y = kB == In::kContiguous ? E::Load(b[i]) : kB == In::kOutput ? E::Load(o[i]) : b0;
    o[i] = E::Store(Apply<kOp>(x, y));
  }
}

// Run() for an output too large for the cache (never an in-place one): the 64-byte-aligned middle
// is computed kStageBytes at a time into a buffer and streamed out.
template <BinaryOp kOp, class T, In kA, In kB>
void StreamedRun(typename Elem<T>::Storage* o, const typename Elem<T>::Storage* a,
                 const typename Elem<T>::Storage* b, int64_t n) {
  using S = typename Elem<T>::Storage;
  constexpr int64_t kStage = kStageBytes / static_cast<int64_t>(sizeof(S));
  alignas(64) S stage[kStage];
  // Plain stores up to the first 64-byte boundary (elements are aligned to their size).
  int64_t head = static_cast<int64_t>(((0 - reinterpret_cast<uintptr_t>(o)) & 63) / sizeof(S));
  head = std::min(head, n);
  Run<kOp, T, kA, kB>(o, a, b, head);
  for (int64_t i = head; i < n; i += kStage) {
    const int64_t m = std::min(kStage, n - i);
    Run<kOp, T, kA, kB>(stage, kA == In::kContiguous ? a + i : a, kB == In::kContiguous ? b + i : b,
                        m);
    StreamBytes(o + i, stage, m * static_cast<int64_t>(sizeof(S)));
  }
}

// Any strides: the element loop. The output may be an input's view (each element is read before
// it is written), so nothing is __restrict.
template <BinaryOp kOp, class T>
inline void StridedRun(typename Elem<T>::Storage* o, int64_t so, const typename Elem<T>::Storage* a,
                       int64_t sa, const typename Elem<T>::Storage* b, int64_t sb, int64_t n) {
  using E = Elem<T>;
  for (int64_t i = 0; i < n; ++i) {
    o[i * so] = E::Store(Apply<kOp>(E::Load(a[i * sa]), E::Load(b[i * sb])));
  }
}

// The loop nest of one op: operand 0 the output, 1 input a, 2 input b; strides in elements.
using Dims = LoopDims<3>;

// How every run of one op is computed, fixed before the loop.
enum class RunKind { kVector, kStreamed, kStrided };

// The elements [begin, end) of the nest's row-major order (one parallel chunk, or all of them):
// the start is located once, then the outer dims advance as an odometer.
template <BinaryOp kOp, class T, RunKind kKind, In kA, In kB>
void ComputeRange(const Dims& d, void* out_ptr, const void* a_ptr, const void* b_ptr, int64_t begin,
                  int64_t end) {
  using S = typename Elem<T>::Storage;
  S* out = static_cast<S*>(out_ptr);
  const S* a = static_cast<const S*>(a_ptr);
  const S* b = static_cast<const S*>(b_ptr);
  const int inner = d.ndim - 1;
  const int64_t n = d.size[inner];
  const int64_t so = d.stride[0][inner];
  const int64_t sa = d.stride[1][inner];
  const int64_t sb = d.stride[2][inner];
  const int64_t row = begin / n;
  int64_t col = begin - row * n;
  LoopCursor<3> c;
  SeekCursor(d, inner, row, &c);
  for (int64_t pos = begin;;) {
    const int64_t count = std::min(n - col, end - pos);
    S* o = out + c.offset[0] + col * so;
    const S* x = a + c.offset[1] + col * sa;
    const S* y = b + c.offset[2] + col * sb;
    if constexpr (kKind == RunKind::kVector) {
      Run<kOp, T, kA, kB>(o, x, y, count);
    } else if constexpr (kKind == RunKind::kStreamed) {
      StreamedRun<kOp, T, kA, kB>(o, x, y, count);
    } else {
      StridedRun<kOp, T>(o, so, x, sa, y, sb, count);
    }
    pos += count;
    if (pos >= end) break;
    col = 0;
    AdvanceCursor(d, inner, &c);
  }
  if constexpr (kKind == RunKind::kStreamed) StreamFence();
}

// One ComputeRange instantiation, chosen once per op. The parallel loop around it is not a
// template, so oneTBB's machinery is instantiated once, not for every op, dtype and run kind.
using RangeFn = void (*)(const Dims&, void*, const void*, const void*, int64_t, int64_t);

void ComputeAll(RangeFn range, const Dims& d, int64_t numel, int64_t element_size, void* out,
                const void* a, const void* b) {
  if (numel * element_size <= kParallelBytes) {
    range(d, out, a, b, 0, numel);
    return;
  }
  ParallelFor(
      tbb::blocked_range<int64_t>(0, numel, kGrainBytes / element_size),
      [&](const tbb::blocked_range<int64_t>& r) { range(d, out, a, b, r.begin(), r.end()); });
}

// Whether input `op` of the nest is the output's view: the same data and, over the dims left
// after simplification, the same strides.
bool SameView(const Dims& d, int op, const void* out, const void* in) {
  if (out != in) return false;
  for (int i = 0; i < d.ndim; ++i) {
    if (d.stride[op][i] != d.stride[0][i]) return false;
  }
  return true;
}

// The ComputeRange of an op's run kind and input kinds. An in-place output is never streamed (it
// is read anyway, so it costs no extra read): those instantiations do not exist.
template <BinaryOp kOp, class T, RunKind kKind, In kA>
RangeFn PickB(In b_kind) {
  switch (b_kind) {
    case In::kContiguous:
      return &ComputeRange<kOp, T, kKind, kA, In::kContiguous>;
    case In::kBroadcast:
      return &ComputeRange<kOp, T, kKind, kA, In::kBroadcast>;
    case In::kOutput:
      if constexpr (kKind != RunKind::kStreamed) {
        return &ComputeRange<kOp, T, kKind, kA, In::kOutput>;
      }
      break;
  }
  return nullptr;
}

template <BinaryOp kOp, class T, RunKind kKind>
RangeFn Pick(In a_kind, In b_kind) {
  switch (a_kind) {
    case In::kContiguous:
      return PickB<kOp, T, kKind, In::kContiguous>(b_kind);
    case In::kBroadcast:
      return PickB<kOp, T, kKind, In::kBroadcast>(b_kind);
    case In::kOutput:
      if constexpr (kKind != RunKind::kStreamed) return PickB<kOp, T, kKind, In::kOutput>(b_kind);
      break;
  }
  return nullptr;
}

template <BinaryOp kOp, class T>
void ComputeTyped(const Dims& d, void* out, const void* a, const void* b) {
  using E = Elem<T>;
  using S = typename E::Storage;
  if (d.ndim == 0) {  // one element
    S* o = static_cast<S*>(out);
    *o = E::Store(
        Apply<kOp>(E::Load(*static_cast<const S*>(a)), E::Load(*static_cast<const S*>(b))));
    return;
  }
  const int64_t numel = NumElements(d);
  const int64_t es = static_cast<int64_t>(sizeof(S));
  const int inner = d.ndim - 1;
  const int64_t sa = d.stride[1][inner];
  const int64_t sb = d.stride[2][inner];
  if (d.stride[0][inner] != 1 || (sa != 0 && sa != 1) || (sb != 0 && sb != 1)) {
    ComputeAll(&ComputeRange<kOp, T, RunKind::kStrided, In::kContiguous, In::kContiguous>, d, numel,
               es, out, a, b);
    return;
  }
  // The output's runs are contiguous: each input's are contiguous, broadcast or the output's own.
  auto kind_of = [&](int op, const void* in) {
    if (SameView(d, op, out, in)) return In::kOutput;
    return d.stride[op][inner] == 0 ? In::kBroadcast : In::kContiguous;
  };
  const In a_kind = kind_of(1, a);
  const In b_kind = kind_of(2, b);
  const bool stream = a_kind != In::kOutput && b_kind != In::kOutput &&
                      numel * es >= kStreamBytes && d.size[inner] * es >= kStreamRunBytes;
  const RangeFn range = stream ? Pick<kOp, T, RunKind::kStreamed>(a_kind, b_kind)
                               : Pick<kOp, T, RunKind::kVector>(a_kind, b_kind);
  ComputeAll(range, d, numel, es, out, a, b);
}

template <BinaryOp kOp>
void BinaryKernel(const KernelContext& ctx) {
  CheckBinaryArgs(kOp, ctx);
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  Dims d;
  const int64_t* const strides[3] = {out.stride.data(), a.stride.data(), b.stride.data()};
  InitLoopDims<3>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  switch (out.dtype) {
    case DType::kUInt8:
      if constexpr (kOp != BinaryOp::kDiv)
        return ComputeTyped<kOp, uint8_t>(d, out.data, a.data, b.data);
      break;
    case DType::kInt8:
      if constexpr (kOp != BinaryOp::kDiv)
        return ComputeTyped<kOp, int8_t>(d, out.data, a.data, b.data);
      break;
    case DType::kInt16:
      if constexpr (kOp != BinaryOp::kDiv)
        return ComputeTyped<kOp, int16_t>(d, out.data, a.data, b.data);
      break;
    case DType::kInt32:
      if constexpr (kOp != BinaryOp::kDiv)
        return ComputeTyped<kOp, int32_t>(d, out.data, a.data, b.data);
      break;
    case DType::kInt64:
      if constexpr (kOp != BinaryOp::kDiv)
        return ComputeTyped<kOp, int64_t>(d, out.data, a.data, b.data);
      break;
    case DType::kFloat16:
      return ComputeTyped<kOp, float16>(d, out.data, a.data, b.data);
    case DType::kBFloat16:
      return ComputeTyped<kOp, bfloat16>(d, out.data, a.data, b.data);
    case DType::kFloat32:
      return ComputeTyped<kOp, float>(d, out.data, a.data, b.data);
    case DType::kFloat64:
      return ComputeTyped<kOp, double>(d, out.data, a.data, b.data);
    case DType::kBool:
      break;
  }
  // CheckBinaryArgs refused every other dtype.
  throw InvalidArgument(std::string(BinaryOpName(kOp)) + ": no CPU kernel for dtype " +
                        to_string(out.dtype));
}

}  // namespace

void AddKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kAdd>(ctx); }
void SubKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kSub>(ctx); }
void MulKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kMul>(ctx); }
void DivKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kDiv>(ctx); }
OFL_REGISTER_CPU_KERNEL("add", AddKernel, CheckBinaryArgs<BinaryOp::kAdd>);
OFL_REGISTER_CPU_KERNEL("sub", SubKernel, CheckBinaryArgs<BinaryOp::kSub>);
OFL_REGISTER_CPU_KERNEL("mul", MulKernel, CheckBinaryArgs<BinaryOp::kMul>);
OFL_REGISTER_CPU_KERNEL("div", DivKernel, CheckBinaryArgs<BinaryOp::kDiv>);

}  // namespace ofl::kernels::cpu
