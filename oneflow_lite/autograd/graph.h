// The autograd graph: a tensor's autograd state, the nodes that recorded ops leave behind, and how
// an op call records one. Internal (the public side is oneflow_lite/autograd.h and tensor.h).
//
// Ownership runs one way, so a graph dropped without backward frees everything: an output's state
// owns the node that made it; a node owns the nodes of its inputs (edges) and the leaves it feeds;
// what a node saved is a detached view (no autograd state), so a saved output does not keep its
// own node alive. A backward with create_graph unpacks the saved tensors with their history for
// the length of the node's backward (engine.cpp, Unpacked).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "oneflow_lite/tensor.h"
#include "oneflow_lite/tensor_impl.h"
#include "ops/op_schema.h"

namespace ofl::autograd {

struct Node;

// Where a gradient goes: output `output_nr` of a producer's node, or a leaf that requires grad.
struct Edge {
  std::shared_ptr<Node> node;
  int output_nr = 0;
  std::shared_ptr<TensorImpl> leaf;
  bool valid() const { return node != nullptr || leaf != nullptr; }
};

struct AutogradMeta {
  bool requires_grad = false;  // a leaf's flag; a tensor with grad_fn requires grad
  bool retains_grad = false;
  // Guards `grad`: backward() and autograd::grad run on the calling thread (from Python, without
  // the GIL), so two threads whose graphs share a leaf accumulate into it at once.
  mutable std::mutex grad_mu;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  int output_nr = 0;              // which output of grad_fn this tensor is
};

// Made by std::make_shared only (record.cpp): a backward with create_graph hands the node itself
// to the saved outputs it unpacks (shared_from_this).
struct Node : std::enable_shared_from_this<Node> {
  const ops::OpSchema* op = nullptr;
  uint64_t sequence_nr = 0;  // creation order: later nodes run first
  std::vector<Edge> next;    // one per input (invalid: the input needs no gradient)
  std::vector<ops::ArgInfo> input_info, output_info;
  Attrs attrs;
  std::vector<Tensor> saved_inputs, saved_outputs;  // detached; undefined where not saved
  std::vector<uint32_t> input_versions, output_versions;
  std::vector<std::weak_ptr<TensorImpl>> retained;  // per output: one that called retain_grad()
  bool released = false;  // a backward without retain_graph freed what it saved
};

inline bool RequiresGrad(const TensorImpl& t) {
  const AutogradMeta* m = t.autograd();
  return m != nullptr && (m->requires_grad || m->grad_fn != nullptr);
}

// Whether a call on these inputs records a node: grad mode on and one of them requires grad.
bool ShouldRecord(const std::vector<Tensor>& inputs);
inline bool ShouldRecord(const Tensor& x);

// Records the call's node and makes the outputs non-leaves that require grad; the caller (the
// autograd stage of an op call) found ShouldRecord true.
void Record(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs, const Attrs& attrs);
// The single-input, single-output form.
void Record(const ops::OpSchema& op, const Tensor& input, const Tensor& output, const Attrs& attrs);
// Which inputs a node of `op` on these inputs saves (bit i: input i): the op's save_inputs, or
// its save_inputs_for of the inputs that require grad.
uint64_t SavedInputs(const ops::OpSchema& op, const std::vector<Tensor>& inputs);
// An in-place write of inputs[0] as a node of `op`, the write's out-of-place form, in two steps
// around the write. InplaceNode, before the write is issued: input 0 is inputs[0]'s history
// before the write, `before` (a copy of its old value, undefined unless SavedInputs has bit 0)
// is what the node saves of it, and the other saved inputs keep the versions they had before the
// write (so a source that is the target itself is caught at backward, as in PyTorch).
// AttachInplace, after: the node becomes inputs[0]'s history. The caller applied the in-place
// rules.
std::shared_ptr<Node> InplaceNode(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                                  const Tensor& before, const Attrs& attrs);
void AttachInplace(const std::shared_ptr<Node>& node, const Tensor& target);

// A view of t's storage with no autograd state (Tensor::detach, saved tensors).
Tensor Detached(const Tensor& t);

bool GradModeEnabled();

inline bool ShouldRecord(const Tensor& x) {
  return x.defined() && RequiresGrad(*x.impl()) && GradModeEnabled();
}

}  // namespace ofl::autograd
