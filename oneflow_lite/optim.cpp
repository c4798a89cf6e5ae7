// The optimizers of oneflow_lite/optim.h: each step is public ops on each parameter with a
// gradient, in place, under no-grad.
#include "oneflow_lite/optim.h"

#include <cmath>
#include <string>
#include <utility>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
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
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor d = p.grad();
    if (!d.defined()) continue;
    if (wd != 0) d = d + p * wd;
    if (mu != 0) {
      Tensor& buf = momentum_[i];
      if (!buf.defined()) {
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
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!exp_avg_[i].defined()) {
      exp_avg_[i] = zeros_like(p);
      exp_avg_sq_[i] = zeros_like(p);
      if (options_.amsgrad()) max_exp_avg_sq_[i] = zeros_like(p);
    }
    const int64_t t = ++steps_[i];
    if (wd != 0) {
      if (decoupled_) {
        p.mul_(1 - lr * wd);
      } else {
        g = g + p * wd;
      }
    }
    exp_avg_[i].mul_(b1).add_(g * (1 - b1));
    exp_avg_sq_[i].mul_(b2).add_(g * g * (1 - b2));
    const double bias1 = 1 - std::pow(b1, static_cast<double>(t));
    const double bias2_sqrt = std::sqrt(1 - std::pow(b2, static_cast<double>(t)));
    Tensor v = exp_avg_sq_[i];
    if (options_.amsgrad()) {
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
