// The modules of oneflow_lite/nn.h: registration, traversal, modes, devices and dtypes, state
// dicts, and the layers.
#include "oneflow_lite/nn.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/random.h"

namespace ofl::nn {

Tensor Module::forward(const Tensor&) {
  throw InvalidArgument(name() + ": forward(x) is not defined for this module");
}

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw InvalidArgument(this->name() + ": parameter name '" + name +
                          "' must be non-empty and hold no '.'");
  }
  for (const Slot& s : params_) {
    if (s.name == name) {
      throw InvalidArgument(this->name() + ": a parameter named '" + name + "' exists already");
    }
  }
  if (t.defined()) {
    t = t.detach();
    if (requires_grad) t.requires_grad_(true);
  }
  params_.push_back(Slot{name, std::make_unique<Tensor>(std::move(t))});
  return *params_.back().tensor;
}

Tensor& Module::register_buffer(const std::string& name, Tensor t) {
  for (const Slot& s : buffers_) {
    if (s.name == name) {
      throw InvalidArgument(this->name() + ": a buffer named '" + name + "' exists already");
    }
  }
  buffers_.push_back(Slot{name, std::make_unique<Tensor>(std::move(t))});
  return *buffers_.back().tensor;
}

void Module::AddChild(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw InvalidArgument(this->name() + ": submodule '" + name + "' is null");
  for (const auto& c : children_) {
    if (c.first == name) {
      throw InvalidArgument(this->name() + ": a submodule named '" + name + "' exists already");
    }
  }
  children_.emplace_back(name, std::move(module));
}

void Module::Collect(const std::string& prefix, bool recurse, bool buffers, NamedTensors* out,
                     std::vector<const void*>* seen) const {
  for (const Slot& s : buffers ? buffers_ : params_) {
    const Tensor& t = *s.tensor;
    if (!t.defined()) continue;
    const void* key = t.impl().get();
    if (std::find(seen->begin(), seen->end(), key) != seen->end()) continue;
    seen->push_back(key);
    out->emplace_back(prefix + s.name, t);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_) {
    child->Collect(prefix + name + ".", true, buffers, out, seen);
  }
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  std::vector<const void*> seen;
  Collect("", recurse, /*buffers=*/false, &out, &seen);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  std::vector<const void*> seen;
  Collect("", recurse, /*buffers=*/true, &out, &seen);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.second->train(on);
  return *this;
}

std::vector<std::pair<std::string, Tensor*>> Module::Slots(const std::string& prefix) {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (Slot& s : params_) out.emplace_back(prefix + s.name, s.tensor.get());
  for (Slot& s : buffers_) out.emplace_back(prefix + s.name, s.tensor.get());
  for (auto& [name, child] : children_) {
    for (auto& slot : child->Slots(prefix + name + ".")) out.push_back(std::move(slot));
  }
  return out;
}

Module& Module::Apply(bool (*wants)(const Tensor&),
                      const std::function<Tensor(const std::string& name, const Tensor&)>& f) {
  std::set<Tensor*> done;
  for (auto& [name, slot] : Slots()) {
    if (!done.insert(slot).second || !slot->defined() || !wants(*slot)) continue;
    const bool is_param = slot->requires_grad() && slot->is_leaf();
    Tensor grad = is_param ? slot->grad() : Tensor();
    Tensor moved;
    {
      NoGradGuard no_grad;
      moved = f(name, *slot);
    }
    if (moved.impl() == slot->impl()) continue;
    moved = moved.detach();
    if (is_param) {
      moved.requires_grad_(true);
      if (grad.defined()) {
        NoGradGuard no_grad;
        moved.set_grad(f(name, grad));
      }
    }
    *slot = moved;
  }
  return *this;
}

Module& Module::to(const Device& device) {
  return Apply([](const Tensor&) { return true; },
               [device](const std::string&, const Tensor& t) { return t.to(device); });
}

Module& Module::to_global(const Placement& placement, const Sbp& sbp) {
  return to_global(placement, [sbp](const std::string&, const Tensor&) { return sbp; });
}

Module& Module::to_global(
    const Placement& placement,
    const std::function<Sbp(const std::string& name, const Tensor& t)>& sbp_of) {
  const Placement first(placement.device_type(), {placement.ranks()[0]});
  return Apply([](const Tensor&) { return true; },
               [&](const std::string& name, const Tensor& t) {
                 const Sbp sbp = sbp_of(name, t);
                 // A local tensor: the first rank's, broadcast from it by the placement change.
                 const Tensor g = t.is_global() ? t : t.to_global(first, Sbp::broadcast());
                 return g.to_global(placement, sbp);
               });
}

Module& Module::to(DType dtype) {
  if (!is_floating_point(dtype)) {
    throw InvalidArgument(name() + ": to(dtype) takes a floating dtype, got " + to_string(dtype));
  }
  return Apply([](const Tensor& t) { return is_floating_point(t.dtype()); },
               [dtype](const std::string&, const Tensor& t) { return t.to(dtype); });
}

