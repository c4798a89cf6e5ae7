// Reading a tensor's values into Python: Tensor.item() and Tensor.tolist() as raw CPython methods
// that make Python numbers straight from the elements (no numpy array in between: a training loop
// reads loss.item() every step), and _C._to_numpy for numpy() and printing. Host memory is taken
// only once the values are ready and were produced without error: a tensor whose producer failed
// (its memory could not be allocated, say) raises that error rather than MemoryError.
#include <nanobind/ndarray.h>

#include <Python.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "python/src/arg_parser.h"
#include "python/src/bindings.h"

namespace ofl::python {
namespace {

// A read of at most this many bytes goes into a buffer on the stack (copy_to_host: the VM never
// writes into it after the read returns or throws).
constexpr size_t kStackBytes = 512;

// The numpy element type of a dtype's values (bfloat16 as uint16: numpy has no bfloat16).
nb::dlpack::dtype NumpyDType(DType d) {
  using Code = nb::dlpack::dtype_code;
  const uint8_t bits = static_cast<uint8_t>(element_size(d) * 8);
  switch (d) {
    case DType::kBool:
      return {static_cast<uint8_t>(Code::Bool), bits, 1};
    case DType::kUInt8:
    case DType::kBFloat16:
      return {static_cast<uint8_t>(Code::UInt), bits, 1};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {static_cast<uint8_t>(Code::Float), bits, 1};
    default:
      return {static_cast<uint8_t>(Code::Int), bits, 1};
  }
}

template <class T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// One element as the Python number numpy's item() gives: bool, int or float (16-bit floats
// widened exactly). A new reference, or null with a Python error set.
PyObject* ElementObject(const char* p, DType d) {
  switch (d) {
    case DType::kBool:
      return PyBool_FromLong(*p != 0);
    case DType::kUInt8:
      return PyLong_FromLong(Load<uint8_t>(p));
    case DType::kInt8:
      return PyLong_FromLong(Load<int8_t>(p));
    case DType::kInt16:
      return PyLong_FromLong(Load<int16_t>(p));
    case DType::kInt32:
      return PyLong_FromLong(Load<int32_t>(p));
    case DType::kInt64:
      return PyLong_FromLongLong(Load<int64_t>(p));
    case DType::kFloat16:
      return PyFloat_FromDouble(static_cast<float>(float16::from_bits(Load<uint16_t>(p))));
    case DType::kBFloat16:
      return PyFloat_FromDouble(static_cast<float>(bfloat16::from_bits(Load<uint16_t>(p))));
    case DType::kFloat32:
      return PyFloat_FromDouble(Load<float>(p));
    case DType::kFloat64:
      return PyFloat_FromDouble(Load<double>(p));
  }
  PyErr_SetString(PyExc_TypeError, "tolist: unknown dtype");
  return nullptr;
}

// A list of n items, item i made by item(i) (a new reference, or null with a Python error set,
// which drops the list). Items are made in order.
template <class Item>
PyObject* MakeList(Py_ssize_t n, Item item) {
  PyObject* list = PyList_New(n);
  if (list == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = item(i);
    if (v == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, v);
  }
  return list;
}

// The n elements of type T at p, each made by make(T): the innermost dim of tolist() for the
// common dtypes, with the dtype switch outside the loop.
template <class T, class Make>
PyObject* RowList(const char* p, Py_ssize_t n, Make make) {
  return MakeList(
      n, [&](Py_ssize_t i) { return make(Load<T>(p + i * static_cast<Py_ssize_t>(sizeof(T)))); });
}

// The innermost dim: a list of the n elements at p, as ElementObject makes each.
PyObject* ElementList(const char* p, Py_ssize_t n, DType d) {
  switch (d) {
    case DType::kFloat32:
      return RowList<float>(p, n, [](float v) { return PyFloat_FromDouble(v); });
    case DType::kFloat64:
      return RowList<double>(p, n, [](double v) { return PyFloat_FromDouble(v); });
    case DType::kInt64:
      return RowList<int64_t>(p, n, [](int64_t v) { return PyLong_FromLongLong(v); });
    case DType::kInt32:
      return RowList<int32_t>(p, n, [](int32_t v) { return PyLong_FromLong(v); });
    default:  // the other dtypes element by element
      break;
  }
  const size_t elem = element_size(d);
  return MakeList(
      n, [&](Py_ssize_t i) { return ElementObject(p + static_cast<size_t>(i) * elem, d); });
}

// Nested lists of the row-major elements at *p, dims [dim, ndim) of `shape` (ndim >= 1); advances
// *p.
PyObject* NestedList(const char** p, const Shape& shape, int dim, DType d, size_t elem) {
  const Py_ssize_t n = static_cast<Py_ssize_t>(shape[dim]);
  if (dim == shape.ndim() - 1) {
    PyObject* list = ElementList(*p, n, d);
    *p += static_cast<size_t>(n) * elem;
    return list;
  }
  return MakeList(n, [&](Py_ssize_t) { return NestedList(p, shape, dim + 1, d, elem); });
}

// t's elements in row-major order into `stack` when they fit, else into memory that *heap takes
// only once they are ready. Returns where they are. The GIL is held; the runtime's waits release
// it (the wait hooks), and a global tensor's read, a collective, runs without it.
const char* ReadElements(const Tensor& t, size_t nbytes, char* stack,
                         std::shared_ptr<std::vector<char>>* heap, const char* op) {
  if (nbytes <= kStackBytes) {
    ReleaseIfGlobal release(t);
    t.copy_to_host(stack, nbytes);
    return stack;
  }
  auto out = std::make_shared<std::vector<char>>();
  {
    GilRelease release;  // a bulk copy
    detail::ReadToHost(t, op, [out](size_t n) -> void* {
      out->resize(n);
      return out->data();
    });
  }
  *heap = std::move(out);
  return (*heap)->data();
}

PyObject* Item(PyObject* self, PyObject* /*unused*/) {
  try {
    const Tensor& t = TensorOf(self);
    const int64_t n = t.numel();
    if (n != 1) {
      throw InvalidArgument("item: a tensor with " + std::to_string(n) +
                            " elements cannot be converted to a Python number");
    }
    alignas(8) char buf[8];
    {
      ReleaseIfGlobal release(t);
      t.copy_to_host(buf, element_size(t.dtype()));
    }
    return ElementObject(buf, t.dtype());
  } catch (...) {
    return RaiseCurrent();
  }
}

PyObject* ToList(PyObject* self, PyObject* /*unused*/) {
  try {
    const Tensor& t = TensorOf(self);
    const DType d = t.dtype();
    const size_t elem = element_size(d);
    const size_t nbytes = static_cast<size_t>(t.numel()) * elem;
    alignas(8) char stack[kStackBytes];
    std::shared_ptr<std::vector<char>> heap;
    const char* p = ReadElements(t, nbytes, stack, &heap, "tolist");
    if (t.shape().ndim() == 0) return ElementObject(p, d);  // a 0-dim tensor: its number
    return NestedList(&p, t.shape(), 0, d, elem);
  } catch (...) {
    return RaiseCurrent();
  }
}

// The host memory of one numpy() read: taken by the read once the values are ready (on whichever
// thread copies them), owned by the read's function object until the array takes it.
struct ReadMemory {
  void* data = nullptr;
  size_t rounded = 0;
  ~ReadMemory() {
    if (data != nullptr) GiveBackHostMemory(data, rounded);
  }
};

nb::object ToNumpy(const Tensor& t) {
  const Shape& shape = t.shape();
  std::vector<size_t> dims(shape.begin(), shape.end());
  auto mem = std::make_shared<ReadMemory>();
  {
    GilRelease release;
    detail::ReadToHost(t, "numpy", [mem](size_t nbytes) -> void* {
      mem->data = TakeHostMemory(nbytes, &mem->rounded);
      return mem->data;
    });
  }
  if (mem->data == nullptr) mem->data = TakeHostMemory(0, &mem->rounded);  // read nothing
  nb::capsule owner = HostMemoryCapsule(mem->data, mem->rounded);
  void* data = std::exchange(mem->data, nullptr);
  return nb::ndarray<nb::numpy>(data, dims.size(), dims.data(), owner, nullptr,
                                NumpyDType(t.dtype()))
      .cast();
}

PyMethodDef kMethods[] = {
    {"item", reinterpret_cast<PyCFunction>(&Item), METH_NOARGS,
     "The value of a one-element tensor as a Python number (waits for its producer)."},
    {"tolist", reinterpret_cast<PyCFunction>(&ToList), METH_NOARGS,
     "The values as nested lists of Python numbers (a number for a 0-dim tensor)."},
    {nullptr, nullptr, 0, nullptr}};
PyMethodDef kNoFunctions[] = {{nullptr, nullptr, 0, nullptr}};

}  // namespace

void BindHostReads(nb::module_& m, nb::handle tensor_type) {
  BindMethodTable(m, tensor_type, kMethods, kNoFunctions);
  m.def("_to_numpy", &ToNumpy);
}

}  // namespace ofl::python
