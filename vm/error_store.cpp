// ErrorStore: the errors raised inside the VM that no wait has reported yet.
#include "vm/error_store.h"

#include <string>

namespace ofl::vm {

void ErrorStore::Record(const VmErrorPtr& err) {
  std::lock_guard<std::mutex> lock(errors_mu_);
  unreported_.push_back(err);
}

void ErrorStore::ThrowFirstUnreported() {
  std::vector<VmErrorPtr> errors;
  {
    std::lock_guard<std::mutex> lock(errors_mu_);
    errors.swap(unreported_);
  }
  VmErrorPtr first;
  int64_t more = 0;
  for (const VmErrorPtr& e : errors) {
    if (e->reported.exchange(true)) continue;
    if (!first) {
      first = e;
    } else {
      ++more;
    }
  }
  if (first) {
    first->Throw(more == 0 ? std::string()
                           : " [and " + std::to_string(more) +
                                 " more error(s) raised inside the VM since the last sync]");
  }
}

}  // namespace ofl::vm
