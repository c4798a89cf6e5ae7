// CollectivePolicy: one collective (a global tensor's boxing step) as an instruction on the
// collective stream. The VM orders it like any instruction through the blobs it reads and writes;
// the one collective stream per process runs collectives in issue order, which is the same order
// on every rank because every rank issues the same program.
//
// A collective never skips: when an input is poisoned (its producer failed on this rank) it still
// takes part, sending whatever its buffer holds, and then poisons its outputs with that error, so
// the other ranks are not left waiting for a rank that dropped out. For the same reason a hang
// report never cancels a queued collective: it still runs when its turn comes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/collective/watchdog.h"
#include "kernels/kernel.h"
#include "vm/instruction.h"

namespace ofl::vm {

class CollectivePolicy final : public InstructionPolicy {
 public:
  // `run` gets the resolved inputs and outputs (host pointers) and makes the blocking calls; while
  // it runs, the collective watchdog watches `id` (kernels/collective/watchdog.h) with the VM's
  // hang timeout and logs its report as a warning.
  // `stream` is the native stream of the instruction's stream: an asynchronous device (NCCL on a
  // GPU) enqueues there and returns; MPI ignores it and blocks.
  using Run =
      std::function<void(const std::vector<kernels::TensorArg>& inputs,
                         const std::vector<kernels::TensorArg>& outputs, NativeStream stream)>;
  CollectivePolicy(std::string op_name, kernels::collective::CollectiveId id,
                   std::vector<BlobArg> inputs, std::vector<BlobArg> outputs, Run run);
  const char* policy_name() const override { return "Collective"; }
  const std::string& op_name() const override { return op_name_; }
  void Compute(Instruction* instr) override;
  bool RunsOnPoisonedInputs() const override { return true; }
  bool Abandonable() const override { return false; }
  std::string RunningDetail() const override;

 private:
  std::string op_name_;
  kernels::collective::CollectiveId id_;
  std::vector<BlobArg> inputs_, outputs_;
  Run run_;
};

}  // namespace ofl::vm
