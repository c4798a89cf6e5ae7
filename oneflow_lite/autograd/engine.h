// The backward engine (engine.cpp) and the leaves' accumulation. Internal.
#pragma once

#include <utility>
#include <vector>

#include "oneflow_lite/autograd/graph.h"

namespace ofl::autograd {

// Runs the graph behind `roots` (each an edge and the gradient that enters it). accumulate: adds
// into the grad() of the leaves (and of tensors that retain grad) it reaches, as backward() does.
// create_graph: the backward's ops run with grad mode on, so they are recorded and the gradients
// have a history of their own (a gradient of a gradient); otherwise they run under no-grad.
// Returns the gradient that reached each of `captures` (undefined where none did), as
// autograd::grad does. Throws InvalidArgument / Error naming the node for the failures of
// autograd.h; the work it issued before a throw stays issued.
std::vector<Tensor> RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                                const std::vector<Edge>& captures, bool retain_graph,
                                bool accumulate, bool create_graph = false);

// target.grad = a copy of g (the first time; g itself when nothing else holds it or its storage),
// else target.grad += g in place; with create_graph, recorded: the copy is a recorded clone and the
// sum target.grad + g out of place, so the grad keeps g's history.
void AccumulateGrad(TensorImpl& target, Tensor g, bool create_graph = false);

}  // namespace ofl::autograd
