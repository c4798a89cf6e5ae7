// Tensor: a handle to a strided view of a storage that the VM fills asynchronously. Methods that
// return tensors queue work and return at once; to_vector / copy_to_host block until the data is
// there (and re-throw an error raised while producing it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/scalar.h"
#include "oneflow_lite/shape.h"

namespace ofl {

class TensorImpl;

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; every method but defined() throws
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  // The logical shape (for a global tensor, of the whole tensor across its placement).
  const Shape& shape() const;
  const std::vector<int64_t>& stride() const;
  int64_t storage_offset() const;
  DType dtype() const;
  Device device() const;
  int64_t numel() const;
  int64_t dim() const;
  bool is_contiguous() const;
  // Whether both tensors view the same memory the same way: one storage, the same offset, shape
  // and strides (torch's Tensor.is_set_to). t[i] += v in Python writes through a view and then
  // assigns that view back to t[i]: the assignment finds the view is_set_to its target.
  bool is_set_to(const Tensor& other) const;

  // Blocks; logical row-major order; T must match dtype().
  template <class T>
  std::vector<T> to_vector() const;
  // Blocks; logical row-major order; nbytes must equal numel() * element_size(dtype()).
  void copy_to_host(void* dst, size_t nbytes) const;
  // The address of this view's element 0: its storage's start + storage_offset() * element size
  // (null for a storage of no bytes). Blocks until every instruction issued before the call that
  // writes this storage has completed, so the memory holds their results (re-throws an error
  // raised while producing it, as to_vector). It does not wait for earlier readers, nor order
  // anything issued later: sync() before writing through the pointer while ops may still read the
  // tensor, and before reading it again after issuing more writes. Valid while a tensor viewing
  // the storage lives. InvalidArgument for a device whose memory the host cannot address and that
  // is not CUDA (sim), and for a global tensor.
  void* data_ptr() const;

  // A copy on `device` (this tensor itself when it is already there), as torch's Tensor.to(device).
  // Queued like any op: returns at once.
  Tensor to(const Device& device) const;
  // The op table's methods (ops/op_table.py): expand, repeat, reshape, view, permute, narrow,
  // contiguous, clone, sum(dims = {}, keepdim = false), ...; each as the ofl:: function.
#include "oneflow_lite/generated/tensor_methods.inc"
  // The largest (smallest) element along dim and its int64 index (the first among ties; a NaN
  // wins), as torch's Tensor.max(dim): (values, indices), dim dropped unless keepdim.
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  // The largest (smallest) element of the whole tensor (amax over every dim).
  Tensor max() const;
  // this ** exponent, elementwise (ofl::pow with a tensor exponent).
  Tensor pow(const Tensor& exponent) const;
  // torch's Tensor.split, split_with_sizes and chunk: narrowed views of this tensor along dim
  // (ofl::split, ofl::split_with_sizes, ofl::chunk).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<int64_t>& split_sizes,
                                       int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor min() const;
  // ofl::gather(*this, dim, index), ofl::scatter_add(*this, dim, index, src) and
  // ofl::index_select(*this, dim, index) (functional.h).
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;

  // In-place ops: each writes this tensor's view, returns *this and bumps the storage's version
  // counter. On a tensor that requires grad they throw InvalidArgument unless grad mode is off
  // (NoGradGuard: an optimizer step); a source that requires grad is refused the same way; so is
  // an expanded view (stride 0: several elements in one place). A source that shares this
  // tensor's storage and may overlap its elements (x.add_(x.permute({1, 0}))) is read as it was
  // before the op, through a copy queued first; this tensor's own view (x.add_(x)) needs none.
  //
  // fill_: the value converted to dtype(); InvalidArgument where the dtype cannot hold it
  // (Scalar::fits: 300 or NaN for uint8).
  Tensor& fill_(Scalar value);
  Tensor& zero_();
  // Random fills from the generator of the tensor's device type (oneflow_lite/random.h): every
  // element uniform in [from, to), or normal with `mean` and standard deviation `std`; a float
  // dtype (InvalidArgument otherwise, and for to < from or std < 0).
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  // Arithmetic: other broadcasts to this shape, with the same dtype and device; a number takes
  // this dtype (InvalidArgument where it cannot hold it, and for a floating-point number with an
  // integer tensor, whose result would be floating). InvalidArgument for a bool tensor, and for
  // div_ on an integer one, as PyTorch: the result would not fit. Refused before anything is
  // queued, so the tensor keeps its values.
  Tensor& add_(const Tensor& other);
  Tensor& sub_(const Tensor& other);
  Tensor& mul_(const Tensor& other);
  Tensor& div_(const Tensor& other);
  Tensor& add_(Scalar value);
  Tensor& sub_(Scalar value);
  Tensor& mul_(Scalar value);
  Tensor& div_(Scalar value);
  // From any device, with any strides; src broadcasts to this shape; the same dtype.
  Tensor& copy_(const Tensor& src);

