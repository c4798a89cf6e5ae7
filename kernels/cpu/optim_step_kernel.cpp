// The CPU multi-tensor optimizer steps "adam_step" and "sgd_step" (kernels/optim_step.h): each
// tensor's elements updated by AdamUpdate / SgdUpdate, a large tensor split over oneTBB.
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/optim_step.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;

template <class F>
void VisitStepDType(DType dtype, const char* kernel, F&& f) {
  VisitDType<float16, bfloat16>(dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                  std::is_same_v<T, bfloat16>) {
      f(tag);
    }
  });
}

// Calls f(std::integral_constant<bool, flag>) with the flag as a compile-time constant, so the
// element loops below compile once per case without a branch inside (and vectorize).
template <class F>
void WithFlag(bool flag, F&& f) {
  if (flag) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

// Tensor i of adam_step, elements [begin, end); the flags compile-time constants.
template <class E, bool kAmsgrad, bool kMaximize, bool kWd, bool kDecoupled>
void AdamRange(const typename E::Storage* __restrict g, typename E::Storage* __restrict p,
               typename E::Storage* __restrict m, typename E::Storage* __restrict v,
               typename E::Storage* __restrict vmax, AdamScalars<typename E::Compute> k,
               int64_t begin, int64_t end) {
  using C = typename E::Compute;
  k.amsgrad = kAmsgrad;
  k.maximize = kMaximize;
  k.has_wd = kWd;
  k.decoupled = kDecoupled;
  for (int64_t j = begin; j < end; ++j) {
    C pj = E::Load(p[j]), mj = E::Load(m[j]), vj = E::Load(v[j]);
    C vmaxj = kAmsgrad ? E::Load(vmax[j]) : C(0);
    AdamUpdate<C>(pj, mj, vj, vmaxj, E::Load(g[j]), k);
    p[j] = E::Store(pj);
    m[j] = E::Store(mj);
    v[j] = E::Store(vj);
    if constexpr (kAmsgrad) vmax[j] = E::Store(vmaxj);
  }
}

void AdamStepKernel(const KernelContext& ctx) {
  const AdamStepSpec spec = CheckAdamStepArgs(ctx);
  VisitStepDType(spec.dtype, "adam_step", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = ValueElem<T>;
    using C = typename E::Compute;
    using S = typename E::Storage;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const AdamScalars<C> k = AdamScalarsFor<C>(spec, i);
      const size_t o = i * static_cast<size_t>(spec.per_tensor);
      const auto* g = static_cast<const S*>(ctx.inputs[i].data);
      auto* p = static_cast<S*>(ctx.outputs[o].data);
      auto* m = static_cast<S*>(ctx.outputs[o + 1].data);
      auto* v = static_cast<S*>(ctx.outputs[o + 2].data);
      auto* vmax = spec.amsgrad ? static_cast<S*>(ctx.outputs[o + 3].data) : nullptr;
      WithFlag(k.amsgrad, [&](auto ams) {
        WithFlag(k.maximize, [&](auto maximize) {
          WithFlag(k.has_wd, [&](auto wd) {
            WithFlag(k.decoupled && k.has_wd, [&](auto decoupled) {
              auto body = [&](int64_t begin, int64_t end) {
                AdamRange<E, decltype(ams)::value, decltype(maximize)::value, decltype(wd)::value,
                          decltype(decoupled)::value>(g, p, m, v, vmax, k, begin, end);
              };
              ParallelRange(ctx.inputs[i].shape.numel(), kParallelElems, kParallelElems / 4, body);
            });
          });
        });
      });
    }
  });
}

// Tensor i of sgd_step, elements [begin, end); the flags compile-time constants.
template <class E, bool kMomentum, bool kFirst, bool kNesterov, bool kMaximize, bool kWd>
void SgdRange(const typename E::Storage* __restrict g, typename E::Storage* __restrict p,
              typename E::Storage* __restrict buf, SgdScalars<typename E::Compute> k, int64_t begin,
              int64_t end) {
  using C = typename E::Compute;
  k.has_momentum = kMomentum;
  k.first = kFirst;
  k.nesterov = kNesterov;
  k.maximize = kMaximize;
  k.has_wd = kWd;
  for (int64_t j = begin; j < end; ++j) {
    C pj = E::Load(p[j]);
    C bj = kMomentum && !kFirst ? E::Load(buf[j]) : C(0);
    SgdUpdate<C>(pj, bj, E::Load(g[j]), k);
    p[j] = E::Store(pj);
    if constexpr (kMomentum) buf[j] = E::Store(bj);
  }
}

void SgdStepKernel(const KernelContext& ctx) {
  const SgdStepSpec spec = CheckSgdStepArgs(ctx);
  VisitStepDType(spec.dtype, "sgd_step", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = ValueElem<T>;
    using C = typename E::Compute;
    using S = typename E::Storage;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const SgdScalars<C> k = SgdScalarsFor<C>(spec, i);
      const size_t o = i * static_cast<size_t>(spec.per_tensor);
      const auto* g = static_cast<const S*>(ctx.inputs[i].data);
      auto* p = static_cast<S*>(ctx.outputs[o].data);
      auto* buf = spec.per_tensor > 1 ? static_cast<S*>(ctx.outputs[o + 1].data) : nullptr;
      WithFlag(k.has_momentum, [&](auto momentum) {
        WithFlag(k.first && k.has_momentum, [&](auto first) {
          WithFlag(k.nesterov && k.has_momentum, [&](auto nesterov) {
            WithFlag(k.maximize, [&](auto maximize) {
              WithFlag(k.has_wd, [&](auto wd) {
                auto body = [&](int64_t begin, int64_t end) {
                  SgdRange<E, decltype(momentum)::value, decltype(first)::value,
                           decltype(nesterov)::value, decltype(maximize)::value,
                           decltype(wd)::value>(g, p, buf, k, begin, end);
                };
                ParallelRange(ctx.inputs[i].shape.numel(), kParallelElems, kParallelElems / 4,
                              body);
              });
            });
          });
        });
      });
    }
  });
}

void CheckAdamStep(const KernelContext& ctx) { (void)CheckAdamStepArgs(ctx); }
void CheckSgdStep(const KernelContext& ctx) { (void)CheckSgdStepArgs(ctx); }

}  // namespace

OFL_REGISTER_CPU_KERNEL("adam_step", AdamStepKernel, CheckAdamStep);
OFL_REGISTER_CPU_KERNEL("sgd_step", SgdStepKernel, CheckSgdStep);

}  // namespace ofl::kernels::cpu
