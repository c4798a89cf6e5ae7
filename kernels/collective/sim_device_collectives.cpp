// sim placements: global tensors' collectives over the simulated accelerator's memory, moved with
// MPI (collectives.h) through host staging buffers. Each call runs on the worker of the sim
// device's collective stream (the VM thread that runs the instruction), which never touches sim
// memory itself, as no host thread may touch a GPU's: it goes through the sim backend's own entry
// points (oneflow_lite/extension.h), as a copy kernel would:
//   1. copy_async(kDeviceToHost) of the inputs into host buffers on the collective stream (the VM
//      made that stream wait for the inputs' producers), then an event recorded behind the copies
//      and waited for on the host;
//   2. an agreement between the ranks (one int each, on the device's own MPI channel) that every
//      rank staged its inputs: a rank whose copy failed (an asynchronous error of its device,
//      reported by the wait) must not leave the others waiting inside MPI, so every rank throws;
//   3. the MPI collective over the host buffers, on the device's channel (its own communicators:
//      the CPU's collective stream may run another collective over the same ranks meanwhile);
//   4. copy_async(kHostToDevice) of the result into the outputs, waited for the same way before the
//      host buffers are freed.
// Each rank uses the sim device of its node-local rank, as cuda placements use GPUs.
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/collective/collectives.h"
#include "kernels/collective/device_collectives.h"
#include "kernels/collective/rank_list.h"
#include "kernels/device_backend.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective {
namespace {

std::string Where(const char* op, const std::vector<int>& ranks, const Device& device) {
  return std::string(op) + " over ranks " + Join(ranks) + " on " + device.str();
}

// This process's index in `ranks`; InvalidArgument naming the call when it is not a member (the
// callers never ask that of a non-member).
int IndexOf(const char* op, const std::vector<int>& ranks, const Device& device) {
  const int me = WorldRank();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == me) return static_cast<int>(i);
  }
  throw InvalidArgument(Where(op, ranks, device) + ": this process (rank " + std::to_string(me) +
                        ") is not in the placement");
}

// Bytes of `count` elements of `dtype`; InvalidArgument naming the call for a negative count
// (every rank passes the same counts, so every rank throws).
size_t Bytes(const char* op, const std::vector<int>& ranks, const Device& device, const char* what,
             int64_t count, DType dtype) {
  if (count < 0) {
    throw InvalidArgument(Where(op, ranks, device) + ": " + what + " " + std::to_string(count) +
                          " is negative");
  }
  return static_cast<size_t>(count) * element_size(dtype);
}

int64_t Sum(const char* op, const std::vector<int>& ranks, const Device& device,
            const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) {
      throw InvalidArgument(Where(op, ranks, device) + ": counts[" + std::to_string(i) + "] " +
                            std::to_string(counts[i]) + " is negative");
    }
    total += counts[i];
  }
  return total;
}

// The host side of one collective: host buffers, and the copies between them and sim memory on
// the collective stream, each batch waited for with an event. Copies still in flight when it goes
// (a wait that threw because the device failed) keep their buffers: they are left allocated
// rather than freed under a copy the device may still run.
class Staging {
 public:
  Staging(const Device& device, NativeStream stream)
      : backend_(GetBackend(DeviceType::kSim)), index_(device.index()), stream_(stream) {}
  ~Staging() {
    if (event_ != nullptr) {
      try {
        backend_->destroy_event(index_, event_);
      } catch (...) {  // nothing more to do with it
      }
    }
    if (in_flight_) new std::vector<std::vector<char>>(std::move(buffers_));  // left allocated
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // A host buffer of `bytes`, valid while this lives.
  char* Buffer(size_t bytes) {
    buffers_.emplace_back(bytes);
    return buffers_.back().data();
  }
  void ToHost(void* host, const void* device, size_t bytes) {
    Copy(host, device, bytes, CopyKind::kDeviceToHost);
  }
  void ToDevice(void* device, const void* host, size_t bytes) {
    Copy(device, host, bytes, CopyKind::kHostToDevice);
  }
  // Returns once every copy enqueued so far is complete; throws the device's error, if any.
  void Wait() {
    if (!in_flight_) return;
    if (event_ == nullptr) event_ = backend_->create_event(index_);
    backend_->record_event(event_, stream_);
    backend_->synchronize_event(event_);
    in_flight_ = false;
  }

 private:
  void Copy(void* dst, const void* src, size_t bytes, CopyKind kind) {
    if (bytes == 0) return;
    in_flight_ = true;
    backend_->copy_async(dst, src, bytes, kind, stream_);
  }

  DeviceBackend* backend_;
  int index_;
  NativeStream stream_;
  NativeEvent event_ = nullptr;
  bool in_flight_ = false;
  std::vector<std::vector<char>> buffers_;
};

// Runs `stage` (the inputs' copies to the host, waited for), then tells the other ranks whether it
// worked, on the device's channel: every rank goes on to the MPI collective, or every rank throws
// (its own error on the rank that failed, a DeviceError naming that rank on the others).
template <class Stage>
void StageOnEveryRank(const char* op, const std::vector<int>& ranks, const Device& device,
                      Stage&& stage) {
  std::exception_ptr failed;
  try {
    stage();
  } catch (...) {
    failed = std::current_exception();
  }
  const std::vector<int> statuses = GatherStatus(failed ? 1 : 0, ranks, CollectiveChannel(device));
  if (failed) std::rethrow_exception(failed);
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i] != 0) {
      throw DeviceError(Where(op, ranks, device) + ": rank " + std::to_string(ranks[i]) +
                        " could not copy its input from sim memory to the host (its error names "
                        "the cause); no rank moved data");
    }
  }
}

