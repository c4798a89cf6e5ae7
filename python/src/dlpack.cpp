// DLPack both ways. ofl.from_dlpack(x): a tensor on x's memory, no copy (ofl::from_blob), which
// keeps x's producer alive until the last view of it is gone and every instruction using it
// completed. Tensor.__dlpack__: the tensor's memory as a "dltensor" capsule, handed out only once
// every instruction writing it completed (Tensor::data_ptr), the capsule holding the tensor.
#include <nanobind/ndarray.h>

#include <Python.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

// A producer's array, kept until the runtime lets its memory go. Dropping it takes the GIL, and
// the runtime may let go on one of its workers, so drops are queued and run by the interpreter
// (Py_AddPendingCall), or by the next from_dlpack call, whichever comes first.
struct Kept {
  nb::ndarray<> array;
};

std::mutex drops_mu;
std::vector<Kept*>* drops = new std::vector<Kept*>;  // never freed: used until the process ends
bool drop_call_pending = false;

void DrainDrops() {  // with the GIL held
  std::vector<Kept*> todo;
  {
    std::lock_guard<std::mutex> lock(drops_mu);
    todo.swap(*drops);
    drop_call_pending = false;
  }
  for (Kept* k : todo) delete k;
}

int DrainDropsCall(void*) {
  DrainDrops();
  return 0;
}

void QueueDrop(Kept* k) {  // from any thread, with or without the GIL
  bool schedule = false;
  {
    std::lock_guard<std::mutex> lock(drops_mu);
    drops->push_back(k);
    if (!drop_call_pending) schedule = drop_call_pending = true;
  }
  // Once Python is gone the arrays are left to the process's end.
  if (schedule && PythonIsRunning() && Py_AddPendingCall(&DrainDropsCall, nullptr) != 0) {
    std::lock_guard<std::mutex> lock(drops_mu);
    drop_call_pending = false;  // the interpreter's queue was full: the next call retries
  }
}

DType DTypeOfDlpack(const nb::dlpack::dtype& d) {
  using Code = nb::dlpack::dtype_code;
  if (d.lanes == 1) {
    switch (static_cast<Code>(d.code)) {
      case Code::Bool:
        if (d.bits == 8) return DType::kBool;
        break;
      case Code::UInt:
        if (d.bits == 8) return DType::kUInt8;
        break;
      case Code::Int:
        if (d.bits == 8) return DType::kInt8;
        if (d.bits == 16) return DType::kInt16;
        if (d.bits == 32) return DType::kInt32;
        if (d.bits == 64) return DType::kInt64;
        break;
      case Code::Float:
        if (d.bits == 16) return DType::kFloat16;
        if (d.bits == 32) return DType::kFloat32;
        if (d.bits == 64) return DType::kFloat64;
        break;
      case Code::Bfloat:
        if (d.bits == 16) return DType::kBFloat16;
        break;
      default:
        break;
    }
  }
  throw nb::type_error(("from_dlpack(): the array's DLPack dtype (code " + std::to_string(d.code) +
                        ", " + std::to_string(d.bits) + " bits, " + std::to_string(d.lanes) +
                        " lanes) has no oneflow_lite dtype")
                           .c_str());
}

nb::dlpack::dtype DlpackOf(DType d) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code c, int bits) {
    nb::dlpack::dtype t;
    t.code = static_cast<uint8_t>(c);
    t.bits = static_cast<uint8_t>(bits);
    t.lanes = 1;
    return t;
  };
  switch (d) {
    case DType::kBool:
      return make(Code::Bool, 8);
    case DType::kUInt8:
      return make(Code::UInt, 8);
    case DType::kInt8:
      return make(Code::Int, 8);
    case DType::kInt16:
      return make(Code::Int, 16);
    case DType::kInt32:
      return make(Code::Int, 32);
    case DType::kInt64:
      return make(Code::Int, 64);
    case DType::kFloat16:
      return make(Code::Float, 16);
    case DType::kBFloat16:
      return make(Code::Bfloat, 16);
    case DType::kFloat32:
      return make(Code::Float, 32);
    case DType::kFloat64:
      return make(Code::Float, 64);
  }
  throw InvalidArgument("__dlpack__: unknown dtype");
}

