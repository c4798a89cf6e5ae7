// The shape functions a PyTorch user reaches for first: cat (the cat op, ops/cat_op.cpp, in
// groups of 64 inputs), stack (unsqueeze, then cat), split, split_with_sizes and chunk (narrowed
// views), and the op table's hand-written rows flatten, squeeze and unsqueeze (reshape's
// definition: always a view for squeeze and unsqueeze, a view where x's strides allow one for
// flatten).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"

namespace ofl {

namespace {

constexpr size_t kMaxCatInputs = 64;  // the op's input limit (bits of needs_input_grad)

Tensor Reshaped(const Tensor& x, const std::vector<int64_t>& shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("reshape");
  return functional::Call(op, x, Attrs(op.attrs, shape));
}

// A dim for a new dim of an ndim-dim tensor: -(ndim + 1) .. ndim.
int WrapNewDim(const char* op, int64_t dim, int ndim) {
  if (dim < -(ndim + 1) || dim > ndim) {
    throw InvalidArgument(std::string(op) + ": dim " + std::to_string(dim) +
                          " is out of range for a new dim of a " + std::to_string(ndim) +
                          "-dim tensor (expected " + std::to_string(-(ndim + 1)) + " to " +
                          std::to_string(ndim) + ")");
  }
  return static_cast<int>(dim < 0 ? dim + ndim + 1 : dim);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  static const ops::OpSchema& op = ops::BuiltinOp("cat");
  if (tensors.empty()) throw InvalidArgument("cat: expected a non-empty list of tensors");
  if (tensors.size() <= kMaxCatInputs) {
    return functional::Call(op, tensors, Attrs(op.attrs, dim))[0];
  }
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); i += kMaxCatInputs) {
    const size_t end = std::min(tensors.size(), i + kMaxCatInputs);
    parts.push_back(cat(std::vector<Tensor>(tensors.begin() + i, tensors.begin() + end), dim));
  }
  return cat(parts, dim);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw InvalidArgument("stack: expected a non-empty list of tensors");
  const Shape first = functional::ImplOf("stack", tensors[0]).shape();
  const int d = WrapNewDim("stack", dim, first.ndim());
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Shape s = functional::ImplOf("stack", tensors[i]).shape();
    if (s != first) {
      throw InvalidArgument("stack: expects each tensor to be of equal shape, but got " +
                            first.str() + " at entry 0 and " + s.str() + " at entry " +
                            std::to_string(i));
    }
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d);
}

std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& split_sizes,
                                     int64_t dim) {
  const Shape s = functional::ImplOf("split_with_sizes", x).shape();
  if (s.ndim() == 0) {
    throw InvalidArgument("split_with_sizes: a 0-dim tensor cannot be split");
  }
  const int d = ops::WrapDim("split_with_sizes", dim, s.ndim());
  int64_t total = 0;
  for (int64_t n : split_sizes) {
    if (n < 0) {
      throw InvalidArgument("split_with_sizes: split sizes must be non-negative, got " +
                            IntList(split_sizes).str());
    }
    total += n;
  }
  if (total != s[d]) {
    throw InvalidArgument("split_with_sizes: split sizes " + IntList(split_sizes).str() +
                          " add up to " + std::to_string(total) + ", but dim " + std::to_string(d) +
                          " of shape " + s.str() + " has size " + std::to_string(s[d]));
  }
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t offset = 0;
  for (int64_t n : split_sizes) {
    out.push_back(x.narrow(d, offset, n));
    offset += n;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  const Shape s = functional::ImplOf("split", x).shape();
  if (s.ndim() == 0) throw InvalidArgument("split: a 0-dim tensor cannot be split");
  const int d = ops::WrapDim("split", dim, s.ndim());
  const int64_t size = s[d];
  if (split_size < 0 || (split_size == 0 && size != 0)) {
    throw InvalidArgument("split: split_size must be positive (0 only for a dim of size 0), got " +
                          std::to_string(split_size) + " for dim " + std::to_string(d) +
                          " of size " + std::to_string(size));
  }
  const int64_t pieces =
      split_size == 0 ? 1 : std::max<int64_t>(1, (size + split_size - 1) / split_size);
  std::vector<int64_t> sizes(static_cast<size_t>(pieces), split_size);
  sizes.back() = size - split_size * (pieces - 1);
  return split_with_sizes(x, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  const Shape s = functional::ImplOf("chunk", x).shape();
  if (s.ndim() == 0) throw InvalidArgument("chunk: a 0-dim tensor cannot be chunked");
  if (chunks <= 0) {
    throw InvalidArgument("chunk: chunks must be positive, got " + std::to_string(chunks));
  }
  const int d = ops::WrapDim("chunk", dim, s.ndim());
  const int64_t size = s[d];
  if (size == 0)
    return split_with_sizes(x, std::vector<int64_t>(static_cast<size_t>(chunks), 0), d);
  return split(x, (size + chunks - 1) / chunks, d);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return ofl::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(const std::vector<int64_t>& split_sizes,
                                             int64_t dim) const {
  return ofl::split_with_sizes(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return ofl::chunk(*this, chunks, dim);
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const Shape s = functional::ImplOf("flatten", x).shape();
  if (s.ndim() == 0) {
    (void)ops::WrapDim("flatten", start_dim, 0);
    (void)ops::WrapDim("flatten", end_dim, 0);
    return Reshaped(x, {1});
  }
  const int a = ops::WrapDim("flatten", start_dim, s.ndim());
  const int b = ops::WrapDim("flatten", end_dim, s.ndim());
  if (a > b) {
    throw InvalidArgument("flatten: start_dim " + std::to_string(start_dim) +
                          " comes after end_dim " + std::to_string(end_dim) + " for shape " +
                          s.str());
  }
  std::vector<int64_t> out;
  for (int k = 0; k < a; ++k) out.push_back(s[k]);
  int64_t n = 1;
  for (int k = a; k <= b; ++k) n *= s[k];
  out.push_back(n);
  for (int k = b + 1; k < s.ndim(); ++k) out.push_back(s[k]);
  return Reshaped(x, out);
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  const Shape s = functional::ImplOf("squeeze", x).shape();
  std::vector<int64_t> out;
  if (dim) {
    const int d = ops::WrapDim("squeeze", *dim, s.ndim());
    for (int k = 0; k < s.ndim(); ++k) {
      if (k != d || s[k] != 1) out.push_back(s[k]);
    }
  } else {
    for (int k = 0; k < s.ndim(); ++k) {
      if (s[k] != 1) out.push_back(s[k]);
    }
  }
  return Reshaped(x, out);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  const Shape s = functional::ImplOf("unsqueeze", x).shape();
  const int d = WrapNewDim("unsqueeze", dim, s.ndim());
  std::vector<int64_t> out = s.vec();
  out.insert(out.begin() + d, 1);
  return Reshaped(x, out);
}

}  // namespace ofl
