// The backward engine: walks the nodes behind the roots on the calling thread, latest first, and
// issues each node's backward (public ops, so ordinary VM instructions: a backward is as
// asynchronous as the forward). Gradients that meet at a node's output are summed out of place in
// the order they arrive, and that order is fixed by the nodes' sequence numbers: the same sums, so
// the same bits, on every run, thread count and device.
#include <algorithm>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/autograd/engine.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "oneflow_lite/small_object.h"
#include "vm/instructions_builder.h"

namespace ofl::autograd {

namespace {

std::string Describe(const Shape& shape, DType dtype) {
  return "shape " + shape.str() + " dtype " + to_string(dtype);
}

// Sets the calling thread's grad mode for a scope, restoring the mode it found.
class GradModeScope {
 public:
  explicit GradModeScope(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeScope() { set_grad_enabled(prev_); }
  GradModeScope(const GradModeScope&) = delete;
  GradModeScope& operator=(const GradModeScope&) = delete;

 private:
  bool prev_;
};

// A saved tensor with the history it had when it was saved, for a backward that records itself
// (create_graph), as PyTorch's SavedVariable::unpack: a leaf input is the leaf itself (when the
// saved view is the leaf's own: the in-place copy of an old value has no history to give), an
// input made by an op is a view with that op's node as its grad_fn, and an output is a view with
// this node as its grad_fn.
Tensor WithHistory(const Tensor& saved, const std::shared_ptr<Node>& grad_fn, int output_nr,
                   const std::shared_ptr<TensorImpl>& leaf) {
  if (!saved.defined() || !is_floating_point(saved.dtype())) return saved;
  const TensorImpl& s = *saved.impl();
  if (leaf) {
    const bool same = leaf->storage() == s.storage() && leaf->shape() == s.shape() &&
                      leaf->stride() == s.stride() && leaf->offset() == s.offset();
    return same ? Tensor(leaf) : saved;
  }
  if (!grad_fn) return saved;
  Tensor t(MakeShared<TensorImpl>(s.shape(), s.stride(), s.offset(), s.storage()));
  if (s.global()) t.impl()->set_global(s.global());
  AutogradMeta& m = t.impl()->mutable_autograd();
  m.grad_fn = grad_fn;
  m.output_nr = output_nr;
  return t;
}

// Zeros in the place of a gradient that did not arrive: broadcast over the placement for a global
// tensor.
Tensor GlobalZeros(const ops::ArgInfo& info, DType dtype) {
  return functional::GlobalFull("backward", info.shape, 0, dtype, *info.placement,
                                Sbp::broadcast());
}

Tensor ZerosOf(const ops::ArgInfo& info) {
  if (info.placement) return GlobalZeros(info, info.dtype);
  return zeros(info.shape, info.dtype, info.device);
}

struct Run {
  bool accumulate;
  bool retain_graph;
  bool create_graph = false;
  std::vector<Edge> captures;
  std::vector<Tensor> captured;
  // Pruning (autograd::grad): only the nodes on a path from a root to a captured edge run; the
  // rest of the graph is neither run nor freed, as PyTorch's exec_info. Empty: every node runs.
  bool prune = false;
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  struct Later {
    bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
  };
  std::priority_queue<Node*, std::vector<Node*>, Later> ready;

  static Tensor Sum(const Tensor& acc, const Tensor& g) { return acc.defined() ? add(acc, g) : g; }

  void Capture(const Edge& e, const Tensor& g) {
    for (size_t i = 0; i < captures.size(); ++i) {
      const Edge& c = captures[i];
      const bool same =
          e.leaf ? c.leaf == e.leaf : (c.node == e.node && c.output_nr == e.output_nr);
      if (same) captured[i] = Sum(captured[i], g);
    }
  }

  // g by value: a gradient moved in that nothing else holds can become a leaf's .grad as it is.
  void Deliver(const Edge& e, Tensor g) {
    if (!captures.empty()) Capture(e, g);
    if (e.leaf) {
      if (accumulate && Wanted(e)) AccumulateGrad(*e.leaf, std::move(g), create_graph);
      return;
    }
    if (!Runs(e.node.get())) return;
    std::vector<Tensor>& buf = buffers[e.node.get()];
    if (buf.empty()) buf.resize(e.node->output_info.size());
    vm::OpNameScope scope("GradSum");  // gradients meeting at one output, summed out of place
    buf[e.output_nr] = Sum(buf[e.output_nr], g);
  }

  bool IsCaptured(const Edge& e) const {
    for (const Edge& c : captures) {
      if (e.leaf ? c.leaf == e.leaf : (c.node == e.node && c.output_nr == e.output_nr)) {
        return true;
      }
    }
    return false;
  }

  bool Runs(const Node* n) const { return !prune || needed.count(const_cast<Node*>(n)) != 0; }

