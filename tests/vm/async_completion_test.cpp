// How the VM observes completions on an asynchronous device (vm/THREADING.md, "Launched and
// complete"): a thread waiting for one instruction blocks in the backend's own wait for that
// instruction's event (synchronize_event), and each stream's completion thread blocks there for the
// oldest pending one; neither polls with sleeps that outlast the completion. The device here is a
// test backend whose events complete only when the test opens a gate, and which records the
// threads blocked in synchronize_event, so the tests see who waits where without timing anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/functional/host_memory_backend.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {
namespace {

// Host memory, work done at the launch, but every event recorded while the gate is shut completes
// only once it opens (query_event says false until then; synchronize_event blocks until then).
class GatedEventBackend final : public HostMemoryBackend {
 public:
  bool host_accessible() const override { return true; }
  void record_event(NativeEvent, NativeStream) override {}
  bool query_event(NativeEvent) override {
    std::lock_guard<std::mutex> lock(mu_);
    return open_;
  }
  void synchronize_event(NativeEvent) override {
    std::unique_lock<std::mutex> lock(mu_);
    blocked_.insert(std::this_thread::get_id());
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    blocked_.erase(blocked_.find(std::this_thread::get_id()));
  }

  void Shut() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits (up to a generous deadline: a failure, not a timing) until `reader` and at least one
  // other thread are blocked in synchronize_event.
  bool WaitUntilBlocked(std::thread::id reader) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      return blocked_.count(reader) > 0 && blocked_.size() > blocked_.count(reader);
    });
  }
  size_t Blocked() {
    std::lock_guard<std::mutex> lock(mu_);
    return blocked_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::multiset<std::thread::id> blocked_;
};

// "fill" for contiguous float32 outputs (all this test makes), done at the launch.
void FillFloat(const KernelContext& ctx) {
  const double value = ctx.attributes.get_scalar("value").to_double();
  const TensorArg& out = ctx.outputs[0];
  std::fill_n(static_cast<float*>(out.data), out.shape.numel(), static_cast<float>(value));
}

GatedEventBackend& Backend() {
  static const std::shared_ptr<GatedEventBackend> backend = [] {
    auto b = std::make_shared<GatedEventBackend>();
    register_device_backend("gatedev", b);
    register_kernel("fill", "gatedev", &FillFloat);
    return b;
  }();
  return *backend;
}

TEST(AsyncCompletionTest, AReadOfUnfinishedWorkBlocksInTheBackendsWaitAsDoesTheCompletionThread) {
  if (vm::VirtualMachine::Get().sync_mode()) {
    GTEST_SKIP() << "OFL_VM_SYNC=1: the issuing call itself waits for the gated work";
  }
  GatedEventBackend& backend = Backend();
  const Device dev("gatedev:0");
  backend.Shut();
  const Tensor x = ofl::full(Shape({4}), 2.5, DType::kFloat32, dev);
  std::promise<std::thread::id> reader_id;
  std::vector<float> read;
  std::thread reader([&] {
    reader_id.set_value(std::this_thread::get_id());
    read = x.to_vector<float>();
  });
  const std::thread::id id = reader_id.get_future().get();
  // Polling would show as no thread there: the read would wake from its sleeps to query instead.
  const bool blocked = backend.WaitUntilBlocked(id);
  backend.Open();
  reader.join();
  EXPECT_TRUE(blocked) << "the reader and a completion thread were not both waiting in "
                          "synchronize_event for the gated work";
  EXPECT_EQ(read, (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
  ofl::sync();
}

TEST(AsyncCompletionTest, LaunchedWorkIsFinishedWithNobodyWaitingForIt) {
  if (vm::VirtualMachine::Get().sync_mode()) {
    GTEST_SKIP() << "OFL_VM_SYNC=1: the issuing call itself waits for the gated work";
  }
  GatedEventBackend& backend = Backend();
  const Device dev("gatedev:0");
  ofl::sync();
  backend.Shut();
  {
    // A tensor that dies at once: its block returns to the pool when its fill completes.
    const Tensor dead = ofl::full(Shape({64}), 1.0, DType::kFloat32, dev);
  }
  // The completion thread waits on the device for the pending fill, with no reader anywhere.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (backend.Blocked() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(backend.Blocked(), 1u) << "no completion thread waited on the device";
  backend.Open();
  ofl::sync();
}

}  // namespace
}  // namespace ofl::testing
