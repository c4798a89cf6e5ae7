// The CPU "cross_entropy" and "cross_entropy_backward" kernels (kernels/cross_entropy.h), for cpu
// and, through the generic wrapper, sim. Rows are split over oneTBB for large inputs; the loss
// sums each row's term in row order, so its value does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/elem.h"
#include "kernels/cross_entropy.h"
#include "kernels/dtype_visit.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "kernels/softmax.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels {

CrossEntropySpec CheckCrossEntropyArgs(const KernelContext& ctx, bool backward) {
  const char* name = backward ? "cross_entropy_backward" : "cross_entropy";
  const size_t inputs = backward ? 3 : 2;
  if (ctx.inputs.size() != inputs || ctx.outputs.size() != 1) {
    throw InvalidArgument(std::string(name) + ": the kernel expects " + std::to_string(inputs) +
                          " inputs and 1 output, got " + std::to_string(ctx.inputs.size()) +
                          " and " + std::to_string(ctx.outputs.size()));
  }
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& t = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  if (x.shape.ndim() != 2 || !is_floating_point(x.dtype)) {
    throw InvalidArgument(std::string(name) + ": the logits must be 2-dim of a float dtype, got " +
                          x.shape.str() + " " + to_string(x.dtype));
  }
  if (t.shape.ndim() != 1 || t.shape[0] != x.shape[0] || t.dtype != DType::kInt64) {
    throw InvalidArgument(std::string(name) + ": the target must be int64 of shape (" +
                          std::to_string(x.shape[0]) + "), got " + t.shape.str() + " " +
                          to_string(t.dtype));
  }
  const Shape want_out = backward ? x.shape : Shape();
  if (out.shape != want_out || out.dtype != x.dtype ||
      (backward && (ctx.inputs[2].shape.ndim() != 0 || ctx.inputs[2].dtype != x.dtype))) {
    throw InvalidArgument(std::string(name) + ": the output must be " + want_out.str() + " " +
                          to_string(x.dtype) + (backward ? " and the gradient 0-dim of it" : "") +
                          ", got " + out.shape.str() + " " + to_string(out.dtype));
  }
  const AttrSchema* s = ctx.attributes.schema();
  const int ii = s == nullptr ? -1 : s->index("ignore_index");
  const int mi = s == nullptr ? -1 : s->index("mean");
  if (ii < 0 || mi < 0 || s->defs()[static_cast<size_t>(ii)].type != AttrType::kInt ||
      s->defs()[static_cast<size_t>(mi)].type != AttrType::kBool) {
    throw InvalidArgument(std::string(name) +
                          ": the kernel expects the attributes ignore_index (int) and mean "
                          "(bool), got " +
                          (s == nullptr ? std::string("none") : s->str()));
  }
  CrossEntropySpec spec;
  spec.rows = x.shape[0];
  spec.classes = x.shape[1];
  spec.ignore_index = ctx.attributes.get_int("ignore_index");
  spec.mean = ctx.attributes.get_bool("mean");
  return spec;
}

namespace cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;

// Row i's target: -1 for an ignored row; InvalidArgument outside [0, classes).
int64_t TargetOf(const CrossEntropySpec& spec, const TensorArg& t, int64_t i) {
  const int64_t v = static_cast<const int64_t*>(t.data)[i * t.stride[0]];
  if (v == spec.ignore_index) return -1;
  if (v < 0 || v >= spec.classes) {
    throw InvalidArgument("cross_entropy: target " + std::to_string(v) + " (row " +
                          std::to_string(i) + ") is out of bounds for " +
                          std::to_string(spec.classes) + " classes");
  }
  return v;
}

// Row i's max m and log of its sum of exp(x - m).
template <class E>
void RowStats(const TensorArg& x, int64_t i, int64_t classes, typename E::Compute* m,
              typename E::Compute* log_sum) {
  using C = typename E::Compute;
  const auto* row = static_cast<const typename E::Storage*>(x.data) + i * x.stride[0];
  C mm = -std::numeric_limits<C>::infinity(), s = 0;
  for (int64_t k = 0; k < classes; ++k) SoftmaxPush<C>(E::Load(row[k * x.stride[1]]), &mm, &s);
  *m = mm;
  *log_sum = SoftmaxNorm<true, C>(mm, s);
}

