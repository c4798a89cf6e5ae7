// The Python class Tensor as a plain CPython type: each object is a PyObject header and the Tensor
// handle. Objects are made by NewTensorObject only (Python cannot construct one: ofl.tensor and
// the other factories make them) and freed by TensorDealloc; up to kFreeListSize freed objects are
// kept for the next ones, so a tiny op's result costs no trip through Python's allocator. Both
// run with the GIL held, which guards the free list.
#include <Python.h>

#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {

PyTypeObject* tensor_type = nullptr;

namespace {

constexpr int kFreeListSize = 64;
TensorObject* free_list[kFreeListSize];
int free_count = 0;

// The published objects by their tensor's TensorImpl (borrowed: an object leaves when it dies).
// Guarded by the GIL, as the free list.
std::unordered_map<const TensorImpl*, TensorObject*>& Published() {
  static auto* map = new std::unordered_map<const TensorImpl*, TensorObject*>();
  return *map;
}

void TensorDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* obj = reinterpret_cast<TensorObject*>(self);
  if (obj->published) {
    auto it = Published().find(obj->value.impl().get());
    if (it != Published().end() && it->second == obj) Published().erase(it);
  }
  obj->value.~Tensor();
  if (type == tensor_type && free_count < kFreeListSize) {
    free_list[free_count++] = obj;
  } else {
    type->tp_free(self);
  }
  Py_DECREF(type);  // objects of a heap type hold a reference to it
}

PyObject* TensorNew(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s cannot be constructed directly; use oneflow_lite.tensor, empty, zeros, ones, "
               "full, from_numpy or from_dlpack",
               type->tp_name);
  return nullptr;
}

}  // namespace

PyObject* NewTensorObject(Tensor t) {
  TensorObject* obj;
  if (free_count > 0) {
    obj = free_list[--free_count];
  } else {
    obj = static_cast<TensorObject*>(PyObject_Malloc(sizeof(TensorObject)));
    if (obj == nullptr) {
      PyErr_NoMemory();
      throw nb::python_error();
    }
  }
  PyObject_Init(reinterpret_cast<PyObject*>(obj), tensor_type);
  new (&obj->value) Tensor(std::move(t));
  obj->published = false;
  return reinterpret_cast<PyObject*>(obj);
}

PyObject* NewSubclassObject(nb::handle cls, Tensor t) {
  if (!PyType_Check(cls.ptr()) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), tensor_type)) {
    throw nb::type_error("_make_subclass(): argument 'cls' must be a subclass of Tensor");
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  PyObject* obj = type->tp_alloc(type, 0);  // holds a reference to the (heap) type
  if (obj == nullptr) throw nb::python_error();
  auto* tobj = reinterpret_cast<TensorObject*>(obj);
  new (&tobj->value) Tensor(std::move(t));
  tobj->published = false;
  return obj;
}

PyObject* PublishedTensorObject(nb::handle object_or_null, const Tensor& t) {
  const TensorImpl* key = t.impl().get();
  auto& published = Published();
  auto it = published.find(key);
  if (it != published.end()) {
    Py_INCREF(it->second);
    return reinterpret_cast<PyObject*>(it->second);
  }
  PyObject* obj = object_or_null.ptr() != nullptr && IsTensor(object_or_null) &&
                          TensorOf(object_or_null).impl().get() == key
                      ? nb::borrow(object_or_null).release().ptr()
                      : NewTensorObject(t);
  auto* tobj = reinterpret_cast<TensorObject*>(obj);
  published.emplace(key, tobj);
  tobj->published = true;
  return obj;
}

PyObject* ResultObject(PyObject* self, Tensor result) {
  if (result.impl() == TensorOf(self).impl()) {
    Py_INCREF(self);
    return self;
  }
  return NewTensorObject(std::move(result));
}

nb::handle MakeTensorType(nb::module_& m, const char* name, const PyType_Slot* number_slots) {
  std::vector<PyType_Slot> slots = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&TensorDealloc)},
      {Py_tp_new, reinterpret_cast<void*>(&TensorNew)},
      {Py_tp_free, reinterpret_cast<void*>(&PyObject_Free)},
  };
  for (const PyType_Slot* s = number_slots; s->slot != 0; ++s) slots.push_back(*s);
  slots.push_back({0, nullptr});
  const std::string qualified = std::string(nb::str(m.attr("__name__")).c_str()) + "." + name;
  // PyType_FromSpec keeps the name's pointer: the string lives as long as the type.
  static std::string type_name;
  type_name = qualified;
  PyType_Spec spec = {type_name.c_str(), static_cast<int>(sizeof(TensorObject)), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots.data()};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) throw nb::python_error();
  tensor_type = reinterpret_cast<PyTypeObject*>(type);
  m.attr(name) = nb::steal(type);
  return type;
}

}  // namespace ofl::python
