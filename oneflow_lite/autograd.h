// Autograd: an op whose inputs require grad records a node (its definition's backward, the tensors
// it saved and their versions) while grad mode is on; Tensor::backward() and autograd::grad() walk
// the nodes on the calling thread and issue the backward's ops as ordinary VM instructions, so a
// backward is as asynchronous as the forward. The Tensor members are in tensor.h.
#pragma once

#include <vector>

#include "oneflow_lite/tensor.h"

namespace ofl {

namespace autograd {
// The gradients of `outputs` with respect to `inputs` (tensors that require grad), without adding
// into any grad(). grad_outputs: one per output (undefined or left out for a one-element output).
// An input the outputs do not depend on: InvalidArgument unless allow_unused (then undefined).
// create_graph: the backward's own ops are recorded, so the gradients returned have a history and
// can be differentiated again (a gradient of a gradient); it keeps the graph, as retain_graph.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false, bool create_graph = false);
// Tensor::backward of several tensors at once (torch::autograd::backward): each tensor's gradient
// (grad_tensors: one per tensor, undefined or left out for a one-element tensor) flows back and is
// added into the grad() of the leaves reached. create_graph: recorded, as grad()'s, so each
// leaf's grad() keeps a history (backward of a function of the grads works).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              bool retain_graph = false, bool create_graph = false);
}  // namespace autograd

// Turns grad mode off for the calling thread while it lives (nests): ops record nothing, and
// in-place ops may write tensors that require grad.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Whether ops on the calling thread record nodes (true unless a NoGradGuard lives).
bool is_grad_enabled();
// Sets grad mode for the calling thread (torch.set_grad_enabled): true turns recording back on
// inside a NoGradGuard, until the guard ends and restores the mode it found.
void set_grad_enabled(bool enabled);

}  // namespace ofl