  // Whether a gradient sent along e is used: a capture, a node that runs, or a leaf that still
  // requires grad when backward() accumulates (a leaf whose requires_grad was turned off after it
  // was used gets no .grad, as in PyTorch).
  bool Wanted(const Edge& e) const {
    if (!e.valid()) return false;
    if (!captures.empty() && IsCaptured(e)) return true;
    if (e.node) return Runs(e.node.get());
    if (!accumulate) return false;
    const AutogradMeta* m = e.leaf->autograd();
    return m != nullptr && m->requires_grad;
  }

  // Marks the nodes some capture needs: a node is needed when one of its edges is a capture or
  // leads to a needed node. Iterative (a graph may be a chain of many thousand nodes).
  void MarkNeeded(const std::vector<Node*>& roots) {
    prune = true;
    std::unordered_map<Node*, bool> done;  // false: on the stack, its edges being visited
    std::vector<std::pair<Node*, size_t>> stack;
    for (Node* r : roots) {
      if (done.count(r)) continue;
      done[r] = false;
      stack.emplace_back(r, 0);
      while (!stack.empty()) {
        auto& [n, i] = stack.back();
        if (i < n->next.size()) {
          const Edge& e = n->next[i++];
          if (e.node && !done.count(e.node.get())) {
            done[e.node.get()] = false;
            stack.emplace_back(e.node.get(), 0);
          }
          continue;
        }
        bool need = false;
        for (const Edge& e : n->next) {
          if (!e.valid()) continue;
          if (IsCaptured(e) || (e.node && needed.count(e.node.get()))) need = true;
        }
        if (need) needed.insert(n);
        done[n] = true;
        stack.pop_back();
      }
    }
  }

  // Counts, for every node that runs, the edges from running nodes into it. Each root is walked
  // once, however many roots name it (autograd::grad([y, y], ...)).
  void CountDependencies(const std::vector<Node*>& roots) {
    std::unordered_set<Node*> seen;
    std::vector<Node*> stack;
    for (Node* r : roots) {
      if (Runs(r) && seen.insert(r).second) stack.push_back(r);
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next) {
        if (!e.node || !Runs(e.node.get())) continue;
        ++dependencies[e.node.get()];
        if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
      }
    }
  }

  void CheckSaved(const Node& n) {
    const std::string name = n.op->backward_name;
    // As PyTorch: only a node that saved something refuses a second pass.
    if (n.released && (n.op->save_inputs != 0 || n.op->save_outputs != 0)) {
      throw Error("backward: trying to backward through the graph a second time: the tensors " +
                  name +
                  " saved were freed by the first backward; pass retain_graph=true to the first "
                  "backward (or autograd::grad) to backward through a graph twice");
    }
    auto check = [&](const std::vector<Tensor>& saved, const std::vector<uint32_t>& versions,
                     const char* what) {
      for (size_t i = 0; i < saved.size(); ++i) {
        if (!saved[i].defined()) continue;
        const uint32_t now = saved[i].impl()->storage()->version();
        if (now != versions[i]) {
          throw Error(
              "backward: one of the tensors needed for gradient computation has been modified by "
              "an in-place operation: " +
              std::string(what) + " " + std::to_string(i) + " of " + name + " is at version " +
              std::to_string(now) + ", expected version " + std::to_string(versions[i]) +
              " (the version it had when " + n.op->name + " saved it)");
        }
      }
    };
    check(n.saved_inputs, n.input_versions, "input");
    check(n.saved_outputs, n.output_versions, "output");
  }

  void Finish(Node* n) {
    for (const Edge& e : n->next) {
      if (!e.node) continue;
      if (--dependencies[e.node.get()] == 0) ready.push(e.node.get());
    }
    if (!retain_graph) {
      n->saved_inputs.clear();
      n->saved_outputs.clear();
      n->released = true;
    }
  }

