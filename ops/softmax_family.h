// The definition softmax and log_softmax share (each op is one file giving its name): along one
// dim, exp(x - max) / sum(exp(x - max)) or its log, computed by one kernel per device (kernels/
// softmax.h: max and sum in one pass over the row).
#pragma once

#include "ops/op_schema.h"

namespace ofl::ops {

// Attribute dim (wrapped; -1 and 0 for a 0-dim input); a float input (PyTorch's softmax refuses
// integers too), the output of its shape and dtype. Gradients from the output y: softmax
// y * (g - sum(g * y)), log_softmax g - exp(y) * sum(g), the sums along dim.
OpSchema SoftmaxOp(const char* name, bool is_log);

}  // namespace ofl::ops
