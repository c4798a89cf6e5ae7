// The definitions the extreme-value reductions share (each op is one file giving its name):
// max_dim/min_dim, the largest (smallest) element along one dim with its int64 index (kernels/
// reduce_extreme.h), and amax/amin over any dims, made of max_dim/min_dim calls.
#pragma once

#include "ops/op_schema.h"

namespace ofl::ops {

// "max_dim" (is_max) or "min_dim": attribute dim; outputs values (x's dtype) and indices (int64),
// both x's shape with a 1 at dim (the functions drop it unless keepdim). Gradient, as PyTorch's
// max(dim): g to the element at the index (the first among ties), zeros elsewhere.
OpSchema ExtremeDimOp(const char* name, bool is_max);

// "amax" or "amin": attributes dims (none: every dim) and keepdim. Gradient, as PyTorch's amax:
// g split evenly among the elements equal to the result.
OpSchema AmaxOp(const char* name, bool is_max);

}  // namespace ofl::ops
