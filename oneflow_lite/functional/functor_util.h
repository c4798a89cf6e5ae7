// Helpers shared by the functors and the op call stages: making output tensors and views, and
// the local-only checks of an input.
#pragma once

#include <vector>

#include "oneflow_lite/tensor.h"
#include "oneflow_lite/tensor_impl.h"
#include "vm/instructions_builder.h"

namespace ofl::functional {

// A contiguous tensor with a fresh storage on `device` (no memory yet: the writing instruction
// allocates it in Prepare). The caller has validated the shape.
Tensor NewTensor(const Shape& shape, DType dtype, const Device& device);
// A new tensor, every element `value` (the fill_ op): full, zeros, ones and the *_like functions;
// InvalidArgument naming `op` for a bad dtype or shape, or a value the dtype cannot hold.
Tensor Full(const char* op, const Shape& shape, const Scalar& value, DType dtype,
            const Device& device);
// A view of x's storage.
Tensor MakeView(const Tensor& x, const Shape& shape, Strides stride, int64_t offset);
// x's implementation; InvalidArgument for an undefined tensor, and for a global one (the call is
// local-only: the message names the call and the placement).
const TensorImpl& ImplOf(const char* op, const Tensor& x);
// The same for the global functors: a global tensor's impl is its physical shard.
const TensorImpl& LocalImplOf(const char* op, const Tensor& x);
// True when OFL_DISABLE_VIEW=1 (read once, through the table of settings): view ops then run as
// OpCalls producing contiguous outputs.
bool ViewsDisabled();

}  // namespace ofl::functional
