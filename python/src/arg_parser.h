// The one argument parser of the vectorcall functions (the op table's generated bindings,
// generated/python_ops.cpp, and the hand-written fast calls, fastcall.cpp): positional arguments
// and keywords matched to names, PyTorch's TypeErrors for a missing, unknown or repeated one, and
// the readers of each argument type. Needs the GIL.
#pragma once

#include <Python.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {

// Up to names.size() positional arguments, then keywords, into `out` (left null where not given:
// the caller's defaults). The first `required` names must be given: a TypeError naming `fn` and
// the argument otherwise, as for an unknown keyword, one given twice, or too many positionals.
void ParseArgs(const char* fn, PyObject* const* args, size_t nargsf, PyObject* kwnames,
               std::initializer_list<const char*> names, size_t required, nb::handle* out);
// Keywords only, into the slots of `out` after the `npos` positional ones already there.
void ParseKeywords(const char* fn, PyObject* const* kwargs, PyObject* kwnames,
                   std::initializer_list<const char*> names, Py_ssize_t npos, nb::handle* out);

// *ints or one tuple/list of ints, in a vector the thread keeps, so that a call allocates nothing
// for its sizes: valid until this thread's next FastInts (the op it is passed to never calls back
// into Python).
const std::vector<int64_t>& FastInts(PyObject* const* args, Py_ssize_t nargs, const char* fn,
                                     const char* arg);
// A tensor argument (h may be null: a missing argument); a TypeError naming fn and arg otherwise.
const Tensor& ArgTensor(nb::handle h, const char* fn, const char* arg);
// A tensor, or a Python number as ofl::wrapped_number beside `like` (the op's first tensor).
Tensor ArgTensorOrNumber(nb::handle h, const char* fn, const char* arg, const Tensor& like);
bool ArgBool(nb::handle h, const char* fn, const char* arg);
// A Python number (bool, int, float, numpy scalar) as an exact Scalar.
Scalar ArgScalar(nb::handle h, const char* fn, const char* arg);
// A Python number (int, float, numpy scalar; not bool) as a double.
double ArgDouble(nb::handle h, const char* fn, const char* arg);
// A str.
std::string ArgString(nb::handle h, const char* fn, const char* arg);
// A tuple/list of ints, or one int (PyTorch's int[1]: sum(dim=1)).
std::vector<int64_t> ArgIntList(nb::handle h, const char* fn, const char* arg);
// As ArgIntList, with null or None giving the empty list (the argument's default).
std::vector<int64_t> ArgIntListOrNone(nb::handle h, const char* fn, const char* arg);

// Installs `methods` on the tensor class and `functions` in the module (each table ends with a
// null entry); the tables must live as long as the process.
void BindMethodTable(nb::module_& m, nb::handle tensor_type, PyMethodDef* methods,
                     PyMethodDef* functions);
// Installs the properties `defs` (ending with a null entry) on the tensor class; the table must
// live as long as the process.
void BindProperties(nb::handle tensor_type, PyGetSetDef* defs);

}  // namespace ofl::python
