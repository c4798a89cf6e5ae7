// ofl::from_blob and Tensor::data_ptr on the CPU (whatever OFL_TEST_DEVICE says: the caller's
// memory is host memory; the sim is only checked to refuse both): values read through every kind
// of view (contiguous, strided, stride 0, storage offset, no element), in-place writes landing in
// the caller's memory, ops and autograd on such tensors, on_release called exactly once and only
// after the last tensor died and the work using the memory completed, the pools left alone, every
// argument error, and data_ptr waiting for pending writes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/memory.h"
#include "tests/functional/functional_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {
namespace {

const Device kCpu("cpu");

// Counts the calls of the on_release it makes, and whether that function object still exists
// (released or destroyed uncalled).
struct ReleaseProbe {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  std::function<void()> Make() const {
    return [calls = calls] { calls->fetch_add(1); };
  }
  int count() const { return calls->load(); }
  bool function_gone() const { return calls.use_count() == 1; }
};

std::vector<float> Iota(size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Blocks a CPU worker with a read of t's storage until Open() (or 20 s): work behind it on the
// stream waits, and so does the storage's release. Submitted without the OFL_VM_SYNC=1 wait.
class BlockedReader {
 public:
  explicit BlockedReader(const Tensor& t) {
    auto opened = opened_.get_future().share();
    auto started = started_;
    auto finished = finished_;
    vm::InstructionsBuilder b;
    b.AccessBlobByCallback(
        "blocked_reader", t.impl()->arg(),
        [opened, started, finished](const kernels::TensorArg&) {
          started->store(true);
          opened.wait_for(std::chrono::seconds(20));
          finished->store(true);
        },
        vm::AccessModifier::kConst);
    vm::VirtualMachine::Get().Submit(b.instructions());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!started_->load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    EXPECT_TRUE(started_->load()) << "the blocking read never started";
  }
  ~BlockedReader() { Open(); }
  void Open() {
    if (!open_) opened_.set_value();
    open_ = true;
  }
  const std::shared_ptr<std::atomic<bool>>& finished() const { return finished_; }

 private:
  std::promise<void> opened_;
  bool open_ = false;
  std::shared_ptr<std::atomic<bool>> started_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<bool>> finished_ = std::make_shared<std::atomic<bool>>(false);
};

TEST(FromBlobTest, ContiguousViewReadsTheCallersMemoryWithoutACopy) {
  std::vector<float> buf = Iota(6, 1);
  ReleaseProbe probe;
  {
    const Tensor x =
        from_blob(buf.data(), Shape({2, 3}), {3, 1}, 0, DType::kFloat32, kCpu, probe.Make());
    EXPECT_EQ(x.shape(), Shape({2, 3}));
    EXPECT_EQ(x.stride(), (Dims{3, 1}));
    EXPECT_EQ(x.storage_offset(), 0);
    EXPECT_EQ(x.dtype(), DType::kFloat32);
    EXPECT_EQ(x.device(), kCpu);
    EXPECT_TRUE(x.is_contiguous());
    EXPECT_EQ(x.data_ptr(), buf.data());
    EXPECT_EQ(x.to_vector<float>(), buf);
    buf[4] = 50;  // no copy: the tensor sees the change
    EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 50, 6}));
    EXPECT_EQ(probe.count(), 0);
  }
  sync();
  EXPECT_EQ(probe.count(), 1);
  EXPECT_TRUE(probe.function_gone());
}

