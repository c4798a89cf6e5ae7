// "[0, 1, 3]": how the collectives, the NCCL collectives and the watchdog print rank lists and
// counts in their messages.
#pragma once

#include <string>
#include <vector>

namespace ofl::kernels::collective {

template <class T>
std::string Join(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace ofl::kernels::collective