template <class F>
void VisitFloat(DType dtype, const char* name, F&& f) {
  VisitDType<float16, bfloat16>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<typename ValueElem<T>::Compute>) f(tag);
  });
}

void CrossEntropyKernel(const KernelContext& ctx) {
  const CrossEntropySpec spec = CheckCrossEntropyArgs(ctx, false);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& t = ctx.inputs[1];
  VisitFloat(x.dtype, "cross_entropy", [&](auto tag) {
    using E = ValueElem<typename decltype(tag)::type>;
    using C = typename E::Compute;
    std::vector<double> terms(static_cast<size_t>(spec.rows));
    std::vector<char> kept(static_cast<size_t>(spec.rows));
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t target = TargetOf(spec, t, i);
        kept[static_cast<size_t>(i)] = target >= 0;
        if (target < 0) continue;
        C m, log_sum;
        RowStats<E>(x, i, spec.classes, &m, &log_sum);
        const auto* row = static_cast<const typename E::Storage*>(x.data) + i * x.stride[0];
        const C picked = E::Load(row[target * x.stride[1]]);
        terms[static_cast<size_t>(i)] = static_cast<double>(m + log_sum - picked);
      }
    };
    ParallelRange(
        spec.rows, std::max<int64_t>(1, kParallelElems / std::max<int64_t>(1, spec.classes)),
        std::max<int64_t>(1, kParallelElems / 4 / std::max<int64_t>(1, spec.classes)), body);
    double sum = 0;
    int64_t count = 0;
    for (int64_t i = 0; i < spec.rows; ++i) {
      if (!kept[static_cast<size_t>(i)]) continue;
      sum += terms[static_cast<size_t>(i)];
      ++count;
    }
    const double loss = spec.mean ? sum / static_cast<double>(count) : sum;  // 0 / 0: NaN
    *static_cast<typename E::Storage*>(ctx.outputs[0].data) = E::Store(static_cast<C>(loss));
  });
}

void CrossEntropyBackwardKernel(const KernelContext& ctx) {
  const CrossEntropySpec spec = CheckCrossEntropyArgs(ctx, true);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& t = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  VisitFloat(x.dtype, "cross_entropy_backward", [&](auto tag) {
    using E = ValueElem<typename decltype(tag)::type>;
    using C = typename E::Compute;
    using S = typename E::Storage;
    int64_t count = 0;
    for (int64_t i = 0; i < spec.rows; ++i) count += TargetOf(spec, t, i) >= 0;
    const C g = E::Load(*static_cast<const S*>(ctx.inputs[2].data));
    const C scale =
        spec.mean ? static_cast<C>(static_cast<double>(g) / static_cast<double>(count)) : g;
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t target = TargetOf(spec, t, i);
        const S* row = static_cast<const S*>(x.data) + i * x.stride[0];
        S* dst = static_cast<S*>(out.data) + i * out.stride[0];
        if (target < 0) {
          for (int64_t k = 0; k < spec.classes; ++k) dst[k * out.stride[1]] = E::Store(C(0));
          continue;
        }
        C m, log_sum;
        RowStats<E>(x, i, spec.classes, &m, &log_sum);
        for (int64_t k = 0; k < spec.classes; ++k) {
          const C p = unary_detail::Exp<C>(E::Load(row[k * x.stride[1]]) - m - log_sum);
          dst[k * out.stride[1]] = E::Store((p - (k == target ? C(1) : C(0))) * scale);
        }
      }
    };
    ParallelRange(
        spec.rows, std::max<int64_t>(1, kParallelElems / std::max<int64_t>(1, spec.classes)),
        std::max<int64_t>(1, kParallelElems / 4 / std::max<int64_t>(1, spec.classes)), body);
  });
}

void CheckForward(const KernelContext& ctx) { (void)CheckCrossEntropyArgs(ctx, false); }
void CheckBackward(const KernelContext& ctx) { (void)CheckCrossEntropyArgs(ctx, true); }

}  // namespace

OFL_REGISTER_CPU_KERNEL("cross_entropy", CrossEntropyKernel, CheckForward);
OFL_REGISTER_CPU_KERNEL("cross_entropy_backward", CrossEntropyBackwardKernel, CheckBackward);

}  // namespace cpu
}  // namespace ofl::kernels