TEST(FromBlobTest, StridedStrideZeroAndOffsetViews) {
  const std::vector<int32_t> buf = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  void* data = const_cast<int32_t*>(buf.data());
  // Transposed: a 3x4 buffer read as 4x3.
  const Tensor t = from_blob(data, Shape({4, 3}), {1, 4}, 0, DType::kInt32, kCpu, nullptr);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // Every second element of rows 1 and 2, from an offset.
  const Tensor s = from_blob(data, Shape({2, 2}), {4, 2}, 5, DType::kInt32, kCpu, nullptr);
  EXPECT_EQ(s.storage_offset(), 5);
  EXPECT_EQ(s.to_vector<int32_t>(), (std::vector<int32_t>{5, 7, 9, 11}));
  // Stride 0: one row seen three times; and a 0-dim tensor at an offset.
  const Tensor b = from_blob(data, Shape({3, 2}), {0, 1}, 2, DType::kInt32, kCpu, nullptr);
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 2, 3, 2, 3}));
  const Tensor all_zero = from_blob(data, Shape({2, 3}), {0, 0}, 11, DType::kInt32, kCpu, nullptr);
  EXPECT_EQ(all_zero.to_vector<int32_t>(), (std::vector<int32_t>(6, 11)));
  const Tensor scalar = from_blob(data, Shape({}), {}, 7, DType::kInt32, kCpu, nullptr);
  EXPECT_EQ(scalar.to_vector<int32_t>(), (std::vector<int32_t>{7}));
  EXPECT_EQ(scalar.data_ptr(), buf.data() + 7);
}

TEST(FromBlobTest, ViewsWithNoElementAllowNullDataAndStillRelease) {
  ReleaseProbe null_probe, data_probe;
  float one = 1;
  {
    const Tensor e =
        from_blob(nullptr, Shape({0, 3}), {3, 1}, 0, DType::kFloat32, kCpu, null_probe.Make());
    EXPECT_EQ(e.numel(), 0);
    EXPECT_TRUE(e.to_vector<float>().empty());
    EXPECT_EQ(e.data_ptr(), nullptr);
    EXPECT_EQ(e.expand({2, 0, 3}).numel(), 0);
    const Tensor f =
        from_blob(&one, Shape({2, 0}), {0, 1}, 4, DType::kFloat32, kCpu, data_probe.Make());
    EXPECT_TRUE(f.contiguous().to_vector<float>().empty());
  }
  sync();
  EXPECT_EQ(null_probe.count(), 1);
  EXPECT_EQ(data_probe.count(), 1);
}