// The host buffers of a collective with an input and a separate output: `send_bytes` from `send`
// staged on every rank (StageOnEveryRank), and `recv_bytes` for the result.
struct HostInOut {
  char* send;
  char* recv;
};
HostInOut StageInOut(const char* op, const std::vector<int>& ranks, const Device& device,
                     Staging& s, const void* send, size_t send_bytes, size_t recv_bytes) {
  HostInOut host{nullptr, nullptr};
  StageOnEveryRank(op, ranks, device, [&] {
    host.send = s.Buffer(send_bytes);
    host.recv = s.Buffer(recv_bytes);
    s.ToHost(host.send, send, send_bytes);
    s.Wait();
  });
  return host;
}

class SimCollectives final : public DeviceCollectives {
 public:
  const char* description() const override {
    return "sim placements move simulated-device memory with MPI through host staging buffers";
  }
  // The sim device of this rank's node-local index (OMPI_COMM_WORLD_LOCAL_RANK; the world rank
  // without it) modulo the sim devices, as cuda placements pick GPUs.
  Device LocalDevice() const override {
    static const Device device = NodeLocalDevice(DeviceType::kSim);
    return device;
  }
  // S(i) -> S(j) goes through broadcast; S -> P through the host (boxing.cpp).
  bool has_all_to_all() const override { return false; }
  bool host_accessible() const override { return false; }

  void AllGatherV(const void* send, int64_t send_count, void* recv,
                  const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                  const Device& device, NativeStream stream) const override {
    const char* op = "AllGatherV";
    const size_t send_bytes = Bytes(op, ranks, device, "send_count", send_count, dtype);
    const size_t recv_bytes =
        Bytes(op, ranks, device, "the sum of counts", Sum(op, ranks, device, counts), dtype);
    Staging s(device, stream);
    const HostInOut host = StageInOut(op, ranks, device, s, send, send_bytes, recv_bytes);
    collective::AllGatherV(host.send, send_count, host.recv, counts, dtype, ranks,
                           CollectiveChannel(device));
    s.ToDevice(recv, host.recv, recv_bytes);
    s.Wait();
  }

  void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                    const std::vector<int>& ranks, const Device& device,
                    NativeStream stream) const override {
    const char* op = "AllReduceSum";
    const size_t bytes = Bytes(op, ranks, device, "count", count, dtype);
    Staging s(device, stream);
    char* host = nullptr;
    StageOnEveryRank(op, ranks, device, [&] {
      host = s.Buffer(bytes);
      s.ToHost(host, send, bytes);
      s.Wait();
    });
    collective::AllReduceSum(host, host, count, dtype, ranks, CollectiveChannel(device));
    s.ToDevice(recv, host, bytes);
    s.Wait();
  }

  void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                        DType dtype, const std::vector<int>& ranks, const Device& device,
                        NativeStream stream) const override {
    const char* op = "ReduceScatterSum";
    const int me = IndexOf(op, ranks, device);
    if (counts.size() != ranks.size()) {
      throw InvalidArgument(Where(op, ranks, device) + ": counts has " +
                            std::to_string(counts.size()) + " entries for " +
                            std::to_string(ranks.size()) + " rank(s)");
    }
    const size_t send_bytes =
        Bytes(op, ranks, device, "the sum of counts", Sum(op, ranks, device, counts), dtype);
    const size_t recv_bytes = Bytes(op, ranks, device, "counts[me]", counts[me], dtype);
    Staging s(device, stream);
    const HostInOut host = StageInOut(op, ranks, device, s, send, send_bytes, recv_bytes);
    collective::ReduceScatterSum(host.send, host.recv, counts, dtype, ranks,
                                 CollectiveChannel(device));
    s.ToDevice(recv, host.recv, recv_bytes);
    s.Wait();
  }

  // The root stages `root_src`; every rank receives into a host buffer and copies it into `buf`,
  // except a root whose `buf` is `root_src` (it already holds the value).
  void Broadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                 const std::vector<int>& ranks, const Device& device,
                 NativeStream stream) const override {
    const char* op = "Broadcast";
    const size_t bytes = Bytes(op, ranks, device, "count", count, dtype);
    const bool is_root = IndexOf(op, ranks, device) == root_index;
    Staging s(device, stream);
    char* host = nullptr;
    StageOnEveryRank(op, ranks, device, [&] {
      host = s.Buffer(bytes);
      if (is_root) s.ToHost(host, root_src != nullptr ? root_src : buf, bytes);
      s.Wait();
    });
    collective::Broadcast(host, count, dtype, root_index, ranks, CollectiveChannel(device));
    if (!(is_root && (root_src == nullptr || root_src == buf))) s.ToDevice(buf, host, bytes);
    s.Wait();
  }
};

const SimCollectives kSimCollectives;
OFL_REGISTER_DEVICE_COLLECTIVES(DeviceType::kSim, 2, &kSimCollectives);

}  // namespace
}  // namespace ofl::kernels::collective
