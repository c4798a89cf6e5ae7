// The CPU "gather" and "scatter_add" kernels (kernels/gather.h): gather copies, for each position
// of the index, the element of x its index value picks along dim; scatter_add copies self, then
// adds each src element into the element its index value picks, each row along dim in order by
// one task (deterministic sums, no two tasks writing one element). An index value outside
// 0 .. size - 1 throws InvalidArgument naming it.
#include <algorithm>
#include <cstdint>
#include <string>

#include <tbb/blocked_range.h>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/gather.h"
#include "kernels/index_util.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;  // elements below which threads cost more

[[noreturn]] void OutOfBounds(const char* op, int64_t i, int dim, int64_t size) {
  throw InvalidArgument(std::string(op) + ": index " + std::to_string(i) +
                        " is out of bounds for dim " + std::to_string(dim) + " with size " +
                        std::to_string(size));
}

// Runs body(begin, end) over [0, count), split over oneTBB when `work` elements are many.
template <class Body>
void Split(int64_t count, int64_t work, const Body& body) {
  if (work <= kParallelElems || count <= 1) {
    body(0, count);
    return;
  }
  const int64_t per = std::max<int64_t>(1, work / count);
  ParallelFor(tbb::blocked_range<int64_t>(0, count, std::max<int64_t>(1, kParallelElems / 2 / per)),
              [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

// Elements as unsigned integers of their size: gather only moves them.
template <class U>
void GatherRange(const LoopDims<3>& d, char* out, const int64_t* index, const char* x, int64_t size,
                 int64_t step, int dim, int64_t begin, int64_t end) {
  LoopCursor<3> c;
  SeekCursor(d, d.ndim, begin, &c);
  for (int64_t p = begin; p < end; ++p) {
    const int64_t i = index[c.offset[1]];
    if (i < 0 || i >= size) OutOfBounds("gather", i, dim, size);
    reinterpret_cast<U*>(out)[c.offset[0]] = reinterpret_cast<const U*>(x)[c.offset[2] + i * step];
    AdvanceCursor(d, d.ndim, &c);
  }
}

void GatherKernel(const KernelContext& ctx) {
  const int dim = CheckGatherArgs(ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  const int64_t count = out.shape.numel();
  if (count == 0) return;
  const bool scalar = x.shape.ndim() == 0;
  const int64_t size = scalar ? 1 : x.shape[dim];
  const int64_t step = scalar ? 0 : x.stride[dim];
  Strides x_stride = x.stride;  // x over the index's positions, its dim coordinate from the index
  if (!scalar) x_stride[dim] = 0;
  LoopDims<3> d;
  const int64_t* const strides[3] = {out.stride.data(), index.stride.data(), x_stride.data()};
  InitLoopDims<3>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  auto* o = static_cast<char*>(out.data);
  const auto* idx = static_cast<const int64_t*>(index.data);
  const auto* in = static_cast<const char*>(x.data);
  Split(count, count, [&](int64_t begin, int64_t end) {
    switch (element_size(x.dtype)) {
      case 1:
        return GatherRange<uint8_t>(d, o, idx, in, size, step, dim, begin, end);
      case 2:
        return GatherRange<uint16_t>(d, o, idx, in, size, step, dim, begin, end);
      case 4:
        return GatherRange<uint32_t>(d, o, idx, in, size, step, dim, begin, end);
      default:
        return GatherRange<uint64_t>(d, o, idx, in, size, step, dim, begin, end);
    }
  });
}

// out = self, element by element (any strides).
template <class S>
void CopySelf(const TensorArg& self, const TensorArg& out) {
  LoopDims<2> d;
  const int64_t* const strides[2] = {out.stride.data(), self.stride.data()};
  InitLoopDims<2>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const int64_t count = NumElements(d);
  S* o = static_cast<S*>(out.data);
  const S* s = static_cast<const S*>(self.data);
  Split(count, count, [&](int64_t begin, int64_t end) {
    LoopCursor<2> c;
    SeekCursor(d, d.ndim, begin, &c);
    for (int64_t p = begin; p < end; ++p) {
      o[c.offset[0]] = s[c.offset[1]];
      AdvanceCursor(d, d.ndim, &c);
    }
  });
}

void ScatterAddKernel(const KernelContext& ctx) {
  const int dim = CheckScatterAddArgs(ctx);
  const TensorArg& self = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& src = ctx.inputs[2];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  const bool scalar = self.shape.ndim() == 0;
  const int64_t size = scalar ? 1 : self.shape[dim];
  const int64_t n = scalar ? 1 : index.shape[dim];
  const int64_t out_step = scalar ? 0 : out.stride[dim];
  const int64_t index_step = scalar ? 0 : index.stride[dim];
  const int64_t src_step = scalar ? 0 : src.stride[dim];
  // The rows along dim: the index's positions with dim dropped.
  Shape rows = index.shape;
  if (!scalar) rows[dim] = 1;
  LoopDims<3> d;
  const int64_t* const strides[3] = {out.stride.data(), index.stride.data(), src.stride.data()};
  InitLoopDims<3>(&d, rows.ndim(), rows.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const int64_t count = index.shape.numel() == 0 ? 0 : NumElements(d);
  VisitDType<float16, bfloat16>(self.dtype, "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using E = Elem<T>;
      using S = typename E::Storage;
      CopySelf<S>(self, out);
      S* o = static_cast<S*>(out.data);
      const int64_t* idx = static_cast<const int64_t*>(index.data);
      const S* s = static_cast<const S*>(src.data);
      Split(count, count * n, [&](int64_t begin, int64_t end) {
        LoopCursor<3> c;
        SeekCursor(d, d.ndim, begin, &c);
        for (int64_t p = begin; p < end; ++p) {
          for (int64_t k = 0; k < n; ++k) {
            const int64_t i = idx[c.offset[1] + k * index_step];
            if (i < 0 || i >= size) OutOfBounds("scatter_add", i, dim, size);
            S& dst = o[c.offset[0] + i * out_step];
            dst = E::Store(E::Load(dst) + E::Load(s[c.offset[2] + k * src_step]));
          }
          AdvanceCursor(d, d.ndim, &c);
        }
      });
    }
  });
}

void GatherCheck(const KernelContext& ctx) { CheckGatherArgs(ctx); }
void ScatterAddCheck(const KernelContext& ctx) { CheckScatterAddArgs(ctx); }
OFL_REGISTER_CPU_KERNEL("gather", GatherKernel, GatherCheck);
OFL_REGISTER_CPU_KERNEL("scatter_add", ScatterAddKernel, ScatterAddCheck);

}  // namespace
}  // namespace ofl::kernels::cpu
