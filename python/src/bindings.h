// The pieces of the extension oneflow_lite._C that its files share: the dtype objects, argument
// parsing with errors that name the function and the argument, and the Bind* functions each file
// defines. The extension includes the public C++ API only.
//
// How it binds: the Tensor class and every op call (the op table's generated functions, the
// hand-written methods, properties and factories) are CPython method and property tables whose
// functions read their arguments with the one parser (arg_parser.h), plus the class's number
// slots (operators.cpp). nanobind makes the module and binds what is no op call: the value
// classes (dtype, device, placement, sbp), the runtime's functions (sync, memory stats, trace,
// distributed set-up), autograd.grad, the numpy and DLPack exchanges.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

namespace ofl::python {

namespace nb = nanobind;

// A Python dtype object (ofl.float32, ...): one per DType, made at import and never freed, so
// `t.dtype is ofl.float32` holds.
struct PyDType {
  DType value;
  const char* name;  // "float32"
};
PyDType* DTypeObject(DType d);

// A Python int (or an object with __index__, as numpy's ints) as int64; a TypeError naming
// `fn` and `arg` for anything else (float, str, bool included).
int64_t ArgInt(nb::handle h, const char* fn, const char* arg);
// An int argument the runtime keeps as an int (a rank, an axis, a device index): ArgInt's
// checks, then InvalidArgument naming `fn`, `arg` and the value when it is outside lo..INT_MAX (a
// cast would wrap 2**32 to 0 and 2**31 to a negative value).
int ArgInt32(nb::handle h, const char* fn, const char* arg, int lo);
// Sizes given as *ints or as one sequence of ints: x.expand(2, 3) and x.expand((2, 3)).
std::vector<int64_t> ArgInts(nb::handle args_tuple, const char* fn, const char* arg);
// One sequence of ints (a tuple or list).
std::vector<int64_t> ArgIntSequence(nb::handle seq, const char* fn, const char* arg);
// A device: an ofl.device or a string ("sim:0"); None gives cpu.
Device ArgDevice(nb::handle h, const char* fn);
// A dtype object; None gives `fallback`.
DType ArgDType(nb::handle h, const char* fn, DType fallback);
// A Python number (int, float, bool, numpy scalar) as double; false for anything else.
bool NumberAsDouble(nb::handle h, double* out);
// A Python number as the ofl::Scalar an op takes: a bool, an int (numpy's integers too) exactly,
// a float or another real number as a double; false for anything else. OverflowError, naming
// `fn` and `arg`, for an int beyond 64 bits.
bool NumberAsScalar(nb::handle h, const char* fn, const char* arg, Scalar* out);

// Sets the Python error of a C++ error: ofl.InvalidArgument for InvalidArgument, and so on.
void SetErrorFor(const Error& e);

// Whether the interpreter is up and not finalizing (safe to call without the GIL).
bool PythonIsRunning();

// Gives the GIL up for a call that may block, and takes it back after (gil.cpp): in place of
// nanobind's gil_scoped_release, whose destructor Python may end the thread in at exit (which
// aborts the process). At exit a thread other than the exiting one never takes it back.
class GilRelease {
 public:
  GilRelease();
  ~GilRelease();
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};
// How many times a GilRelease gave the GIL up, on any thread (_C._gil_releases: the test of the
// GIL rule below counts them around each kind of call).
uint64_t GilReleaseCount();
// Sets the wait hooks (oneflow_lite/wait_hooks.h) of the package: the GIL given up while the
// runtime waits, and signals let through the waits of Python's main thread (its ident given).
void InstallWaitHooks(unsigned long python_main_thread);
// Run by the package's atexit hook, before Python finalizes (gil.cpp): from here on threads that
// would take the GIL back wait for the process's end instead.
void AtExit();
// When a wait of this thread was interrupted by a signal whose handler raised, sets that
// exception as the Python error and returns true (once).
bool RestoreInterrupt();

// The package's one GIL rule. Every op call (the functions, the operators, the in-place methods,
// to and cpu) is held over by a ReleaseIfGlobal: the GIL stays held, because the waits inside the
// runtime release it themselves (the wait hooks, types.cpp), so a call that does not wait pays
// nothing for it; a global tensor's op may exchange with the other ranks on this thread, so for one
// the GIL is released for the call (and for it only: tests/python/test_gil_rule.py checks the rule
// call by call, with GilReleaseCount). Calls that always wait or work long on this thread release
// it outright (GilRelease): sync, backward and autograd.grad, to_global and to_local, bulk copies
// from and to numpy, shutdown, memory snapshots. The result becomes a Python object after the
// release ends (NewTensorObject touches Python's allocator): the call's scope closes before it.
class ReleaseIfGlobal {
 public:
  // Released when any of the call's tensors is global.
  template <class... More>
  explicit ReleaseIfGlobal(const Tensor& t, const More&... more) {
    if (t.is_global() || (more.is_global() || ...)) release_.emplace();
  }

