#include "oneflow_lite/functional/collective_policy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// FNV-1a: the ranks need the same 64 bits for the same text, nothing more.
uint64_t Hash(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The agreement's words per rank with the fingerprint check: status, sequence number, hash.
constexpr size_t kWords = 3;

}  // namespace

CollectivePolicy::CollectivePolicy(std::string op_name, kernels::collective::CollectiveId id,
                                   std::vector<BlobArg> inputs, std::vector<BlobArg> outputs,
                                   Run run)
    : op_name_(std::move(op_name)),
      id_(std::move(id)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      run_(std::move(run)),
      fingerprint_hash_(Hash(id_.fingerprint)) {
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
    // exchange) cannot fail here, but exchange too, so that every collective begins alike (and
    // an out-of-step pair meets in the fingerprint check).
    if (id_.ranks.size() > 1) {
      const Device& device = instr->stream()->device();
      // A GPU's channel is also where its NCCL collectives agree on their communicator
      // (kernels/collective/nccl_collectives.cpp): the same worker, in the same order everywhere.
      statuses = Agree(status, coll::CollectiveChannel(device));
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

std::vector<int> CollectivePolicy::Agree(int status, int channel) const {
  if (!coll::CollectiveChecksEnabled()) return coll::GatherStatus(status, id_.ranks, channel);
  const std::vector<int64_t> words = coll::GatherWords(
      {status, id_.seq, static_cast<int64_t>(fingerprint_hash_)}, id_.ranks, channel);
  std::vector<int> statuses(id_.ranks.size());
  for (size_t i = 0; i < statuses.size(); ++i) {
    statuses[i] = static_cast<int>(words[i * kWords]);
    // Every rank reads the same table: all find the same first rank out of step, or none does.
    if (words[i * kWords + 1] != words[1] || words[i * kWords + 2] != words[2]) {
      ThrowOutOfStep(i, words, channel);
    }
  }
  return statuses;
}

void CollectivePolicy::ThrowOutOfStep(size_t other, const std::vector<int64_t>& words,
                                      int channel) const {
  // The texts behind the hashes, for the message: every rank sends its own (truncated to a slot);
  // all of them are here, since all saw the same mismatch.
  constexpr size_t kText = 256;
  std::vector<char> mine(kText, 0), all(kText * id_.ranks.size(), 0);
  std::memcpy(mine.data(), id_.fingerprint.data(), std::min(kText - 1, id_.fingerprint.size()));
  coll::AllGatherV(mine.data(), kText, all.data(),
                   std::vector<int64_t>(id_.ranks.size(), static_cast<int64_t>(kText)),
                   DType::kUInt8, id_.ranks, channel);
  auto text_of = [&](size_t i) { return std::string(all.data() + i * kText); };
  auto seq_of = [&](size_t i) { return std::to_string(words[i * kWords + 1]); };
  throw Error("collectives out of step: rank " + std::to_string(id_.ranks[0]) +
              " issued collective #" + seq_of(0) + " over " + coll::Join(id_.ranks) + " (" +
              text_of(0) + ") but rank " + std::to_string(id_.ranks[other]) +
              " issued collective #" + seq_of(other) + " (" + text_of(other) +
              "); every rank must issue the same global ops in the same order (a global op, or "
              "a read of a global tensor, on some ranks only pairs with another collective on "
              "the others). No rank moved data");
}

std::string CollectivePolicy::RunningDetail() const {
  return kernels::collective::WatchdogStatus(id_);
}

}  // namespace ofl::functional
