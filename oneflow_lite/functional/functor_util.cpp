#include "oneflow_lite/functional/functor_util.h"

#include "oneflow_lite/settings.h"
#include "oneflow_lite/small_object.h"

namespace ofl::functional {

Tensor NewTensor(const Shape& shape, DType dtype, const Device& device) {
  vm::Stream* stream =
      vm::VirtualMachine::Get().devices().GetStream(device);  // DeviceError if unusable
  const size_t bytes = static_cast<size_t>(shape.numel()) * element_size(dtype);
  StorageRef storage(MakeShared<Storage>(device, bytes, stream, dtype));
  return Tensor(MakeShared<TensorImpl>(shape, RowMajorStrides(shape), 0, std::move(storage)));
}

const TensorImpl& LocalImplOf(const char* op, const Tensor& x) {
  if (!x.defined()) {
    throw InvalidArgument(std::string(op) +
                          ": the input tensor is undefined (default-constructed)");
  }
  return *x.impl();
}

Tensor MakeView(const Tensor& x, const Shape& shape, Strides stride, int64_t offset) {
  const TensorImpl& impl = *x.impl();
  return Tensor(MakeShared<TensorImpl>(shape, std::move(stride), offset, impl.storage()));
}

const TensorImpl& ImplOf(const char* op, const Tensor& x) {
  if (!x.defined()) {
    throw InvalidArgument(std::string(op) +
                          ": the input tensor is undefined (default-constructed)");
  }
  if (const auto& g = x.impl()->global()) {
    // A broadcast tensor's shard is the whole tensor already: boxing it to broadcast again would
    // change nothing, so the advice differs.
    const std::string advice =
        g->sbp.is_broadcast() ? "call to_local(): with sbp B every rank's shard is the whole tensor"
                              : "call to_local() for this rank's shard, or to_global(placement, "
                                "Sbp::broadcast()).to_local() for the whole tensor on every rank";
    throw InvalidArgument(std::string(op) + ": not available for a global tensor (" +
                          g->placement.str() + ", sbp " + g->sbp.str() + ", logical shape " +
                          g->logical_shape.str() + "); " + advice);
  }
  return *x.impl();
}

bool ViewsDisabled() {
  static const bool disabled = settings::Flag("OFL_DISABLE_VIEW");
  return disabled;
}

}  // namespace ofl::functional
