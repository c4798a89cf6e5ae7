// The backward engine (engine.cpp) and the leaves' accumulation. Internal.
#pragma once

#include <utility>
#include <vector>

#include "oneflow_lite/autograd/graph.h"

namespace ofl::autograd {

// Runs the graph behind `roots` (each an edge and the gradient that enters it). accumulate: adds
// into the grad() of the leaves (and of tensors that retain grad) it reaches, as backward() does.
// Returns the gradient that reached each of `captures` (undefined where none did), as
// autograd::grad does. Throws InvalidArgument / Error naming the node for the failures of
// autograd.h; the work it issued before a throw stays issued.
std::vector<Tensor> RunBackward(const std::vector<std::pair<Edge, Tensor>>& roots,
                                const std::vector<Edge>& captures, bool retain_graph,
                                bool accumulate);

// target.grad = a copy of g (the first time; g itself when nothing else holds it or its storage),
// else target.grad += g in place.
void AccumulateGrad(TensorImpl& target, Tensor g);

}  // namespace ofl::autograd
