// Optimizers with PyTorch's names, options and update formulas (torch::optim's in C++): SGD
// (momentum, dampening, nesterov, weight decay), Adam (bias-corrected moments, eps added to the
// corrected root, weight decay added to the gradient, amsgrad) and AdamW (decoupled weight decay).
// A step updates every parameter with a gradient in place, without recording a gradient; the
// options are set PyTorch's way: Adam(params, AdamOptions(1e-3).weight_decay(1e-2)).
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/tensor.h"

namespace ofl::optim {

class Optimizer {
 public:
  // InvalidArgument for no parameters, an undefined one or one that is not a leaf.
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  // Each parameter's gradient cleared (set_to_none) or zeroed.
  void zero_grad(bool set_to_none = true);
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  std::vector<Tensor> params_;
};

// An option `name` of type T: opts.name() reads it, opts.name(v) sets it and returns opts.
#define OFL_OPTIM_OPTION(Options, T, name, init) \
 public:                                         \
  T name() const { return name##_; }             \
  Options& name(T v) {                           \
    name##_ = v;                                 \
    return *this;                                \
  }                                              \
                                                 \
 private:                                        \
  T name##_ = init;

class SGDOptions {
 public:
  explicit SGDOptions(double lr = 1e-3) : lr_(lr) {}
  OFL_OPTIM_OPTION(SGDOptions, double, lr, 1e-3)
  OFL_OPTIM_OPTION(SGDOptions, double, momentum, 0.0)
  OFL_OPTIM_OPTION(SGDOptions, double, dampening, 0.0)
  OFL_OPTIM_OPTION(SGDOptions, double, weight_decay, 0.0)
  OFL_OPTIM_OPTION(SGDOptions, bool, nesterov, false)
};

class AdamOptions {
 public:
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AdamOptions& betas(double beta1, double beta2) {
    beta1_ = beta1;
    beta2_ = beta2;
    return *this;
  }
  OFL_OPTIM_OPTION(AdamOptions, double, lr, 1e-3)
  OFL_OPTIM_OPTION(AdamOptions, double, beta1, 0.9)
  OFL_OPTIM_OPTION(AdamOptions, double, beta2, 0.999)
  OFL_OPTIM_OPTION(AdamOptions, double, eps, 1e-8)
  OFL_OPTIM_OPTION(AdamOptions, double, weight_decay, 0.0)
  OFL_OPTIM_OPTION(AdamOptions, bool, amsgrad, false)
};

#undef OFL_OPTIM_OPTION

// p -= lr * d, d the gradient (+ weight_decay * p), through the momentum buffer
// b = momentum * b + (1 - dampening) * d (b = d at the first step) when momentum is set, and
// d + momentum * b for nesterov. InvalidArgument for a negative lr, momentum or weight decay, and
// nesterov without momentum or with dampening.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  void step() override;
  SGDOptions& options() { return options_; }

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_;
};

// m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2 (v's running maximum for amsgrad),
// p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps); g the gradient
// (+ weight_decay * p for Adam; AdamW instead scales p by 1 - lr * weight_decay first).
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options);
  void step() override;
  AdamOptions& options() { return options_; }

 protected:
  bool decoupled_ = false;

 private:
  AdamOptions options_;
  std::vector<int64_t> steps_;  // per parameter: the steps it took (it had a gradient)
  std::vector<Tensor> exp_avg_, exp_avg_sq_, max_exp_avg_sq_;
};

class AdamW : public Adam {
 public:
  // weight_decay defaults to 1e-2, as torch.optim.AdamW.
  AdamW(std::vector<Tensor> params, AdamOptions options = AdamOptions().weight_decay(1e-2));
};

}  // namespace ofl::optim
