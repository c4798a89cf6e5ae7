// An example program built against an installed oneflow_lite (see the CMakeLists.txt next to it and
// the README's "Using it from your CMake project"): expands and repeats a tensor, sums the expanded
// one back, and prints the results with the library's version.
#include <cstring>
#include <exception>
#include <iostream>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/version.h"

namespace {

void Print(const char* name, const ofl::Tensor& t) {
  std::cout << name << " " << t.shape() << ":";
  for (float v : t.to_vector<float>()) std::cout << " " << v;  // waits for the values
  std::cout << "\n";
}

}  // namespace

int main() {
  // The library this program runs with must be the one its headers came from.
  std::cout << "oneflow_lite " << ofl::version() << " (headers " << OFL_VERSION_STRING << ")\n";
  if (std::strcmp(ofl::version(), OFL_VERSION_STRING) != 0) {
    std::cerr << "version mismatch between headers and library\n";
    return 1;
  }
  try {
    ofl::Tensor x = ofl::tensor<float>({1, 2, 3}, {3, 1});
    ofl::Tensor e = x.expand({2, 3, 2});  // a view: no copy
    ofl::Tensor r = x.repeat({2, 2});     // queued; returns at once
    ofl::Tensor g = ofl::expand_backward(e.contiguous(), x.shape());
    Print("x", x);
    Print("expand", e);
    Print("repeat", r);
    Print("expand_backward", g);
    ofl::sync();
  } catch (const ofl::Error& err) {
    std::cerr << "oneflow_lite error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