 private:
  std::optional<GilRelease> release_;
};

// The Python class Tensor (tensor_object.cpp): a plain CPython type whose objects hold the Tensor
// handle inline, made once by MakeTensorType. It is not a nanobind class: nanobind functions take
// and return tensors through the type caster at the end of this file, so making and freeing a
// tensor object costs no lookup table of nanobind's (docs/benchmarks.md, "From Python").
struct TensorObject {
  PyObject_HEAD Tensor value;
  bool published;  // the object PublishedTensorObject returns for its tensor (until it dies)
};
extern PyTypeObject* tensor_type;
inline bool IsTensor(nb::handle h) { return PyObject_TypeCheck(h.ptr(), tensor_type) != 0; }
// The tensor of a tensor object (IsTensor(h)).
inline Tensor& TensorOf(nb::handle h) { return reinterpret_cast<TensorObject*>(h.ptr())->value; }
// A new Python tensor object holding t (a new reference; throws nb::python_error if Python cannot
// allocate it).
PyObject* NewTensorObject(Tensor t);
// An object of `cls`, a Python subclass of Tensor (nn.Parameter), holding t (tensor_object.cpp).
PyObject* NewSubclassObject(nb::handle cls, Tensor t);
// The one Python object of a tensor the runtime keeps and hands out again (a gradient, PyTorch's
// `t.grad is t.grad`): the object published for t's TensorImpl while it lives, else a new one,
// published. Also publishes an object the program gives the runtime to keep (`p.grad = g` makes
// `p.grad is g`). A new reference.
PyObject* PublishedTensorObject(nb::handle object_or_null, const Tensor& t);
// `result` as a Python object: `self` itself when result is self's own tensor (the same
// TensorImpl: contiguous() of a contiguous tensor, to() its own device), as PyTorch returns the
// same object; else a new object. A new reference.
PyObject* ResultObject(PyObject* self, Tensor result);
// Makes the class `name` in `m`, with the number slots `number_slots` (ending with {0, nullptr}).
nb::handle MakeTensorType(nb::module_& m, const char* name, const PyType_Slot* number_slots);

// A tensor, or None for an undefined one (grad of a leaf that has none, unused inputs).
nb::object TensorOrNone(Tensor t);

// For the raw CPython functions (fastcall.cpp, operators.cpp): sets the exception being handled
// as the Python error it stands for (ofl.Error's classes, TypeError, ...) and returns null.
PyObject* RaiseCurrent();

// t += other, -=, *= and /= with a tensor or a number (add_, sub_, mul_, div_ and the operators);
// a TypeError naming `fn` for anything else.
void AddInPlace(Tensor& t, nb::handle other, const char* fn);
void SubInPlace(Tensor& t, nb::handle other, const char* fn);
void MulInPlace(Tensor& t, nb::handle other, const char* fn);
void DivInPlace(Tensor& t, nb::handle other, const char* fn);
// t.fill_(value) with a number; a TypeError naming fill_ for anything else.
void FillInPlace(Tensor& t, nb::handle value);
// Page-aligned host memory of at least `bytes` for a numpy array numpy() returns; *rounded is the
// size to give back. A large buffer goes back to a bounded cache, so the next array of its size
// finds its pages mapped (host_buffers.cpp). Neither needs the GIL (a read takes the memory only
// once the values are ready, on whichever thread copies them); std::bad_alloc when out of memory.
void* TakeHostMemory(size_t bytes, size_t* rounded);
void GiveBackHostMemory(void* data, size_t rounded) noexcept;
// A capsule that owns memory from TakeHostMemory (an array's base) and gives it back when it dies.
nb::capsule HostMemoryCapsule(void* data, size_t rounded);
void EmptyHostBufferCache();    // frees the cached buffers (ofl.empty_cache("cpu"))
size_t HostBufferCacheBytes();  // the bytes cached now

// Tensor's number slots (operators.cpp), given to the class when BindTensor makes it.
const PyType_Slot* TensorNumberSlots();

void BindErrors(nb::module_& m);
void BindTypes(nb::module_& m);
void BindTensor(nb::module_& m);
void BindFunctions(nb::module_& m);
// Tensor.item(), Tensor.tolist() and _C._to_numpy (host_reads.cpp).
void BindHostReads(nb::module_& m, nb::handle tensor_type);
void BindRuntime(nb::module_& m);
void BindGlobal(nb::module_& m);
void BindDlpack(nb::module_& m);
void BindBenchCalls(nb::module_& m);  // bench_calls.cpp: for tools/bench/python_bench.py
// Tensor.detach and backward and ofl.empty/zeros/ones as vectorcall functions (fastcall.cpp);
// after BindTensor and BindFunctions.
void BindFastCalls(nb::module_& m, nb::handle tensor_type);
// shape_calls.cpp: cat, stack, split, chunk, arange, linspace, the *_like factories.
void BindShapeCalls(nb::module_& m);
// random_calls.cpp: the generators, the random factories, dropout, uniform_/normal_/bernoulli.
void BindRandomCalls(nb::module_& m, nb::handle tensor_type);
// A tensor, or a list or tuple of tensors (None entries: undefined tensors), for argument `arg` of
// `fn`; TypeError naming them for anything else (functions.cpp).
std::vector<Tensor> TensorList(nb::handle h, const char* fn, const char* arg);
// optim_calls.cpp: _adam_step and _sgd_step, the multi-tensor steps of ofl.optim.
void BindOptimCalls(nb::module_& m);
// The op table's methods and functions (generated/python_ops.cpp, from ops/op_table.py).
void BindOpTable(nb::module_& m, nb::handle tensor_type);

}  // namespace ofl::python

