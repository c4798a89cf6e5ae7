// Recording: the node an op call leaves when an input requires grad, and the autograd state of the
// tensors it touches.
#include <atomic>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/small_object.h"

namespace ofl {

autograd::AutogradMeta& TensorImpl::mutable_autograd() {
  Extras* e = GetExtras();
  if (!e->autograd) e->autograd = std::make_shared<autograd::AutogradMeta>();
  return *e->autograd;
}

namespace autograd {

namespace {
thread_local bool t_grad_enabled = true;
std::atomic<uint64_t> next_sequence_nr{1};

ops::ArgInfo InfoOf(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  if (const GlobalMeta* g = impl.global().get()) {
    return ops::ArgInfo{g->logical_shape, impl.dtype(), impl.device(), g->placement, g->sbp};
  }
  return ops::ArgInfo{impl.shape(), impl.dtype(), impl.device(), std::nullopt, Sbp::broadcast()};
}
}  // namespace

bool GradModeEnabled() { return t_grad_enabled; }

Tensor Detached(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  auto out = MakeShared<TensorImpl>(impl.shape(), impl.stride(), impl.offset(), impl.storage());
  if (impl.global()) out->set_global(impl.global());  // a global tensor's detach stays global
  return Tensor(std::move(out));
}

bool ShouldRecord(const std::vector<Tensor>& inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor& x : inputs) {
    if (x.defined() && RequiresGrad(*x.impl())) return true;
  }
  return false;
}

namespace {

// A node of `op` over `inputs`: what it saves of them and where their gradients go. `before`,
// when defined, is saved in place of input 0 (an in-place write's old value).
std::shared_ptr<Node> NewNode(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                              const Attrs& attrs, const Tensor& before) {
  auto node = std::make_shared<Node>();
  node->op = &op;
  node->sequence_nr = next_sequence_nr.fetch_add(1, std::memory_order_relaxed);
  node->attrs = attrs;
  const size_t n_in = inputs.size();
  const uint64_t save_inputs = SavedInputs(op, inputs);
  node->next.resize(n_in);
  node->input_info.reserve(n_in);
  node->saved_inputs.resize(n_in);
  node->input_versions.resize(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const Tensor& x = inputs[i];
    node->input_info.push_back(InfoOf(x));
    if (save_inputs & ops::Bit(static_cast<int>(i))) {
      const Tensor& saved = i == 0 && before.defined() ? before : x;
      node->saved_inputs[i] = Detached(saved);
      node->input_versions[i] = saved.impl()->storage()->version();
    }
    AutogradMeta* m = x.impl()->autograd();
    if (m == nullptr) continue;
    if (m->grad_fn) {
      node->next[i].node = m->grad_fn;
      node->next[i].output_nr = m->output_nr;
    } else if (m->requires_grad) {
      node->next[i].leaf = x.impl();
    }
  }
  return node;
}

// The node's outputs: what it saves of them, and the node as their history.
void AttachOutputs(const std::shared_ptr<Node>& node, const std::vector<Tensor>& outputs) {
  const ops::OpSchema& op = *node->op;
  const size_t n_out = outputs.size();
  node->output_info.reserve(n_out);
  node->saved_outputs.resize(n_out);
  node->output_versions.resize(n_out);
  node->retained.resize(n_out);
  for (size_t i = 0; i < n_out; ++i) {
    const Tensor& y = outputs[i];
    node->output_info.push_back(InfoOf(y));
    if (op.save_outputs & ops::Bit(static_cast<int>(i))) {
      node->saved_outputs[i] = Detached(y);
      node->output_versions[i] = y.impl()->storage()->version();
    }
  }
  // Last: the outputs own the node (and nothing the node holds owns them). An integer or bool
  // output has no gradient (PyTorch's rule): it stays out of the graph.
  for (size_t i = 0; i < n_out; ++i) {
    if (!is_floating_point(outputs[i].dtype())) continue;
    AutogradMeta& m = outputs[i].impl()->mutable_autograd();
    m.grad_fn = node;
    m.output_nr = static_cast<int>(i);
  }
}

}  // namespace

uint64_t SavedInputs(const ops::OpSchema& op, const std::vector<Tensor>& inputs) {
  if (op.save_inputs_for == nullptr) return op.save_inputs;
  uint64_t needs = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && RequiresGrad(*inputs[i].impl())) {
      needs |= ops::Bit(static_cast<int>(i));
    }
  }
  return op.save_inputs_for(needs);
}

void Record(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs, const Attrs& attrs) {
  // An op that returned its input itself (contiguous() of a contiguous tensor, to() its own
  // device) made nothing to record; nor did one whose outputs are all integer or bool (a cast to
  // int64), which have no gradient.
  bool any_float = false;
  for (const Tensor& y : outputs) {
    for (const Tensor& x : inputs) {
      if (y.impl() == x.impl()) return;
    }
    any_float = any_float || is_floating_point(y.dtype());
  }
  if (!any_float) return;
  AttachOutputs(NewNode(op, inputs, attrs, Tensor()), outputs);
}

std::shared_ptr<Node> InplaceNode(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                                  const Tensor& before, const Attrs& attrs) {
  return NewNode(op, inputs, attrs, before);
}

void AttachInplace(const std::shared_ptr<Node>& node, const Tensor& target) {
  AttachOutputs(node, {target});
}

void Record(const ops::OpSchema& op, const Tensor& input, const Tensor& output,
            const Attrs& attrs) {
  Record(op, std::vector<Tensor>{input}, std::vector<Tensor>{output}, attrs);
}

}  // namespace autograd

NoGradGuard::NoGradGuard() : prev_(autograd::t_grad_enabled) { autograd::t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { autograd::t_grad_enabled = prev_; }
bool is_grad_enabled() { return autograd::t_grad_enabled; }
void set_grad_enabled(bool enabled) { autograd::t_grad_enabled = enabled; }

}  // namespace ofl