  // Autograd (oneflow_lite/autograd.h; PyTorch's semantics). Only floating tensors require grad.
  bool requires_grad() const;
  // Leaves only; InvalidArgument on a non-leaf, a non-floating dtype or a global tensor.
  Tensor& requires_grad_(bool requires_grad = true);
  // True for a tensor no recorded op made (whether or not it requires grad).
  bool is_leaf() const;
  // The accumulated gradient: undefined until a backward reached this tensor (a leaf that requires
  // grad, or a tensor that called retain_grad()).
  Tensor grad() const;
  // Replaces the gradient (its shape and dtype must match); set_grad(Tensor()) clears it.
  void set_grad(const Tensor& grad);
  // A non-leaf keeps its gradient in grad() after a backward.
  void retain_grad() const;
  // Computes the gradients of the leaves this tensor depends on and adds them into their grad().
  // `gradient` (this tensor's shape and dtype) may be left out for a one-element tensor. Returns
  // once the work is issued; reading a grad waits for it. Without retain_graph the graph's saved
  // tensors are freed, and a second backward through it throws.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // A tensor sharing this storage (and its version counter) with no history; requires no grad.
  Tensor detach() const;
  // The storage's version counter: bumped by every in-place op on it.
  int64_t version() const;
  // The name of the node that made this tensor ("ExpandBackward", ...); empty for leaves.
  std::string grad_fn_name() const;

  // Global tensors (oneflow_lite/distributed.h). A global tensor is a logical tensor laid out
  // over a placement's ranks by an SBP; each rank holds its physical shard. stride(),
  // storage_offset() and is_contiguous() describe that shard; shape(), numel() and dim() the
  // logical tensor. Every rank of the world runs the same calls in the same order.
  //
  // On a local tensor: this rank's shard as given (split: shards may differ in size, the logical
  // size is their sum; broadcast: every rank passes the same values; partial_sum: the logical
  // tensor is the sum of the shards). On a global tensor: boxing to the new SBP.
  Tensor to_global(const Placement& placement, const Sbp& sbp) const;
  // This rank's physical shard (shares memory); a local tensor returns itself.
  Tensor to_local() const;
  bool is_global() const;
  // InvalidArgument on a local tensor.
  Placement placement() const;
  Sbp sbp() const;

  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  const TensorImpl& Get() const;
  std::shared_ptr<TensorImpl> impl_;
};

namespace detail {
[[noreturn]] void ThrowDTypeMismatch(const char* op, DType requested, DType actual);
// Copies t's elements in logical row-major order into host memory that `allocate(nbytes)` returns.
// `allocate` runs on a VM worker, only once the data is ready and only if it was produced without
// error; the memory it returns must stay valid for as long as the function object lives (the VM
// may hold it beyond the call when a wait gives up). Blocks; re-throws the producer's error.
void ReadToHost(const Tensor& t, const char* op, std::function<void*(size_t nbytes)> allocate);
}  // namespace detail

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (DTypeOf<T>::value != dtype())
    detail::ThrowDTypeMismatch("to_vector", DTypeOf<T>::value, dtype());
  // The vector is made by the read itself, once the data is ready: a tensor whose producer failed
  // throws that error before any host memory is allocated, and a wait that gives up never leaves
  // a copy writing into memory the caller has freed.
  auto out = std::make_shared<std::vector<T>>();
  detail::ReadToHost(*this, "to_vector", [out](size_t nbytes) -> void* {
    out->resize(nbytes / sizeof(T));
    return out->data();
  });
  return std::move(*out);
}

// std::vector<bool> packs bits and has no data(): read bytes, then widen.
template <>
std::vector<bool> Tensor::to_vector<bool>() const;

// Elementwise arithmetic with PyTorch's broadcasting and type promotion (ofl::add, sub, mul, div);
// a number is a wrapped number (ofl::wrapped_number: int32 + 5 stays int32, int32 + 2.5 is
// float32).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);  // InvalidArgument for bool, as PyTorch

// Comparisons (ofl::eq, ne, lt, le, gt, ge): bool tensors, compared in the promoted type, with
// broadcasting; a number on either side is a wrapped number.
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator==(Scalar a, const Tensor& b);
Tensor operator!=(Scalar a, const Tensor& b);
Tensor operator<(Scalar a, const Tensor& b);
Tensor operator<=(Scalar a, const Tensor& b);
Tensor operator>(Scalar a, const Tensor& b);
Tensor operator>=(Scalar a, const Tensor& b);
// Bitwise ops on integer and bool tensors (ofl::bitwise_and, _or, _xor, _not): on bool tensors,
// the logical and, or, xor and not.
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);

}  // namespace ofl