TEST(FromBlobTest, InPlaceOpsWriteTheCallersMemory) {
  std::vector<float> buf = Iota(6, 1);
  Tensor x = from_blob(buf.data(), Shape({2, 3}), {3, 1}, 0, DType::kFloat32, kCpu, nullptr);
  x.add_(ofl::ones(Shape({3}), DType::kFloat32, kCpu));  // broadcast over the rows
  x.mul_(2);
  x.data_ptr();  // waits for the writes
  EXPECT_EQ(buf, (std::vector<float>{4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(x.version(), 2);
  x.copy_(ofl::tensor<float>({7, 8, 9}, Shape({3})));
  sync();
  EXPECT_EQ(buf, (std::vector<float>{7, 8, 9, 7, 8, 9}));
  // Through a strided view of the caller's memory: only its elements change.
  std::vector<float> big(12, 0);
  Tensor cols = from_blob(big.data(), Shape({3, 2}), {4, 2}, 1, DType::kFloat32, kCpu, nullptr);
  cols.fill_(5);
  sync();
  EXPECT_EQ(big, (std::vector<float>{0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5}));
  if (!EnvSet("OFL_DISABLE_VIEW")) {  // (which makes narrow a copy)
    cols.narrow(0, 1, 1).zero_();
    sync();
    EXPECT_EQ(big, (std::vector<float>{0, 5, 0, 5, 0, 0, 0, 0, 0, 5, 0, 5}));
  }
}

TEST(FromBlobTest, OpsAndAutogradConsumeIt) {
  std::vector<float> buf = {1, 2, 3};
  const Tensor x = from_blob(buf.data(), Shape({3, 1}), {1, 1}, 0, DType::kFloat32, kCpu, nullptr);
  const Tensor e = x.expand({3, 2});
  EXPECT_EQ(e.contiguous().to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(ofl::add(x, x).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ((e + 1.0).to_vector<float>(), (std::vector<float>{2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(x.repeat({1, 2}).sum().to_vector<float>(), (std::vector<float>{12}));
  EXPECT_EQ(x.to(kCpu).data_ptr(), buf.data());  // already there: the same tensor
  // An autograd leaf.
  Tensor leaf = from_blob(buf.data(), Shape({3}), {1}, 0, DType::kFloat32, kCpu, nullptr);
  leaf.requires_grad_();
  EXPECT_TRUE(leaf.is_leaf());
  (leaf * leaf).sum().backward();
  EXPECT_EQ(leaf.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(buf, (std::vector<float>{1, 2, 3}));  // read, never written
}

TEST(FromBlobTest, ReleasedOnceAfterTheLastViewDies) {
  std::vector<float> buf = Iota(8);
  ReleaseProbe probe;
  Tensor x = from_blob(buf.data(), Shape({8}), {1}, 0, DType::kFloat32, kCpu, probe.Make());
  Tensor detached = x.detach();  // shares the storage
  Tensor view;
  if (!EnvSet("OFL_DISABLE_VIEW")) view = x.narrow(0, 2, 3);
  const Tensor sum = ofl::add(x, x);  // its own storage
  x = Tensor();
  sync();
  EXPECT_EQ(probe.count(), 0) << "released while a tensor still viewed the storage";
  detached = Tensor();
  sync();
  if (view.defined()) {
    EXPECT_EQ(probe.count(), 0);
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 3, 4}));
    view = Tensor();
    sync();
  }
  EXPECT_EQ(probe.count(), 1);
  EXPECT_TRUE(probe.function_gone());
  EXPECT_EQ(sum.to_vector<float>()[7], 14);
}

TEST(FromBlobTest, ReleasedOnlyAfterPendingWorkCompleted) {
  std::vector<float> buf = Iota(4);
  auto reader_done_at_release = std::make_shared<std::atomic<int>>(-1);
  std::shared_ptr<std::atomic<bool>> finished;
  ReleaseProbe probe;
  const bool queue_ops = !vm::VirtualMachine::Get().sync_mode();
  {
    Tensor x = from_blob(buf.data(), Shape({4}), {1}, 0, DType::kFloat32, kCpu,
                         [calls = probe.calls, reader_done_at_release, &finished] {
                           reader_done_at_release->store(finished->load() ? 1 : 0);
                           calls->fetch_add(1);
                         });
    BlockedReader reader(x);
    finished = reader.finished();
    // Queued behind the read on the CPU stream (OFL_VM_SYNC=1 would wait for them: the read alone
    // is pending there).
    if (queue_ops) {
      Tensor y = x * 2.0;
      x.add_(y);  // a pending write of the caller's memory
    }
    x = Tensor();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(probe.count(), 0) << "released while instructions using the memory were pending";
    reader.Open();
  }
  sync();
  EXPECT_EQ(probe.count(), 1);
  EXPECT_EQ(reader_done_at_release->load(), 1) << "released before the pending read finished";
  if (queue_ops) EXPECT_EQ(buf, (std::vector<float>{0, 3, 6, 9}));  // the write landed first
}

TEST(FromBlobTest, LeavesThePoolsAlone) {
  std::vector<double> buf(1024, 1.5);
  sync();
  const MemoryStats before = memory_stats(kCpu);
  ReleaseProbe probe;
  {
    const Tensor x =
        from_blob(buf.data(), Shape({1024}), {1}, 0, DType::kFloat64, kCpu, probe.Make());
    EXPECT_EQ(memory_stats(kCpu).allocated_bytes, before.allocated_bytes);
    const auto address = reinterpret_cast<uint64_t>(buf.data());
    for (const MemorySegment& seg : memory_snapshot(kCpu).segments) {
      EXPECT_FALSE(address >= seg.address && address < seg.address + seg.size)
          << "the caller's memory shows in the pool's snapshot";
    }
    x.data_ptr();
  }
  sync();
  const MemoryStats after = memory_stats(kCpu);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.pending_free_bytes, before.pending_free_bytes);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(probe.count(), 1);
}

TEST(FromBlobTest, EveryArgumentErrorNamesItsValuesAndNeverReleases) {
  float buf[8] = {};
  ReleaseProbe probe;
  auto call = [&](void* data, const Shape& shape, const std::vector<int64_t>& strides,
                  int64_t offset, DType dtype, const Device& device) {
    return [=, &probe] { from_blob(data, shape, strides, offset, dtype, device, probe.Make()); };
  };
  const DType f32 = DType::kFloat32;
  ExpectThrowWith<InvalidArgument>(
      call(buf, Shape({2, 3}), {1}, 0, f32, kCpu),
      {"from_blob", "strides (1)", "1 values", "shape (2,3)", "2 dims"});
  ExpectThrowWith<InvalidArgument>(call(buf, Shape({2, 3}), {3, -1}, 0, f32, kCpu),
                                   {"from_blob", "strides (3,-1)", "negative stride -1", "dim 1"});
  ExpectThrowWith<InvalidArgument>(call(buf, Shape({2, -3}), {3, 1}, 0, f32, kCpu),
                                   {"from_blob", "shape (2,-3)", "negative size -3", "dim 1"});
  ExpectThrowWith<InvalidArgument>(call(buf, Shape({2}), {1}, -1, f32, kCpu),
                                   {"from_blob", "storage_offset", ">= 0", "-1"});
  ExpectThrowWith<InvalidArgument>(call(nullptr, Shape({2, 3}), {3, 1}, 0, f32, kCpu),
                                   {"from_blob", "data is null", "shape (2,3)", "24 bytes"});
  ExpectThrowWith<InvalidArgument>(call(nullptr, Shape({2}), {0}, 3, f32, kCpu),
                                   {"from_blob", "data is null", "storage_offset 3", "16 bytes"});
  ExpectThrowWith<InvalidArgument>(call(buf, Shape({2}), {1}, 0, static_cast<DType>(99), kCpu),
                                   {"from_blob", "dtype value 99"});
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  ExpectThrowWith<InvalidArgument>(
      call(buf, Shape({3}), {huge}, 0, f32, kCpu),
      {"from_blob", "strides (" + std::to_string(huge) + ")", "more bytes than int64"});
  ExpectThrowWith<InvalidArgument>(call(buf, Shape({2}), {1}, 0, f32, Device("sim:0")),
                                   {"from_blob", "sim:0", "not supported", "not CUDA"});
  sync();
  EXPECT_EQ(probe.count(), 0);
  EXPECT_TRUE(probe.function_gone()) << "a refused call kept its on_release";
  ExpectRuntimeWorks();
}

TEST(FromBlobTest, OnReleaseThatThrowsIsContained) {
  float v = 3;
  {
    const Tensor x = from_blob(&v, Shape({1}), {1}, 0, DType::kFloat32, kCpu,
                               [] { throw std::runtime_error("owner failed"); });
    EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3}));
  }
  EXPECT_NO_THROW(sync());
  ExpectRuntimeWorks();
}

TEST(FromBlobDataPtrTest, WaitsForAPendingWrite) {
  const Tensor x = ofl::zeros(Shape({1024}), DType::kFloat32, kCpu);
  const float* p = static_cast<const float*>(x.data_ptr());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[0], 0);
  {
    BlockedReader reader(x);  // the fill below queues behind it
    // Opened from another thread: under OFL_VM_SYNC=1 the fill itself waits for it.
    std::thread opener([&reader] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      reader.Open();
    });
    Tensor w = x;
    w.fill_(3);
    EXPECT_EQ(x.data_ptr(), p);
    EXPECT_EQ(p[0], 3);
    EXPECT_EQ(p[1023], 3);
    opener.join();
  }
  // A pending write into the caller's memory, then data_ptr of a view of it.
  std::vector<float> buf(16, 0);
  Tensor y = from_blob(buf.data(), Shape({16}), {1}, 0, DType::kFloat32, kCpu, nullptr);
  {
    const Tensor two = ofl::full(Shape({16}), 2, DType::kFloat32, kCpu);
    BlockedReader reader(y);
    std::thread opener([&reader] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      reader.Open();
    });
    y.add_(two);
    EXPECT_EQ(y.data_ptr(), buf.data());
    EXPECT_EQ(buf[15], 2);
    opener.join();
  }
}