void Module::StateDict(const std::string& prefix, NamedTensors* out) const {
  for (const Slot& s : params_) {
    if (s.tensor->defined()) out->emplace_back(prefix + s.name, s.tensor->detach());
  }
  for (const Slot& s : buffers_) {
    if (s.tensor->defined()) out->emplace_back(prefix + s.name, s.tensor->detach());
  }
  for (const auto& [name, child] : children_) child->StateDict(prefix + name + ".", out);
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  StateDict("", &out);
  return out;
}

void Module::load_state_dict(const NamedTensors& state, bool strict) {
  NamedTensors own;
  StateDict("", &own);
  // The module's own handles in state_dict order: the values are copied into them.
  std::vector<Tensor*> slots;
  {
    std::function<void(Module&)> walk = [&](Module& m) {
      for (Slot& s : m.params_) {
        if (s.tensor->defined()) slots.push_back(s.tensor.get());
      }
      for (Slot& s : m.buffers_) {
        if (s.tensor->defined()) slots.push_back(s.tensor.get());
      }
      for (auto& c : m.children_) walk(*c.second);
    };
    walk(*this);
  }
  std::string missing, unexpected, mismatched;
  std::vector<std::pair<Tensor*, Tensor>> copies;
  for (size_t i = 0; i < own.size(); ++i) {
    const auto it = std::find_if(state.begin(), state.end(),
                                 [&](const auto& kv) { return kv.first == own[i].first; });
    if (it == state.end()) {
      missing += (missing.empty() ? "\"" : ", \"") + own[i].first + "\"";
      continue;
    }
    if (!it->second.defined() || it->second.shape() != own[i].second.shape()) {
      mismatched += "\n\tsize mismatch for " + own[i].first + ": copying a param with shape " +
                    (it->second.defined() ? it->second.shape().str() : std::string("(undefined)")) +
                    " from checkpoint, the shape in current model is " +
                    own[i].second.shape().str();
      continue;
    }
    copies.emplace_back(slots[i], it->second);
  }
  for (const auto& entry : state) {
    const std::string& key = entry.first;
    const bool known =
        std::any_of(own.begin(), own.end(), [&key](const auto& kv) { return kv.first == key; });
    if (!known) unexpected += (unexpected.empty() ? "\"" : ", \"") + key + "\"";
  }
  std::string errors;
  if (strict && !unexpected.empty()) {
    errors += "\n\tUnexpected key(s) in state_dict: " + unexpected + ".";
  }
  if (strict && !missing.empty()) errors += "\n\tMissing key(s) in state_dict: " + missing + ".";
  errors += mismatched;
  if (!errors.empty()) {
    throw InvalidArgument("load_state_dict: Error(s) in loading state_dict for " + name() + ":" +
                          errors);
  }
  NoGradGuard no_grad;
  for (auto& [slot, value] : copies) slot->copy_(value);
}

void zero_grad(const std::vector<Tensor>& params, bool set_to_none) {
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      Tensor(p).set_grad(Tensor());
    } else {
      NoGradGuard no_grad;
      g.zero_();
    }
  }
}

void Module::zero_grad(bool set_to_none) { nn::zero_grad(parameters(), set_to_none); }

namespace {
// Linear's weight shape (out, in); checked before any tensor is made.
Shape LinearWeightShape(int64_t in, int64_t out) {
  if (in < 0 || out < 0) {
    throw InvalidArgument("Linear: in_features and out_features must be non-negative, got " +
                          std::to_string(in) + " and " + std::to_string(out));
  }
  return Shape(std::vector<int64_t>{out, in});
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool with_bias, DType dtype, const Device& device)
    : in_features(in),
      out_features(out),
      weight(register_parameter("weight", empty(LinearWeightShape(in, out), dtype, device))),
      bias(register_parameter(
          "bias", with_bias ? empty(Shape(std::vector<int64_t>{out}), dtype, device) : Tensor())) {
  const double bound = in > 0 ? 1.0 / std::sqrt(static_cast<double>(in)) : 0.0;
  NoGradGuard no_grad;
  weight.uniform_(-bound, bound);
  if (bias.defined()) bias.uniform_(-bound, bound);
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight, bias); }

Tensor ReLU::forward(const Tensor& x) { return relu(x); }

Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate_); }

Dropout::Dropout(double p) : p_(p) {
  if (!(p >= 0 && p <= 1)) {
    throw InvalidArgument("Dropout: probability has to be between 0 and 1, but got " +
                          std::to_string(p));
  }
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p_, is_training()); }

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& m : modules) push_back(m);
}

Sequential& Sequential::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(named_children().size()), std::move(module));
  return *this;
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& c : named_children()) y = c.second->forward(y);
  return y;
}

}  // namespace ofl::nn
