// The multi-tensor optimizer steps ("adam_step", "sgd_step"): one kernel call updates every
// parameter of a list in place, with the formulas of torch.optim's Adam/AdamW and SGD, element by
// element in the order the per-op step computes them (oneflow_lite/optim.cpp), so a float32 or
// float64 step gives the per-op step's values; float16 and bfloat16 compute in float and round
// once per stored value. The math below runs on every device (cpu, and cuda through
// OFL_HOST_DEVICE).
//
// adam_step: inputs  g_0 .. g_{n-1} (the gradients)
//            outputs p_i, m_i, v_i (and vmax_i with amsgrad) for each i, in that order
//            attributes lr, beta1, beta2, eps, weight_decay (double), amsgrad, decoupled (AdamW),
//            maximize (bool), steps (ints: tensor i's step count t, from 1)
// sgd_step:  inputs  g_0 .. g_{n-1}
//            outputs p_i (and buf_i, the momentum buffer, when momentum != 0) for each i
//            attributes lr, momentum, dampening, weight_decay (double), nesterov, maximize (bool),
//            firsts (ints: 1 where tensor i's buffer starts as d, this step)
// Every operand of tensor i has p_i's shape; all share one float dtype; every one is contiguous.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE
#include "kernels/kernel.h"

namespace ofl::kernels {

struct AdamStepSpec {
  double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool amsgrad = false, decoupled = false, maximize = false;
  int per_tensor = 3;          // outputs per tensor: p, m, v (and vmax)
  std::vector<int64_t> steps;  // one per tensor
  DType dtype = DType::kFloat32;
};

struct SgdStepSpec {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
  int per_tensor = 1;           // outputs per tensor: p (and buf)
  std::vector<int64_t> firsts;  // one per tensor
  DType dtype = DType::kFloat32;
};

// The attributes' declarations, as the callers make their Attrs (Attrs(AdamStepAttrs(), lr, ...),
// in the order listed above).
const AttrSchema& AdamStepAttrs();
const AttrSchema& SgdStepAttrs();

// The kernels' argument checks: InvalidArgument naming the kernel and what is wrong (operand
// counts, shapes, dtypes, layouts, attributes, a step count below 1). Host code of every backend
// (kernels/optim_step_spec.cpp).
AdamStepSpec CheckAdamStepArgs(const KernelContext& ctx);
SgdStepSpec CheckSgdStepArgs(const KernelContext& ctx);

// Tensor i's constants, in the compute type C (float, or double for float64).
template <class C>
struct AdamScalars {
  C b1, one_minus_b1, b2, one_minus_b2, eps, wd, decay, bias2_sqrt, step_size;
  bool amsgrad, decoupled, maximize, has_wd;
};

template <class C>
AdamScalars<C> AdamScalarsFor(const AdamStepSpec& s, size_t i) {
  const double t = static_cast<double>(s.steps[i]);
  AdamScalars<C> k;
  k.b1 = static_cast<C>(s.beta1);
  k.one_minus_b1 = static_cast<C>(1 - s.beta1);
  k.b2 = static_cast<C>(s.beta2);
  k.one_minus_b2 = static_cast<C>(1 - s.beta2);
  k.eps = static_cast<C>(s.eps);
  k.wd = static_cast<C>(s.weight_decay);
  k.decay = static_cast<C>(1 - s.lr * s.weight_decay);
  k.bias2_sqrt = static_cast<C>(std::sqrt(1 - std::pow(s.beta2, t)));
  k.step_size = static_cast<C>(s.lr / (1 - std::pow(s.beta1, t)));
  k.amsgrad = s.amsgrad;
  k.decoupled = s.decoupled;
  k.maximize = s.maximize;
  k.has_wd = s.weight_decay != 0;
  return k;
}

OFL_HOST_DEVICE inline float StepSqrt(float x) { return ::sqrtf(x); }
OFL_HOST_DEVICE inline double StepSqrt(double x) { return ::sqrt(x); }

// One element of Adam: p, m, v (and vmax with amsgrad) updated in place from the gradient g.
template <class C>
OFL_HOST_DEVICE inline void AdamUpdate(C& p, C& m, C& v, C& vmax, C g, const AdamScalars<C>& k) {
  if (k.maximize) g = -g;
  if (k.has_wd) {
    if (k.decoupled) {
      p = p * k.decay;
    } else {
      g = g + p * k.wd;
    }
  }
  m = m * k.b1;
  m = m + g * k.one_minus_b1;
  v = v * k.b2;
  const C gg = g * g;
  v = v + gg * k.one_minus_b2;
  C vv = v;
  if (k.amsgrad) {
    if (vmax < v || v != v) vmax = v;  // the maximum op's: a NaN in either wins
    vv = vmax;
  }
  const C root = StepSqrt(vv);
  const C denom = root / k.bias2_sqrt + k.eps;
  const C ratio = m / denom;
  p = p - ratio * k.step_size;
}

template <class C>
struct SgdScalars {
  C lr, momentum, one_minus_dampening, wd;
  bool has_momentum, nesterov, maximize, has_wd, first;
};

template <class C>
SgdScalars<C> SgdScalarsFor(const SgdStepSpec& s, size_t i) {
  SgdScalars<C> k;
  k.lr = static_cast<C>(s.lr);
  k.momentum = static_cast<C>(s.momentum);
  k.one_minus_dampening = static_cast<C>(1 - s.dampening);
  k.wd = static_cast<C>(s.weight_decay);
  k.has_momentum = s.momentum != 0;
  k.nesterov = s.nesterov;
  k.maximize = s.maximize;
  k.has_wd = s.weight_decay != 0;
  k.first = s.firsts[i] != 0;
  return k;
}

// One element of SGD: p (and the momentum buffer buf) updated in place from the gradient g.
template <class C>
OFL_HOST_DEVICE inline void SgdUpdate(C& p, C& buf, C g, const SgdScalars<C>& k) {
  C d = k.maximize ? -g : g;
  if (k.has_wd) d = d + p * k.wd;
  if (k.has_momentum) {
    if (k.first) {
      buf = d;
    } else {
      buf = buf * k.momentum;
      buf = buf + d * k.one_minus_dampening;
    }
    d = k.nesterov ? d + buf * k.momentum : buf;
  }
  p = p - d * k.lr;
}

}  // namespace ofl::kernels
