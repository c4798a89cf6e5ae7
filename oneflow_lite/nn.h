// Modules with PyTorch's names and semantics (torch::nn's in C++): a Module registers its
// parameters, buffers and submodules by name, so that parameters(), named_parameters() and
// state_dict() list them in registration order with dotted names ("0.weight" in a Sequential);
// train()/eval() switch the mode of the whole tree; to() moves or converts every parameter and
// buffer (the module's own references stay valid). The layers: Linear (PyTorch's default
// initialisation), ReLU, GELU, Dropout, Sequential. docs/nn_optim.md has the whole page.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/tensor.h"

namespace ofl::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Each tensor's gradient cleared (set_to_none) or zeroed in place: Module::zero_grad and
// optim::Optimizer::zero_grad.
void zero_grad(const std::vector<Tensor>& params, bool set_to_none = true);

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The module's computation on one tensor (InvalidArgument unless the module defines it).
  virtual Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }
  // "Linear", "Sequential", ...: the name errors and printing use.
  virtual std::string name() const { return "Module"; }

  // Every parameter (a defined tensor registered as one) of this module and, with `recurse`, of
  // its submodules, depth first in registration order, each once.
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }

  // The mode of this module and every submodule (Dropout drops only in training).
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  // Every parameter and buffer on `device`; every floating one in `dtype`. A parameter stays a
  // leaf that requires grad as before (its gradient moved too). Make optimizers after this.
  Module& to(const Device& device);
  Module& to(DType dtype);

  // Every parameter and buffer made global over `placement` with `sbp`, or with the SBP
  // `sbp_of(name, tensor)` gives each by its dotted name (tensor parallel: one weight split on its
  // rows, the next on its columns). The values are the first rank of the placement's (broadcast
  // from it, so ranks that initialised differently agree), on the placement's devices; a global
  // tensor is boxed. A parameter stays a leaf that requires grad. Every rank calls it alike; make
  // optimizers after this.
  Module& to_global(const Placement& placement, const Sbp& sbp);
  Module& to_global(const Placement& placement,
                    const std::function<Sbp(const std::string& name, const Tensor& t)>& sbp_of);

  // The parameters and buffers by dotted name: this module's parameters, its buffers, then each
  // submodule's under "<name>.", as torch's state_dict. The tensors are detached views of the
  // module's own.
  NamedTensors state_dict() const;
  // Copies each value into the parameter or buffer of its name (converting dtype and device), in
  // place, without recording a gradient. InvalidArgument naming the keys for a key missing or
  // unknown (strict) and for a shape that differs; nothing is copied then.
  void load_state_dict(const NamedTensors& state, bool strict = true);

  // Each parameter's gradient cleared (set_to_none) or zeroed.
  void zero_grad(bool set_to_none = true);

 protected:
  // Registers `t` as a parameter (a leaf; requires grad when asked) or buffer and returns a
  // reference to the module's own handle, valid for the module's life (to() replaces what it
  // holds). An undefined tensor is an absent parameter (Linear without bias).
  Tensor& register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, Tensor t);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    AddChild(name, module);
    return module;
  }

 private:
  struct Slot {
    std::string name;
    std::unique_ptr<Tensor> tensor;
  };
  void AddChild(const std::string& name, std::shared_ptr<Module> module);
  void Collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors* out,
               std::vector<const void*>* seen) const;
  void StateDict(const std::string& prefix, NamedTensors* out) const;
  // Every parameter and buffer handle of the tree, by dotted name.
  std::vector<std::pair<std::string, Tensor*>> Slots(const std::string& prefix = "");
  Module& Apply(bool (*wants)(const Tensor&),
                const std::function<Tensor(const std::string& name, const Tensor&)>& f);

  std::vector<Slot> params_;
  std::vector<Slot> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// y = x W^T + b, W (out_features, in_features), with PyTorch's initialisation: W uniform in
// +-1/sqrt(in_features) (kaiming_uniform_ with a = sqrt(5)), then b uniform in the same bound,
// drawn in that order from the generator of the device's type.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::kFloat32,
         const Device& device = Device(DeviceType::kCPU, 0));
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Linear"; }
  int64_t in_features, out_features;
  Tensor& weight;
  Tensor& bias;  // undefined without bias
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "ReLU"; }
};

class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none") : approximate_(std::move(approximate)) {}
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "GELU"; }

 private:
  std::string approximate_;
};

// In training, each element zeroed with probability p and the others scaled by 1 / (1 - p);
// the identity in eval mode.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Dropout"; }

 private:
  double p_;
};

// The modules called in order, named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  Sequential& push_back(std::shared_ptr<Module> module);
  Tensor forward(const Tensor& x) override;
  std::string name() const override { return "Sequential"; }
  size_t size() const { return named_children().size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const {
    return named_children().at(i).second;
  }
};

}  // namespace ofl::nn
