#include "oneflow_lite/functional/collective_policy.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/collective/nccl_collectives.h"
#include "kernels/collective/rank_list.h"
#include "oneflow_lite/error.h"
#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::functional {

using vm::BlobArg;
using vm::ErrorKind;
using vm::ErrorKindOf;
using vm::Instruction;
using vm::InstructionPolicy;
using vm::Logger;
using vm::VirtualMachine;
using vm::VmError;
using vm::VmErrorPtr;

namespace {

namespace coll = kernels::collective;

// The statuses of the agreement (collective_policy.h): 0 takes part; otherwise why not, with the
// ErrorKind of the cause.
constexpr int kOk = 0;
constexpr int kPrepareFailed = 1;   // + ErrorKind: an output could not be allocated
constexpr int kInputPoisoned = 16;  // + ErrorKind: an input's producer failed on that rank
constexpr int kKinds = 4;           // ErrorKind values

int StatusOf(int base, ErrorKind kind) { return base + static_cast<int>(kind); }

const char* KindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "InvalidArgument";
    case ErrorKind::kOutOfMemory:
      return "OutOfMemory";
    case ErrorKind::kDevice:
      return "DeviceError";
    case ErrorKind::kGeneric:
      break;
  }
  return "Error";
}

// A program that calls MPI_Finalize while collectives are queued: they run before MPI goes (every
// rank's program issued them, so they pair), as long as the VM makes progress.
void LetQueuedWorkRun() {
  VirtualMachine& vm = VirtualMachine::Get();
  const double timeout_s = vm.wait_timeout();
  if (!vm.DrainWhileProgressing(static_cast<int64_t>(timeout_s * 1e9))) {
    Logger().warn(
        "MPI_Finalize: {} instruction(s) still in flight made no progress for {} s; the "
        "process group goes without them",
        vm.in_flight(), timeout_s);
  }
}

}  // namespace

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
  static std::once_flag hooked;
  std::call_once(hooked, [] { coll::SetBeforeMpiFinalizeHook(&LetQueuedWorkRun); });
}

void CollectivePolicy::Prepare(Instruction* instr) {
  // A failure here must not skip the collective (the other ranks would pair their next one with
  // it): it is kept for Compute, which tells the other ranks first.
  prepare_failed_ = false;
  try {
    InstructionPolicy::Prepare(instr);
    return;
  } catch (const std::exception& e) {
    prepare_kind_ = ErrorKindOf(e);
    prepare_what_ = e.what();
  }
  prepare_failed_ = true;
}

void CollectivePolicy::Compute(Instruction* instr) {
  VmErrorPtr poisoned;
  for (const BlobArg& a : inputs_) {
    if (!poisoned) poisoned = a.blob->error();
  }
  int status = kOk;
  if (poisoned) {
    status = StatusOf(kInputPoisoned, poisoned->kind);
  } else if (prepare_failed_) {
    status = StatusOf(kPrepareFailed, prepare_kind_);
  }
  std::vector<int> statuses;
  {
    const double timeout_s = VirtualMachine::Get().wait_timeout();
    const kernels::collective::WatchedCollective watched(
        id_, timeout_s, [](const std::string& report) { Logger().warn("{}", report); });
    // The agreement: a collective runs on every rank or on none. Blob-less ones (the shape
    // exchange) cannot fail here, but exchange too, so that every collective begins alike (an
    // out-of-step pair still meets in OFL_CHECK_COLLECTIVES's check, which comes next).
    if (id_.ranks.size() > 1) {
      const Device& device = instr->stream()->device();
      // A GPU's channel is also where its NCCL collectives agree on their communicator
      // (kernels/collective/nccl_collectives.cpp): the same worker, in the same order everywhere.
      statuses = coll::GatherStatus(status, id_.ranks, coll::CollectiveChannel(device));
    } else {
      statuses.assign(1, status);
    }
    bool all_ok = true;
    for (int st : statuses) all_ok = all_ok && st == kOk;
    if (all_ok) {
      std::vector<kernels::TensorArg> in, out;
      in.reserve(inputs_.size());
      out.reserve(outputs_.size());
      for (const BlobArg& a : inputs_) in.push_back(a.Resolve());
      for (const BlobArg& a : outputs_) out.push_back(a.Resolve());
      // An NCCL collective waits for its completion on this worker and gives up (aborting its
      // communicator) after the watchdog's timeout, naming this collective.
      const coll::NcclCollectiveScope nccl_scope(op_name_, id_, timeout_s);
      run_(in, out, instr->stream()->native());
      return;
    }
  }
  // Some rank cannot take part: no rank moved data, and every rank's outputs carry an error.
  if (poisoned) {  // this rank's own earlier failure, already kept for its waits
    for (const BlobArg& a : outputs_) a.blob->set_error(poisoned);
    return;
  }
  if (prepare_failed_) {
    VmError own;
    own.kind = prepare_kind_;
    own.message = prepare_what_ +
                  " (this rank's part of the collective; it told the other ranks, and no rank "
                  "moved data)";
    own.Throw();
  }
  for (size_t i = 0; i < statuses.size(); ++i) {
    const int st = statuses[i];
    if (st == kOk) continue;
    const bool input = st >= kInputPoisoned;
    const int k = st - (input ? kInputPoisoned : kPrepareFailed);
    VmError peer;
    peer.kind = k >= 0 && k < kKinds ? static_cast<ErrorKind>(k) : ErrorKind::kGeneric;
    peer.message =
        "rank " + std::to_string(id_.ranks[i]) + " could not take part in " + op_name_ + " (" +
        id_.fingerprint + "): " +
        (input ? std::string("an earlier op that produces its input failed there (") +
                     KindName(peer.kind) + ")"
               : std::string(KindName(peer.kind)) + " while allocating its output there") +
        "; no rank moved data, and this collective's outputs are poisoned on every "
        "rank (that rank's error names the cause)";
    peer.Throw();
  }
}

std::string CollectivePolicy::RunningDetail() const {
  return kernels::collective::WatchdogStatus(id_);
}

}  // namespace ofl::functional
