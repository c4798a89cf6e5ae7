// The collective protocol of global tensors (global_protocol.h): sequence numbers, fingerprints,
// and issuing a collective as a VM instruction (whose agreement checks them: collective_policy.h).
#include "oneflow_lite/functional/global_protocol.h"

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

// The number of the next collective over `ranks`. Counted per rank list: every member of a list
// issues the same collectives over it in the same order, while ranks outside it issue none.
int64_t NextSeq(const std::vector<int>& ranks) {
  static std::mutex mu;
  static std::map<std::vector<int>, int64_t> next;
  std::lock_guard<std::mutex> lock(mu);
  return next[ranks]++;
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
            [all, mine = std::move(mine), ranks, slot](const auto&, const auto&, NativeStream) {
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
