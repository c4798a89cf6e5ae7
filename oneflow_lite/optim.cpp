// The optimizers of oneflow_lite/optim.h: each step updates every parameter with a gradient in
// place, under no-grad, by one multi-tensor instruction per device and dtype
// (functional/optim_step.h), and by public ops for a parameter that kernel cannot take.
#include "oneflow_lite/optim.h"

#include <cmath>
#include <string>
#include <utility>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/optim_step.h"
#include "oneflow_lite/nn.h"

namespace ofl::optim {

namespace {
void Need(bool ok, const std::string& message) {
  if (!ok) throw InvalidArgument(message);
}
std::string Num(double v) { return std::to_string(v); }
}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  Need(!params_.empty(), "optimizer got an empty parameter list");
  for (size_t i = 0; i < params_.size(); ++i) {
    Need(params_[i].defined(), "optimizer: parameter " + std::to_string(i) + " is undefined");
    Need(params_[i].is_leaf(),
         "optimizer: can't optimize a non-leaf Tensor (parameter " + std::to_string(i) + ")");
  }
}

void Optimizer::zero_grad(bool set_to_none) { nn::zero_grad(params_, set_to_none); }

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params)), options_(options), momentum_(params_.size()) {
  Need(options_.lr() >= 0, "SGD: Invalid learning rate: " + Num(options_.lr()));
  Need(options_.momentum() >= 0, "SGD: Invalid momentum value: " + Num(options_.momentum()));
  Need(options_.weight_decay() >= 0,
       "SGD: Invalid weight_decay value: " + Num(options_.weight_decay()));
  Need(!options_.nesterov() || (options_.momentum() > 0 && options_.dampening() == 0),
       "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  const double lr = options_.lr(), mu = options_.momentum(), damp = options_.dampening();
  const double wd = options_.weight_decay();
  std::vector<size_t> with;  // the parameters with a gradient
  std::vector<Tensor> ps, gs, bufs;
  std::vector<bool> firsts;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue;
    with.push_back(i);
    ps.push_back(params_[i]);
    gs.push_back(std::move(g));
    if (mu != 0) {
      Tensor& buf = momentum_[i];
      firsts.push_back(!buf.defined());
      if (!buf.defined()) {
        // No memory yet: the step's instruction allocates it as its output (a global parameter's:
        // each shard's, laid out as the parameter).
        buf = params_[i].is_global() ? empty_like(params_[i])
                                     : functional::NewTensor(params_[i].shape(), params_[i].dtype(),
                                                             params_[i].device());
      }
      bufs.push_back(buf);
    }
  }
  const functional::SgdStepArgs args{lr, mu, damp, wd, options_.nesterov(), false};
  // The per-op step for the parameters the multi-tensor kernel left.
  for (size_t k : functional::SgdStep(ps, gs, bufs, firsts, args)) {
    Tensor& p = params_[with[k]];
    Tensor d = gs[k];
    if (wd != 0) d = d + p * wd;
    if (mu != 0) {
      Tensor& buf = momentum_[with[k]];
      if (firsts[k]) {
        buf = d.clone();
      } else {
        buf.mul_(mu).add_(d * (1 - damp));
      }
      d = options_.nesterov() ? d + buf * mu : buf;
    }
    p.sub_(d * lr);
  }
}

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Optimizer(std::move(params)),
      options_(options),
      steps_(params_.size(), 0),
      exp_avg_(params_.size()),
      exp_avg_sq_(params_.size()),
      max_exp_avg_sq_(params_.size()) {
  Need(options_.lr() >= 0, "Adam: Invalid learning rate: " + Num(options_.lr()));
  Need(options_.eps() >= 0, "Adam: Invalid epsilon value: " + Num(options_.eps()));
  Need(options_.beta1() >= 0 && options_.beta1() < 1,
       "Adam: Invalid beta parameter at index 0: " + Num(options_.beta1()));
  Need(options_.beta2() >= 0 && options_.beta2() < 1,
       "Adam: Invalid beta parameter at index 1: " + Num(options_.beta2()));
  Need(options_.weight_decay() >= 0,
       "Adam: Invalid weight_decay value: " + Num(options_.weight_decay()));
}

void Adam::step() {
  NoGradGuard no_grad;
  const double lr = options_.lr(), b1 = options_.beta1(), b2 = options_.beta2();
  const double eps = options_.eps(), wd = options_.weight_decay();
  const bool amsgrad = options_.amsgrad();
  std::vector<size_t> with;  // the parameters with a gradient
  std::vector<Tensor> ps, gs, ms, vs, vmaxs;
  std::vector<int64_t> ts;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue;
    const Tensor& p = params_[i];
    if (!exp_avg_[i].defined()) {
      exp_avg_[i] = zeros_like(p);
      exp_avg_sq_[i] = zeros_like(p);
      if (amsgrad) max_exp_avg_sq_[i] = zeros_like(p);
    }
    with.push_back(i);
    ps.push_back(p);
    gs.push_back(std::move(g));
    ms.push_back(exp_avg_[i]);
    vs.push_back(exp_avg_sq_[i]);
    if (amsgrad) vmaxs.push_back(max_exp_avg_sq_[i]);
    ts.push_back(++steps_[i]);
  }
  const functional::AdamStepArgs args{lr, b1, b2, eps, wd, amsgrad, decoupled_, false};
  // The per-op step for the parameters the multi-tensor kernel left.
  for (size_t k : functional::AdamStep(ps, gs, ms, vs, vmaxs, ts, args)) {
    const size_t i = with[k];
    Tensor& p = params_[i];
    Tensor g = gs[k];
    if (wd != 0) {
      if (decoupled_) {
        p.mul_(1 - lr * wd);
      } else {
        g = g + p * wd;
      }
    }
    exp_avg_[i].mul_(b1).add_(g * (1 - b1));
    exp_avg_sq_[i].mul_(b2).add_(g * g * (1 - b2));
    const double t = static_cast<double>(ts[k]);
    const double bias1 = 1 - std::pow(b1, t);
    const double bias2_sqrt = std::sqrt(1 - std::pow(b2, t));
    Tensor v = exp_avg_sq_[i];
    if (amsgrad) {
      max_exp_avg_sq_[i].copy_(maximum(max_exp_avg_sq_[i], v));
      v = max_exp_avg_sq_[i];
    }
    const Tensor denom = sqrt(v) / bias2_sqrt + eps;
    p.sub_(exp_avg_[i] / denom * (lr / bias1));
  }
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options) {
  decoupled_ = true;
}

}  // namespace ofl::optim
