// Which stream a read back to the host goes on, on the simulated accelerator, checked with streams
// held shut: a small read of an output its compute stream has not finished follows the writer on
// that stream (no cross-stream wait, as PyTorch's item() does); a large read, or one of a tensor
// whose writer finished, goes on the d2h stream, beside whatever the compute stream is doing.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "functional_test_util.h"
#include "sim_gate.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {
namespace {

#define SKIP_IN_SYNC_MODE() \
  if (EnvSet("OFL_VM_SYNC")) GTEST_SKIP() << "OFL_VM_SYNC=1 waits for every op to complete"

constexpr auto kPatience = std::chrono::seconds(20);

TEST(DeviceReadStreamTest, ASmallReadOfAnUnfinishedOutputFollowsItsWriterOnTheComputeStream) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:0");
  const Tensor x = tensor<float>({1.f, 2.f, 3.f}, Shape({3}), dev);
  sync();
  SimStreamGate compute(dev);
  const Tensor y = x + 1.0;  // held behind the compute gate: unfinished
  compute.WaitUntilLaunched();
  SimStreamGate d2h(dev, vm::StreamRole::kDevice2Host);
  // Everything issued so far waits behind the compute gate, so the count only grows until the
  // gate opens: it grows by one when the read was issued (while y is certainly unfinished).
  vm::VirtualMachine& vm = vm::VirtualMachine::Get();
  const int64_t before = vm.in_flight();
  auto read = std::async(std::launch::async, [&] { return y.to_vector<float>(); });
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  while (vm.in_flight() == before && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  compute.Open();
  // The d2h stream stays shut: the read can only finish if it went on the compute stream.
  const bool finished = read.wait_for(kPatience) == std::future_status::ready;
  d2h.Open();
  EXPECT_TRUE(finished) << "the read of y waited for the d2h stream";
  EXPECT_EQ(read.get(), (std::vector<float>{2.f, 3.f, 4.f}));
}

TEST(DeviceReadStreamTest, AReadOfAFinishedTensorGoesOnTheD2hStreamBesideBusyCompute) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:0");
  const Tensor x = tensor<float>({1.f, 2.f, 3.f}, Shape({3}), dev);
  const Tensor y = x * 2.0;
  sync();
  SimStreamGate compute(dev);
  const Tensor busy = x + 5.0;  // the compute stream is held with other work
  compute.WaitUntilLaunched();
  auto read = std::async(std::launch::async, [&] { return y.to_vector<float>(); });
  const bool finished = read.wait_for(kPatience) == std::future_status::ready;
  compute.Open();
  EXPECT_TRUE(finished) << "the read of a finished tensor waited behind the compute stream";
  EXPECT_EQ(read.get(), (std::vector<float>{2.f, 4.f, 6.f}));
  EXPECT_EQ(busy.to_vector<float>(), (std::vector<float>{6.f, 7.f, 8.f}));
}

TEST(DeviceReadStreamTest, ALargeReadOfAnUnfinishedOutputGoesOnTheD2hStream) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:0");
  const int64_t n = 20000;  // 80 KB: past the 64 KiB a read may add to the compute stream
  const Tensor x = ofl::ones(Shape({n}), DType::kFloat32, dev);
  sync();
  SimStreamGate d2h(dev, vm::StreamRole::kDevice2Host);
  const Tensor y = x + 1.0;
  auto read = std::async(std::launch::async, [&] { return y.to_vector<float>(); });
  // Held by the d2h gate, however long the compute stream has been done.
  const bool held = read.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout;
  d2h.Open();
  EXPECT_TRUE(held) << "a large read went on the compute stream";
  EXPECT_EQ(read.get(), std::vector<float>(n, 2.f));
}

}  // namespace
}  // namespace ofl::testing
