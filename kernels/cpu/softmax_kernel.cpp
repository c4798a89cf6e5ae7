// The CPU "softmax" and "log_softmax" kernels: along one dim, each row's max and sum in one pass,
// then the row written (kernels/softmax.h's rule, shared with the CUDA kernel). Rows are split
// over oneTBB for large inputs; each row is one task's, in order, so the result does not depend
// on the thread count.
#include <algorithm>
#include <cstdint>
#include <limits>

#include <tbb/blocked_range.h>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/index_util.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "kernels/softmax.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;  // input elements below which threads cost more
constexpr int64_t kGrainElems = 32 << 10;     // input elements one task should at least cover

// Operand 0 the output, 1 the input, over the row positions (the softmax dim, size 1, dropped).
using Dims = LoopDims<2>;

template <bool kLog, class T>
void Rows(const Dims& d, void* out, const void* in, int64_t n, int64_t out_step, int64_t in_step,
          int64_t begin, int64_t end) {
  using E = ValueElem<T>;
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* o = static_cast<S*>(out);
  const S* x = static_cast<const S*>(in);
  LoopCursor<2> c;
  SeekCursor(d, d.ndim, begin, &c);
  for (int64_t pos = begin; pos < end; ++pos) {
    const S* row = x + c.offset[1];
    S* dst = o + c.offset[0];
    C m = -std::numeric_limits<C>::infinity(), s = 0;
    for (int64_t k = 0; k < n; ++k) SoftmaxPush<C>(E::Load(row[k * in_step]), &m, &s);
    const C norm = SoftmaxNorm<kLog, C>(m, s);
    for (int64_t k = 0; k < n; ++k) {
      dst[k * out_step] = E::Store(SoftmaxValue<kLog, C>(E::Load(row[k * in_step]), m, norm));
    }
    AdvanceCursor(d, d.ndim, &c);
  }
}

template <bool kLog>
void SoftmaxKernel(const KernelContext& ctx) {
  const char* name = kLog ? "log_softmax" : "softmax";
  const int dim = CheckSoftmaxArgs(name, ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (x.shape.numel() == 0) return;
  const bool scalar = x.shape.ndim() == 0;
  const int64_t n = scalar ? 1 : x.shape[dim];
  const int64_t in_step = scalar ? 0 : x.stride[dim];
  const int64_t out_step = scalar ? 0 : out.stride[dim];
  Shape rows = x.shape;
  if (!scalar) rows[dim] = 1;
  Dims d;
  const int64_t* const strides[2] = {out.stride.data(), x.stride.data()};
  InitLoopDims<2>(&d, rows.ndim(), rows.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const int64_t positions = NumElements(d);
  VisitDType<float16, bfloat16>(x.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<typename ValueElem<T>::Compute>) {
      auto range = [&](int64_t begin, int64_t end) {
        Rows<kLog, T>(d, out.data, x.data, n, out_step, in_step, begin, end);
      };
      if (positions * n <= kParallelElems || positions == 1) {
        range(0, positions);
        return;
      }
      ParallelFor(tbb::blocked_range<int64_t>(0, positions, std::max<int64_t>(1, kGrainElems / n)),
                  [&](const tbb::blocked_range<int64_t>& r) { range(r.begin(), r.end()); });
    }
  });
}

void SoftmaxFn(const KernelContext& ctx) { SoftmaxKernel<false>(ctx); }
void LogSoftmaxFn(const KernelContext& ctx) { SoftmaxKernel<true>(ctx); }
void SoftmaxCheck(const KernelContext& ctx) { CheckSoftmaxArgs("softmax", ctx); }
void LogSoftmaxCheck(const KernelContext& ctx) { CheckSoftmaxArgs("log_softmax", ctx); }
OFL_REGISTER_CPU_KERNEL("softmax", SoftmaxFn, SoftmaxCheck);
OFL_REGISTER_CPU_KERNEL("log_softmax", LogSoftmaxFn, LogSoftmaxCheck);

}  // namespace
}  // namespace ofl::kernels::cpu