// Why nanobind took no array from `x`: a DLPack capsule (oneflow_lite.from_dlpack asked the
// producer's __dlpack__ for it, so the producer's own errors arrive as they are) or an object
// with the buffer protocol.
[[noreturn]] void ThrowNotImportable(nb::handle x) {
  if (PyCapsule_CheckExact(x.ptr())) {
    const char* name = PyCapsule_GetName(x.ptr());
    if (name == nullptr) PyErr_Clear();
    throw nb::value_error(
        (std::string("from_dlpack(): the capsule is named '") + (name ? name : "") +
         "', not 'dltensor': it is not a DLPack capsule of the unversioned kind, or it was "
         "consumed already (a capsule gives its memory to one consumer only)")
            .c_str());
  }
  std::string why = "not " + std::string(nb::type_name(x.type()).c_str());
  if (PyObject_CheckBuffer(x.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(x.ptr(), &view, PyBUF_RECORDS_RO) == 0) {
      why = std::string(view.readonly ? "a read-only " : "a ") + nb::type_name(x.type()).c_str() +
            " buffer" +
            (view.readonly ? " (oneflow_lite tensors are writable)"
                           : " of a format DLPack cannot describe (" +
                                 std::string(view.format ? view.format : "B") + ")");
      PyBuffer_Release(&view);
    } else {
      PyErr_Clear();
    }
  }
  throw nb::type_error(("from_dlpack(): argument 'x' must have __dlpack__, be a DLPack capsule "
                        "or a writable buffer; got " +
                        why)
                           .c_str());
}

Tensor FromDlpack(nb::handle x) {
  DrainDrops();
  nb::ndarray<> a;
  if (!nb::try_cast(x, a)) ThrowNotImportable(x);
  Device device(DeviceType::kCPU, 0);
  if (a.device_type() == nb::device::cuda::value) {
    device = Device(DeviceType::kCUDA, a.device_id());
  } else if (a.device_type() != nb::device::cpu::value) {
    throw InvalidArgument("from_dlpack: the array is on DLPack device type " +
                          std::to_string(a.device_type()) +
                          "; oneflow_lite takes cpu (1) and cuda (2) memory");
  }
  const DType dtype = DTypeOfDlpack(a.dtype());
  std::vector<int64_t> shape(a.ndim()), strides(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i);
  }
  auto kept = std::make_unique<Kept>(Kept{a});
  Kept* raw = kept.get();
  Tensor t =
      from_blob(a.data(), Shape(shape), strides, 0, dtype, device, [raw] { QueueDrop(raw); });
  kept.release();  // the tensor's storage owns it now
  return t;
}

// The tensor as a "dltensor" capsule (nanobind makes one for an array of no framework).
nb::object DlpackExport(const Tensor& t) {
  void* data;
  {
    GilRelease r;
    data = t.data_ptr();  // waits for the tensor's writers
  }
  const size_t ndim = static_cast<size_t>(t.dim());
  std::vector<size_t> shape(ndim);
  for (size_t i = 0; i < ndim; ++i) shape[i] = static_cast<size_t>(t.shape()[i]);
  const std::vector<int64_t>& strides = t.stride();
  const Device d = t.device();
  const int device_type = d.is_cuda() ? nb::device::cuda::value : nb::device::cpu::value;
  nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  nb::ndarray<> arr(data, ndim, shape.data(), owner, strides.data(), DlpackOf(t.dtype()),
                    device_type, d.index());
  return nb::cast(arr);
}

}  // namespace

void BindDlpack(nb::module_& m) {
  m.def("from_dlpack", &FromDlpack, nb::arg("x").none());
  m.def("_dlpack_export", &DlpackExport);
}

}  // namespace ofl::python