  void Execute(Node* n) {
    auto it = buffers.find(n);
    std::vector<Tensor> grads;
    if (it != buffers.end()) grads = std::move(it->second), buffers.erase(it);
    const bool any =
        std::any_of(grads.begin(), grads.end(), [](const Tensor& g) { return g.defined(); });
    if (!any) {  // nothing reached this node: nothing flows on from it
      Finish(n);
      return;
    }
    CheckSaved(*n);
    for (size_t i = 0; i < grads.size(); ++i) {
      const ops::ArgInfo& info = n->output_info[i];
      if (!grads[i].defined()) grads[i] = ZerosOf(info);
      if (accumulate) {
        if (auto kept = n->retained[i].lock()) AccumulateGrad(*kept, grads[i], create_graph);
      }
    }
    if (!n->op->backward) {
      throw InvalidArgument("backward: op '" + n->op->name +
                            "' has no backward (its definition gives none), so no gradient "
                            "flows through it");
    }
    uint64_t needs = 0;
    for (size_t i = 0; i < n->next.size() && i < 64; ++i) {
      if (Wanted(n->next[i])) needs |= uint64_t{1} << i;
    }
    std::vector<Tensor> inputs_now, outputs_now;
    if (create_graph) {
      for (size_t i = 0; i < n->saved_inputs.size(); ++i) {
        const Edge& e = n->next[i];
        inputs_now.push_back(WithHistory(n->saved_inputs[i], e.node, e.output_nr, e.leaf));
      }
      const std::shared_ptr<Node> self = n->shared_from_this();
      for (size_t i = 0; i < n->saved_outputs.size(); ++i) {
        outputs_now.push_back(WithHistory(n->saved_outputs[i], self, static_cast<int>(i), nullptr));
      }
    }
    const ops::GradContext ctx{needs,
                               create_graph ? inputs_now : n->saved_inputs,
                               create_graph ? outputs_now : n->saved_outputs,
                               n->input_info,
                               n->output_info,
                               n->attrs,
                               &GlobalZeros};
    std::vector<Tensor> in_grads;
    {
      vm::OpNameScope scope(n->op->backward_name.c_str());
      in_grads = n->op->backward(ctx, grads);
    }
    if (in_grads.size() != n->next.size()) {
      throw InvalidArgument("backward: " + n->op->backward_name + " returned " +
                            std::to_string(in_grads.size()) + " gradients for " +
                            std::to_string(n->next.size()) + " inputs");
    }
    for (size_t i = 0; i < in_grads.size(); ++i) {
      const Edge& e = n->next[i];
      Tensor& g = in_grads[i];
      if (!g.defined() || !(needs >> i & 1)) continue;
      const ops::ArgInfo& info = n->input_info[i];
      if (g.shape() != info.shape || g.dtype() != info.dtype) {
        throw InvalidArgument("backward: " + n->op->backward_name + " returned a gradient of " +
                              Describe(g.shape(), g.dtype()) + " for input " + std::to_string(i) +
                              " of " + Describe(info.shape, info.dtype));
      }
      Deliver(e, std::move(g));
    }
    Finish(n);
  }
};

}  // namespace

void AccumulateGrad(TensorImpl& target, Tensor g, bool create_graph) {
  AutogradMeta& m = target.mutable_autograd();
  GradModeScope mode(create_graph);
  vm::OpNameScope scope("AccumulateGrad");
  if (const GlobalMeta* leaf = target.global().get()) {
    // A global leaf's .grad has its placement and SBP (a partial_sum leaf's, broadcast): the
    // gradient is boxed to it (a P gradient of a B weight is all-reduced here, data parallel's
    // reduction), and sums are out of place (in-place ops take no global tensors).
    const Sbp want = leaf->sbp.is_partial_sum() ? Sbp::broadcast() : leaf->sbp;
    if (g.sbp() != want || g.placement() != leaf->placement) {
      g = g.to_global(leaf->placement, want);
    }
    std::lock_guard<std::mutex> lock(m.grad_mu);
    if (!m.grad.defined()) {
      const bool sole = g.impl().use_count() == 1 && g.impl()->blob()->tensor_refs() == 1;
      m.grad = sole ? g : functional::Clone(g);
    } else {
      m.grad = add(m.grad, g);
    }
    return;
  }
  // Held while the add is issued (not while it runs): issuing never waits for the VM.
  std::lock_guard<std::mutex> lock(m.grad_mu);
  // The first gradient is copied: .grad never aliases a tensor the graph or the program holds.
  // One that nothing else holds (a backward's fresh result: this is its only handle, and its
  // storage has no other view) is taken as it is, saving a copy of the whole gradient.
  if (!m.grad.defined()) {
    const bool sole = g.impl().use_count() == 1 && g.impl()->blob()->tensor_refs() == 1 &&
                      g.is_contiguous() && g.storage_offset() == 0;
    m.grad = sole ? g : functional::Clone(g);
  } else if (create_graph) {
    m.grad = add(m.grad, g);  // out of place: the sum is recorded, the old grad kept intact
  } else {
    m.grad.add_(g);
  }
}

std::vector<Tensor> RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                                const std::vector<Edge>& captures, bool retain_graph,
                                bool accumulate, bool create_graph) {
  GradModeScope mode(create_graph);
  Run run;
  run.accumulate = accumulate;
  run.retain_graph = retain_graph || create_graph;
  run.create_graph = create_graph;
  run.captures = captures;
  run.captured.resize(captures.size());
  std::vector<Node*> root_nodes;
  for (const auto& [edge, grad] : roots) {
    if (edge.node) root_nodes.push_back(edge.node.get());
  }
  if (!accumulate && !captures.empty()) run.MarkNeeded(root_nodes);
  run.CountDependencies(root_nodes);
  for (const auto& [edge, grad] : roots) run.Deliver(edge, grad);
  for (Node* r : root_nodes) {
    if (run.Runs(r) && run.dependencies[r] == 0) {
      run.dependencies[r] = -1;  // queued once, however many roots share it
      run.ready.push(r);
    }
  }
  while (!run.ready.empty()) {
    Node* n = run.ready.top();
    run.ready.pop();
    run.Execute(n);
  }
  return std::move(run.captured);
}

}  // namespace ofl::autograd