// Tensor arguments and results of nanobind functions: a tensor object's own Tensor (by reference,
// so an in-place method changes the object's tensor) and a new tensor object for a result (which
// holds the same tensor: the same storage and autograd state, a new Python object).
namespace nanobind::detail {
template <>
struct type_caster<ofl::Tensor> {
  using Type = ofl::Tensor;
  static constexpr auto Name = const_name("oneflow_lite.Tensor");
  // By value and by reference alike from the object's tensor: a by-value argument is a copy of the
  // handle, never moved out of the object.
  template <typename T>
  using Cast = std::conditional_t<std::is_pointer_v<T>, Type*, Type&>;

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (!ofl::python::IsTensor(src)) return false;
    value = &ofl::python::TensorOf(src);
    return true;
  }

  template <typename T>
  static handle from_cpp(T&& v, rv_policy, cleanup_list*) noexcept {
    const ofl::Tensor* p;
    if constexpr (std::is_pointer_v<std::remove_reference_t<T>>) {
      p = v;
      if (p == nullptr) return none().release();
    } else {
      p = &v;
    }
    try {
      if constexpr (std::is_rvalue_reference_v<T&&> &&
                    !std::is_const_v<std::remove_reference_t<T>> &&
                    !std::is_pointer_v<std::remove_reference_t<T>>) {
        return ofl::python::NewTensorObject(std::move(v));
      } else {
        return ofl::python::NewTensorObject(*p);
      }
    } catch (...) {
      ofl::python::RaiseCurrent();
      return handle();
    }
  }

  template <typename T>
  bool can_cast() const noexcept {
    return std::is_pointer_v<T> || value != nullptr;
  }
  operator Type*() { return value; }
  operator Type&() {
    raise_next_overload_if_null(value);
    return *value;
  }

 private:
  Type* value = nullptr;
};
}  // namespace nanobind::detail
