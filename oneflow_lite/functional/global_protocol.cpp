// The collective protocol of global tensors (global_protocol.h): sequence numbers, fingerprints,
// the in-step check of OFL_CHECK_COLLECTIVES, and issuing a collective as a VM instruction.
#include "oneflow_lite/functional/global_protocol.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::functional {

namespace coll = kernels::collective;

namespace {

// The collective stream of the placement's device on this rank (the host's for metadata).
vm::Stream* CollectiveStream(const Device& device = HostDevice()) {
  return vm::VirtualMachine::Get().devices().GetStream(device, vm::StreamRole::kCollective);
}

const coll::DeviceCollectives* FindCollectives(const Placement& p) {
  DeviceType type;
  if (!find_device_type(p.device_type(), &type)) return nullptr;
  return coll::FindDeviceCollectives(type);
}

// OFL_CHECK_COLLECTIVES, the same on every rank once init_distributed ran (see
// coll::CollectiveChecksEnabled): the check is an exchange of its own, which a rank without it
// would pair with its next collective.
bool CheckCollectives() { return coll::CollectiveChecksEnabled(); }

// The number of the next collective over `ranks`. Counted per rank list: every member of a list
// issues the same collectives over it in the same order, while ranks outside it issue none.
int64_t NextSeq(const std::vector<int>& ranks) {
  static std::mutex mu;
  static std::map<std::vector<int>, int64_t> next;
  std::lock_guard<std::mutex> lock(mu);
  return next[ranks]++;
}

// With OFL_CHECK_COLLECTIVES=1, run by the collective stream before each collective: the ranks
// exchange their sequence numbers and fingerprints and, when any differs from the first rank's,
// all of them throw the same error naming both sides (so they skip the collective together and
// stay in step for the next one).
void CheckInStep(int64_t seq, const std::string& fingerprint, const std::vector<int>& ranks,
                 int channel) {
  constexpr size_t kText = 256;
  constexpr size_t kSlot = kText + sizeof(int64_t);
  std::vector<char> mine(kSlot, 0), all(kSlot * ranks.size(), 0);
  std::memcpy(mine.data(), &seq, sizeof(seq));
  std::memcpy(mine.data() + sizeof(seq), fingerprint.data(),
              std::min(kText - 1, fingerprint.size()));
  coll::AllGatherV(mine.data(), kSlot, all.data(),
                   std::vector<int64_t>(ranks.size(), static_cast<int64_t>(kSlot)), DType::kUInt8,
                   ranks, channel);
  auto seq_of = [&](size_t i) {
    int64_t v = 0;
    std::memcpy(&v, all.data() + i * kSlot, sizeof(v));
    return v;
  };
  auto text_of = [&](size_t i) { return std::string(all.data() + i * kSlot + sizeof(int64_t)); };
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (seq_of(i) != seq_of(0) || text_of(i) != text_of(0)) {
      throw Error("collectives out of step (OFL_CHECK_COLLECTIVES): rank " +
                  std::to_string(ranks[0]) + " issued collective #" + std::to_string(seq_of(0)) +
                  " (" + text_of(0) + ") but rank " + std::to_string(ranks[i]) +
                  " issued collective #" + std::to_string(seq_of(i)) + " (" + text_of(i) +
                  "); every rank must issue the same global ops in the same order");
    }
  }
}

// The instruction's op name: the kind, the sequence number and the rank list, which together name
// the same collective on every rank (the trace tool pairs the ranks' records by them).
std::string CollectiveName(const std::string& kind, int64_t seq, const std::vector<int>& ranks) {
  std::string s = kind + " #" + std::to_string(seq) + " over [";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

}  // namespace

const Device& HostDevice() {
  static const Device host(DeviceType::kCPU, 0);
  return host;
}

const coll::DeviceCollectives& CheckedCollectivesOf(const char* op, const Placement& p) {
  const coll::DeviceCollectives* c = FindCollectives(p);
  if (c == nullptr) {
    throw InvalidArgument(std::string(op) + ": " + p.str() + ": device type '" + p.device_type() +
                          "' is not supported for global tensors (" +
                          coll::DeviceCollectivesDescription() + ")");
  }
  c->CheckUsable(op, p.str());
  return *c;
}

const coll::DeviceCollectives& CollectivesOf(const Placement& p) {
  const coll::DeviceCollectives* c = FindCollectives(p);
  if (c == nullptr) throw Error("CollectivesOf: " + p.str() + " was not checked");
  return *c;
}

Device PlacementDevice(const Placement& p) { return CollectivesOf(p).LocalDevice(); }

Fingerprint MakeFingerprint(const char* kind, DType dtype, const Shape& logical,
                            const std::string& sbps, const Placement& p) {
  return {std::string(kind) + ", " + to_string(dtype) + ", logical " + logical.str() + ", " + sbps +
          ", " + p.str()};
}

void IssueCollective(const Fingerprint& fp, const Placement& p, std::vector<vm::BlobArg> in,
                     std::vector<vm::BlobArg> out, CollectivePolicy::Run run) {
  const int64_t seq = NextSeq(p.ranks());
  if (CheckCollectives()) {
    // On the channel of the stream that runs it: a GPU's collective worker must not make MPI calls
    // on the CPU collective stream's communicators, whose worker may use them at the same time.
    run = [seq, text = fp.text, ranks = p.ranks(),
           channel = coll::CollectiveChannel(PlacementDevice(p)),
           run = std::move(run)](const auto& i, const auto& o, NativeStream s) {
      CheckInStep(seq, text, ranks, channel);
      run(i, o, s);
    };
  }
  const std::string op = CollectiveName(fp.text.substr(0, fp.text.find(',')), seq, p.ranks());
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->Policy(CollectiveStream(PlacementDevice(p)),
              std::make_unique<CollectivePolicy>(op, coll::CollectiveId{seq, p.ranks(), fp.text},
                                                 std::move(in), std::move(out), std::move(run)));
  });
}

std::vector<char> GatherSlots(const char* op, std::vector<char> mine) {
  const int world = coll::WorldSize();
  const int64_t slot = static_cast<int64_t>(mine.size());
  auto all = std::make_shared<std::vector<char>>(static_cast<size_t>(world * slot), 0);
  std::vector<int> ranks(world);
  std::iota(ranks.begin(), ranks.end(), 0);
  const int64_t seq = NextSeq(ranks);
  vm::InstrRef ref;
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    ref = b->Policy(
        CollectiveStream(),
        std::make_unique<CollectivePolicy>(
            CollectiveName(std::string(op) + ": shape exchange", seq, ranks),
            coll::CollectiveId{seq, ranks, std::string(op) + " shape exchange"},
            std::vector<vm::BlobArg>{}, std::vector<vm::BlobArg>{},
            [all, mine = std::move(mine), ranks, slot, seq,
             text = std::string(op) + " shape exchange"](const auto&, const auto&, NativeStream) {
              if (CheckCollectives()) CheckInStep(seq, text, ranks, /*channel=*/0);
              coll::AllGatherV(mine.data(), slot, all->data(),
                               std::vector<int64_t>(ranks.size(), slot), DType::kUInt8, ranks);
            }));
  });
  auto& vm = vm::VirtualMachine::Get();
  vm.Wait(ref.get(), op);
  vm.ThrowIfFailed(ref.get());
  return *all;
}

}  // namespace ofl::functional
