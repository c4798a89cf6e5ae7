// Tensor: a handle to a strided view of a storage that the VM fills asynchronously. Methods that
// return tensors queue work and return at once; to_vector / copy_to_host block until the data is
// there (and re-throw an error raised while producing it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/shape.h"

namespace ofl {

class TensorImpl;

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; every method but defined() throws
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  const std::vector<int64_t>& stride() const;
  int64_t storage_offset() const;
  DType dtype() const;
  Device device() const;
  int64_t numel() const;
  int64_t dim() const;
  bool is_contiguous() const;

  // Blocks; logical row-major order; T must match dtype().
  template <class T>
  std::vector<T> to_vector() const;
  // Blocks; logical row-major order; nbytes must equal numel() * element_size(dtype()).
  void copy_to_host(void* dst, size_t nbytes) const;

  Tensor contiguous() const;
  Tensor expand(const std::vector<int64_t>& sizes) const;
  Tensor repeat(const std::vector<int64_t>& repeats) const;
  Tensor reshape(const std::vector<int64_t>& shape) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;

  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  const TensorImpl& Get() const;
  std::shared_ptr<TensorImpl> impl_;
};

namespace detail {
[[noreturn]] void ThrowDTypeMismatch(const char* op, DType requested, DType actual);
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (DTypeOf<T>::value != dtype())
    detail::ThrowDTypeMismatch("to_vector", DTypeOf<T>::value, dtype());
  std::vector<T> out(static_cast<size_t>(numel()));
  copy_to_host(out.data(), out.size() * sizeof(T));
  return out;
}

// std::vector<bool> packs bits and has no data(): read bytes, then widen.
template <>
std::vector<bool> Tensor::to_vector<bool>() const;

}  // namespace ofl
