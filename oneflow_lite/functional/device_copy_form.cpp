// The device-copy form of the local stage (op_call.h, the "to" op): a tensor copied to another
// device by the copy engines of the two backends. From host-accessible memory into a device, on
// the target's h2d stream; from a device the host cannot touch into host memory, on the source's
// d2h stream; between two such devices of different types, through the host.
#include "kernels/device_backend.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/stages.h"
#include "vm/copy_policies.h"

namespace ofl::functional::stage {

Tensor LocalDeviceCopy(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  const TensorImpl& impl = ImplOf(op.name.c_str(), x);
  (void)op.infer1(TensorMeta{impl.shape(), impl.dtype()}, attrs);
  const Device device(attrs.get_string("device").c_str());
  if (impl.device() == device) return x;
  auto& vm = vm::VirtualMachine::Get();
  vm.devices().GetStream(
      device);  // DeviceError for a device that cannot be used, before anything is queued
  DeviceBackend* from = kernels::GetBackend(impl.device().type());
  DeviceBackend* into = kernels::GetBackend(device.type());
  const bool from_host = from->host_accessible();
  const bool into_host = into->host_accessible();
  if (!from_host && !into_host && impl.device().type() != device.type()) {
    // Two backends cannot copy between each other: go through the host.
    const Device cpu("cpu");
    return LocalDeviceCopy(op, LocalDeviceCopy(op, x, Attrs(op.attrs, cpu.str())), attrs);
  }
  static const ops::OpSchema& contiguous = ops::BuiltinOp("contiguous");
  const Tensor src = Local(contiguous, x, {});
  Tensor out = NewTensor(impl.shape(), impl.dtype(), device);
  const size_t bytes = static_cast<size_t>(impl.shape().numel()) * element_size(impl.dtype());
  CopyKind kind = CopyKind::kDeviceToDevice;
  vm::Stream* stream = nullptr;
  if (!from_host && into_host) {
    kind = CopyKind::kDeviceToHost;  // the device's copy engine writes host memory
    stream = vm.devices().GetStream(impl.device(), vm::StreamRole::kDevice2Host);
  } else {
    kind = from_host ? CopyKind::kHostToDevice : CopyKind::kDeviceToDevice;
    stream = vm.devices().GetStream(device, vm::StreamRole::kHost2Device);
  }
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->Policy(stream, vm::DeviceCopyPolicy::BlobToBlob(op.name.c_str(), src.impl()->arg(),
                                                       out.impl()->arg(), kind, bytes));
  });
  return out;
}

}  // namespace ofl::functional::stage
