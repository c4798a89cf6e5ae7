#include "vm/collective_policy.h"

#include <string>
#include <vector>

#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

CollectivePolicy::CollectivePolicy(std::string op_name, kernels::collective::CollectiveId id,
                                   std::vector<BlobArg> inputs, std::vector<BlobArg> outputs,
                                   Run run)
    : op_name_(std::move(op_name)),
      id_(std::move(id)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      run_(std::move(run)) {
  for (const BlobArg& a : inputs_) reads_.push_back(a.blob);
  for (const BlobArg& a : outputs_) writes_.push_back(a.blob);
}

void CollectivePolicy::Compute(Instruction* instr) {
  VmErrorPtr poisoned;
  std::vector<kernels::TensorArg> in, out;
  std::vector<std::vector<char>> scratch;  // stands in for inputs whose producer never allocated
  in.reserve(inputs_.size());
  out.reserve(outputs_.size());
  for (const BlobArg& a : inputs_) {
    if (!poisoned) poisoned = a.blob->error();
    in.push_back(a.Resolve());
    if (in.back().data == nullptr && a.blob->bytes() > 0) {
      scratch.emplace_back(a.blob->bytes(), 0);
      in.back().data = scratch.back().data();
    }
  }
  for (const BlobArg& a : outputs_) out.push_back(a.Resolve());
  {
    const kernels::collective::WatchedCollective watched(
        id_, VirtualMachine::Get().wait_timeout(),
        [](const std::string& report) { Logger().warn("{}", report); });
    run_(in, out, instr->stream()->native());
  }
  if (poisoned) {
    for (const BlobArg& a : outputs_) a.blob->set_error(poisoned);
  }
}

std::string CollectivePolicy::RunningDetail() const {
  return kernels::collective::WatchdogStatus(id_);
}

}  // namespace ofl::vm
