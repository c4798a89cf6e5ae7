// CollectivePolicy: one collective (a global tensor's boxing step) as an instruction on the
// collective stream. A policy of the layer that issues collectives, not of vm/: the VM runs it as
// any instruction and knows nothing of the process group, MPI or NCCL. The VM orders it like any
// instruction through the blobs it reads and writes; the one collective stream per process runs
// collectives in issue order, which is the same order on every rank because every rank issues the
// same program.
//
// A collective never skips on one rank alone: the other ranks would pair their next collective
// with this one. Whatever fails locally — an input poisoned (its producer failed on this rank), an
// output that cannot be allocated (Prepare's OutOfMemory is caught and kept) — the instruction
// still runs, and begins with an agreement: every member of the rank list contributes one int,
// its status (0, or why it cannot take part), in one small all-gather. With the fingerprint check
// (on unless OFL_CHECK_COLLECTIVES=0) the same all-gather also carries the collective's sequence
// number and a 64-bit hash of its fingerprint (three int64 words per rank instead of one int):
// ranks whose programs issued different collectives at this point (another kind, shape, dtype,
// SBP or placement) see it in the one table they all share, and all throw the same "out of step"
// error, naming both collectives (their texts are exchanged only then), before any data moves.
// That costs no message of its own: the exchange happens anyway, a few bytes larger.
// When every status is 0 the data moves; otherwise no rank moves data (so no rank needs memory
// it could not get: no scratch buffer, on the host or on a GPU), and every rank's outputs are
// poisoned: the failing rank with its own error (its OutOfMemory, or its input's error), the
// others with an error of the same kind naming the failing rank and the cause. So the error
// reaches every rank's next wait, and the ranks stay in step for the next collective.
// The price is one small exchange per collective, failures or not: nothing can know without an
// exchange whether another rank failed. It is latency-bound (a few microseconds between processes
// of one node), small beside a boxing's data movement and the instruction around it. A collective
// on a device's stream (NCCL on a GPU, the sim's staged MPI) makes it over MPI on the host, on a
// communicator of its own per device type (the channel), so it never interleaves with the host
// collective stream's MPI calls; it makes that stream's worker wait for the other ranks to reach
// the collective before it enqueues it.
// For the same reason a hang report never cancels a queued collective: it still runs when its
// turn comes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/collective/watchdog.h"
#include "kernels/kernel.h"
#include "vm/instruction.h"

namespace ofl::functional {

class CollectivePolicy final : public vm::InstructionPolicy {
 public:
  // `run` gets the resolved inputs and outputs (host pointers) and makes the blocking calls; while
  // it runs, the collective watchdog watches `id` (kernels/collective/watchdog.h) with the VM's
  // hang timeout and logs its report as a warning.
  // `stream` is the native stream of the instruction's stream: NCCL on a GPU enqueues there and
  // waits for the device to complete it (up to the same timeout, then it aborts its communicator:
  // kernels/collective/nccl_collectives.h); MPI ignores it and blocks.
  using Run =
      std::function<void(const std::vector<kernels::TensorArg>& inputs,
                         const std::vector<kernels::TensorArg>& outputs, NativeStream stream)>;
  CollectivePolicy(std::string op_name, kernels::collective::CollectiveId id,
                   std::vector<vm::BlobArg> inputs, std::vector<vm::BlobArg> outputs, Run run);
  const char* policy_name() const override { return "Collective"; }
  const std::string& op_name() const override { return op_name_; }
  // Allocates the outputs; a failure is kept for Compute (which tells the other ranks) instead of
  // thrown, so the collective still runs.
  void Prepare(vm::Instruction* instr) override;
  void Compute(vm::Instruction* instr) override;
  bool RunsOnPoisonedInputs() const override { return true; }
  bool Abandonable() const override { return false; }
  std::string RunningDetail() const override;

 private:
  // The agreement: every member's status (and, with the fingerprint check, its sequence number
  // and fingerprint hash), over `channel`. Throws the out-of-step error on every rank alike.
  std::vector<int> Agree(int status, int channel) const;
  [[noreturn]] void ThrowOutOfStep(size_t other, const std::vector<int64_t>& words,
                                   int channel) const;

  std::string op_name_;
  kernels::collective::CollectiveId id_;
  std::vector<vm::BlobArg> inputs_, outputs_;
  Run run_;
  uint64_t fingerprint_hash_ = 0;  // of id_.fingerprint (FNV-1a)
  // Set by Prepare, read by Compute (the worker, one after the other).
  bool prepare_failed_ = false;
  vm::ErrorKind prepare_kind_ = vm::ErrorKind::kGeneric;
  std::string prepare_what_;
};

}  // namespace ofl::functional
