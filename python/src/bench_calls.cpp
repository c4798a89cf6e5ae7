// oneflow_lite._C._time_cpp_calls(case, calls): the C++ calls that tools/bench/python_bench.py's
// cases make from Python, timed here in the same process (calls back to back, then one sync, as
// the Python loop does), so that the Python layer's cost per call is the difference of two figures
// taken moments apart in one process rather than in two processes minutes apart.
#include <nanobind/stl/string.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

Tensor Input(bool requires_grad) {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  Tensor x = ofl::tensor<float>(data, Shape({4, 1, 3}));
  if (requires_grad) x.requires_grad_(true);
  return x;
}

double TimeCppCalls(const std::string& name, int64_t calls) {
  const Tensor x = Input(false);
  Tensor a = Input(true), b = Input(true);
  std::function<void()> call;
  if (name == "py_expand_contiguous") {
    call = [&] { Tensor y = x.expand({2, 4, 5, 3}).contiguous(); };
  } else if (name == "py_repeat") {
    call = [&] { Tensor y = x.repeat({2, 1, 2, 1}); };
  } else if (name == "py_empty") {
    call = [] { Tensor y = ofl::empty(Shape({4, 3})); };
  } else if (name == "py_add_sum_backward") {
    call = [&] { (a + b).sum().backward(); };
  } else {
    throw InvalidArgument("_time_cpp_calls: no case named '" + name + "'");
  }
  GilRelease release;
  ofl::sync();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) call();
  ofl::sync();
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(calls > 0 ? calls : 1);
}

}  // namespace

void BindBenchCalls(nb::module_& m) {
  m.def("_time_cpp_calls", &TimeCppCalls, nb::arg("case"), nb::arg("calls"));
}

}  // namespace ofl::python
