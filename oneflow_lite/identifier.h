// The names a program gives the runtime (op names, attribute names, device types) are lower-case
// identifiers: [a-z][a-z0-9_]*. Internal: each caller words its own refusal.
#pragma once

#include <string_view>

namespace ofl {

inline bool IsLowerIdentifier(std::string_view s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace ofl
