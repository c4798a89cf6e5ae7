#include "oneflow_lite/tensor.h"

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/functor_util.h"
#include "ops/array_ops.h"

namespace ofl {

// Every live tensor holds one: the version counter sits in the blob's last 4 bytes, so a storage
// costs what its blob does (docs/benchmarks.md).
static_assert(sizeof(void*) != 8 || sizeof(Storage) <= 96,
              "Storage grew past 96 bytes: a live tensor's storage no longer fits 112 bytes with "
              "its shared_ptr control block");

void StorageRef::ReleaseLast() noexcept { vm::VirtualMachine::Get().Release(std::move(blob_)); }

vm::BlobArg TensorImpl::arg() const { return arg(shape_, stride_, offset_); }

// Built in one go: the shapes are copy-constructed, not default-made and then assigned.
vm::BlobArg TensorImpl::arg(const Shape& shape, const Strides& stride, int64_t offset) const {
  return vm::BlobArg{storage_.blob(), shape, stride, offset, dtype()};
}

static_assert(sizeof(void*) != 8 || sizeof(TensorImpl) <= 144,
              "TensorImpl grew past 144 bytes: a live tensor no longer fits 160 bytes with its "
              "shared_ptr control block");

TensorImpl::Extras* TensorImpl::GetExtras() const {
  Extras* e = extras_.load(std::memory_order_acquire);
  if (e != nullptr) return e;
  auto made = std::make_unique<Extras>();
  // Two threads may race to make them: the first to publish wins, the other drops its copy.
  if (extras_.compare_exchange_strong(e, made.get(), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    return made.release();
  }
  return e;
}

const std::vector<int64_t>& TensorImpl::stride_vector() const {
  Extras* extras = GetExtras();
  std::vector<int64_t>* v = extras->stride_vector.load(std::memory_order_acquire);
  if (v != nullptr) return *v;
  auto made = std::make_unique<std::vector<int64_t>>(stride_.vec());
  if (extras->stride_vector.compare_exchange_strong(v, made.get(), std::memory_order_acq_rel,
                                                    std::memory_order_acquire)) {
    return *made.release();
  }
  return *v;
}

const TensorImpl& Tensor::Get() const {
  if (!impl_) throw InvalidArgument("Tensor: this tensor is undefined (default-constructed)");
  return *impl_;
}

const Shape& Tensor::shape() const {
  const TensorImpl& impl = Get();
  return impl.global() ? impl.global()->logical_shape : impl.shape();
}
const std::vector<int64_t>& Tensor::stride() const { return Get().stride_vector(); }
int64_t Tensor::storage_offset() const { return Get().offset(); }
DType Tensor::dtype() const { return Get().dtype(); }
Device Tensor::device() const { return Get().device(); }
int64_t Tensor::numel() const { return shape().numel(); }
int64_t Tensor::dim() const { return shape().ndim(); }
bool Tensor::is_global() const { return Get().global() != nullptr; }
Placement Tensor::placement() const {
  if (!is_global()) throw InvalidArgument("placement: the tensor is local, not global");
  return Get().global()->placement;
}
Sbp Tensor::sbp() const {
  if (!is_global()) throw InvalidArgument("sbp: the tensor is local, not global");
  return Get().global()->sbp;
}
bool Tensor::is_contiguous() const { return ops::IsContiguous(Get().shape(), Get().stride()); }
bool Tensor::is_set_to(const Tensor& other) const {
  const TensorImpl &a = Get(), &b = other.Get();
  return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() &&
         a.stride_vector() == b.stride_vector() && shape() == other.shape();
}

namespace detail {
void ThrowDTypeMismatch(const char* op, DType requested, DType actual) {
  throw InvalidArgument(std::string(op) + ": requested element type " + to_string(requested) +
                        " but the tensor's dtype is " + to_string(actual));
}
}  // namespace detail

template <>
std::vector<bool> Tensor::to_vector<bool>() const {
  if (dtype() != DType::kBool) detail::ThrowDTypeMismatch("to_vector", DType::kBool, dtype());
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  detail::ReadToHost(*this, "to_vector", [bytes](size_t nbytes) -> void* {
    bytes->resize(nbytes);
    return bytes->data();
  });
  return std::vector<bool>(bytes->begin(), bytes->end());
}

}  // namespace ofl
