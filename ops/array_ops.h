// Op definitions as pure functions: argument checks and shape / stride inference for the array
// ops. No memory, no threads. Every error is an InvalidArgument whose message names the op, the
// argument and the values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "oneflow_lite/attrs.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/shape.h"

namespace ofl::ops {

struct ViewGeometry {
  Shape shape;
  Strides stride;
  int64_t offset_delta = 0;  // elements to add to the input's storage offset
};

// Checks rank <= kMaxDims, no negative dim and that the element count and byte count fit in
// int64. Returns numel.
int64_t CheckShape(const char* op, const char* arg, IntList dims, size_t element_size);
int64_t CheckShape(const char* op, const char* arg, const Shape& shape, size_t element_size);

// expand: PyTorch's rules (len(sizes) >= dim; -1 keeps a dim; new leading dims cannot be -1;
// a non-1 dim must keep its size; 0 allowed where the input dim is 1 and in new leading dims).
// Broadcast dims and new dims of size != 1 get stride 0; kept dims keep the input stride; a new
// leading dim of size 1 gets stride[i+1] * size[i+1]. A 0-dim input gets stride 0 on every dim.
ViewGeometry InferExpand(const Shape& in, const Strides& in_stride, IntList sizes,
                         size_t element_size);

// repeat: len(repeats) >= dim, repeats >= 0; out[i] = repeats[i] * padded_in[i].
Shape InferRepeat(const Shape& in, IntList repeats, size_t element_size);

// reshape: at most one -1, which is inferred (and is an error when numel is 0, as it is ambiguous).
Shape InferReshape(const Shape& in, IntList shape);
// Strides that view (in, in_stride) as `out` without copying, or nullopt when a copy is needed.
std::optional<Strides> ReshapeStrides(const Shape& in, const Strides& in_stride, const Shape& out);

// permute: dims must be a permutation of 0..dim-1 (negative dims wrap).
ViewGeometry InferPermute(const Shape& in, const Strides& in_stride, IntList dims);

// narrow: 0 <= start, start + length <= size(dim), length >= 0 (negative dim/start wrap).
ViewGeometry InferNarrow(const Shape& in, const Strides& in_stride, int64_t dim, int64_t start,
                         int64_t length);

// expand_backward: `input_shape` must expand to dy's shape. Returns dy's shape with input_shape's
// dims right-aligned and 1 on new leading dims: the reduce_sum_to target.
Shape InferExpandBackward(const Shape& dy, const Shape& input_shape);

// repeat_backward: dy's shape must equal InferRepeat(input_shape, repeats).
void CheckRepeatBackward(const Shape& dy, const Shape& input_shape, IntList repeats);
bool IsContiguous(const Shape& shape, const Strides& stride);

// a * b, saturated to the int64 range instead of overflowing: for strides and sizes of empty
// views, whose products may not fit and which address nothing.
int64_t SaturatingMul(int64_t a, int64_t b);

// Throws InvalidArgument naming the op when `dtype` is not one of the DType enumerators (a value
// cast from an integer).
void CheckDType(const char* op, DType dtype);
// CheckDType, and InvalidArgument for bool: the ops that sum a gradient dy (expand_backward,
// repeat_backward).
void CheckGradientDType(const char* op, DType dtype);

}  // namespace ofl::ops
