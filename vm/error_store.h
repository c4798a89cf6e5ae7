// ErrorStore: the errors raised inside the VM that no wait has reported yet. The VM records each
// one as it fails an instruction (or a release); Sync re-throws the first one not yet reported.
#pragma once

#include <mutex>
#include <vector>

#include "vm/vm_error.h"

namespace ofl::vm {

class ErrorStore {
 public:
  // Keeps the error for the next Sync.
  void Record(const VmErrorPtr& err);
  // Takes every kept error and re-throws the first one that no wait reported yet (marking them all
  // reported), naming how many more there were. Returns when there is none.
  void ThrowFirstUnreported();

 private:
  std::mutex errors_mu_;
  std::vector<VmErrorPtr> unreported_;
};

}  // namespace ofl::vm