TEST(FromBlobDataPtrTest, PointsAtTheViewsStorageOffset) {
  std::vector<int64_t> buf(20);
  std::iota(buf.begin(), buf.end(), 0);
  const Tensor x = from_blob(buf.data(), Shape({4, 3}), {3, 1}, 2, DType::kInt64, kCpu, nullptr);
  EXPECT_EQ(x.data_ptr(), buf.data() + 2);
  const Tensor t = ofl::tensor<double>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), kCpu);
  auto* base = static_cast<double*>(t.data_ptr());
  EXPECT_EQ(base[4], 5);
  if (EnvSet("OFL_DISABLE_VIEW")) return;  // (which makes views copies)
  const Tensor row = x.narrow(0, 1, 2);
  EXPECT_EQ(row.storage_offset(), 5);
  EXPECT_EQ(row.data_ptr(), buf.data() + 5);
  EXPECT_EQ(*static_cast<int64_t*>(x.permute({1, 0}).narrow(0, 2, 1).data_ptr()), 4);
  const Tensor col = t.narrow(1, 1, 2);
  EXPECT_EQ(col.data_ptr(), base + 1);
}

TEST(FromBlobDataPtrTest, RethrowsTheProducersError) {
  const Tensor x = ofl::zeros(Shape({4}), DType::kFloat32, kCpu);
  sync();
  vm::InstructionsBuilder b;
  b.AccessBlobByCallback(
      "failing_writer", x.impl()->arg(),
      [](const kernels::TensorArg&) { throw std::runtime_error("writer broke"); },
      vm::AccessModifier::kMut);
  vm::VirtualMachine::Get().Submit(b.instructions());
  ExpectThrowWith<Error>([&] { x.data_ptr(); }, {"failing_writer", "writer broke"});
  EXPECT_NO_THROW(sync()) << "data_ptr reported the error: sync must not report it again";
  ExpectRuntimeWorks();
}

TEST(FromBlobDataPtrTest, RefusesUndefinedGlobalAndSimTensors) {
  ExpectThrowWith<InvalidArgument>([] { Tensor().data_ptr(); }, {"data_ptr", "undefined"});
  const Tensor s = ofl::tensor<float>({1, 2}, Shape({2}), Device("sim:0"));
  ExpectThrowWith<InvalidArgument>([&] { s.data_ptr(); }, {"data_ptr", "sim:0", "not supported"});
  // A global tensor, made as the global functors make one (this suite has no ranks to spread it
  // over).
  const Tensor local = ofl::tensor<float>({1, 2}, Shape({2}), kCpu);
  const TensorImpl& li = *local.impl();
  auto gi = std::make_shared<TensorImpl>(li.shape(), li.stride(), li.offset(), li.storage());
  gi->set_global(std::make_shared<GlobalMeta>(
      GlobalMeta{Placement("cpu", {0}), Sbp::broadcast(), li.shape()}));
  const Tensor g(gi);
  ExpectThrowWith<InvalidArgument>([&] { g.data_ptr(); },
                                   {"data_ptr: the tensor is global; call to_local() first"});
  sync();
}

}  // namespace
}  // namespace ofl::testing
