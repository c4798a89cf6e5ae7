// Tests the VM's tracing: while it is on, every finished instruction leaves exactly one record with
// its id, policy, op, stream, blobs, predecessors (same-stream or cross-stream), ordered timestamps
// and the allocations it made (bytes, cache hit or miss); nothing is recorded while it is off.
// Raw-blob Functions run on CPU streams and the release tests stay on the CPU (they rely on every
// op of a CPU tensor running on one stream); the public ops of the other tests run on
// VmTestDevice().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/trace.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::ScopeGuard;
using testing::SubmitWithoutWaiting;
using testing::VmTestDevice;

// Turns tracing on for one test and throws away records left by earlier work.
class TraceRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    was_tracing_ = VirtualMachine::Get().tracing();  // OFL_TRACE_VM=1 turns it on for the process
    VirtualMachine::Get().Sync();
    VirtualMachine::Get().SetTracing(true);
    VirtualMachine::Get().TakeTrace();
  }
  void TearDown() override {
    VirtualMachine::Get().SetTracing(was_tracing_);
    VirtualMachine::Get().Sync();
    VirtualMachine::Get().TakeTrace();
  }

 private:
  bool was_tracing_ = false;
};

const TraceRecord* Find(const std::vector<TraceRecord>& trace, uint64_t id) {
  for (const TraceRecord& r : trace) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

bool Contains(const std::vector<uint64_t>& v, uint64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST_F(TraceRecordTest, EveryInstructionIsRecordedOnceWithOrderedTimesAndEarlierDeps) {
  VirtualMachine& vm = VirtualMachine::Get();
  BlobPtr a = MakeCpuBlob(64);
  BlobPtr c = MakeCpuBlob(128);
  InstrRef write_a, read_a_write_c, read_c_same_stream, overwrite_a;
  PhysicalRun([&](InstructionsBuilder* b) {
    write_a = b->Function(
        "write_a", {}, {a}, [] {}, CpuStream(StreamRole::kCompute));
    read_a_write_c = b->Function(
        "read_a_write_c", {a}, {c}, [] {}, CpuStream(StreamRole::kHost2Device));
  });
  PhysicalRun([&](InstructionsBuilder* b) {
    read_c_same_stream = b->Function(
        "read_c", {c}, {}, [] {}, CpuStream(StreamRole::kHost2Device));
    overwrite_a = b->Function(
        "overwrite_a", {}, {a}, [] {}, CpuStream(StreamRole::kCompute));
  });
  const Tensor x = tensor<float>({1, 2, 3}, Shape({3}), VmTestDevice());
  const Tensor y = x.repeat({2});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  vm.Sync();
  const std::vector<TraceRecord> trace = vm.TakeTrace();

  // Once each, in increasing id order, with ordered timestamps and deps on earlier ids.
  std::set<uint64_t> ids;
  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceRecord& r = trace[i];
    SCOPED_TRACE("#" + std::to_string(r.id) + " " + r.policy + " " + r.op + " on " + r.stream);
    EXPECT_TRUE(ids.insert(r.id).second) << "recorded twice";
    if (i > 0) EXPECT_GT(r.id, trace[i - 1].id);
    EXPECT_GT(r.issue_ns, 0);
    EXPECT_LE(r.issue_ns, r.ready_ns);
    EXPECT_LE(r.ready_ns, r.start_ns);
    EXPECT_LE(r.start_ns, r.end_ns);
    EXPECT_EQ(r.deps.size(), r.dep_cross_stream.size());
    EXPECT_TRUE(r.error.empty()) << r.error;
    for (size_t d = 0; d < r.deps.size(); ++d) {
      EXPECT_LT(r.deps[d], r.id);
      if (const TraceRecord* pred = Find(trace, r.deps[d])) {
        EXPECT_EQ(r.dep_cross_stream[d], pred->stream != r.stream) << "dep #" << r.deps[d];
        EXPECT_LE(pred->end_ns, r.start_ns)
            << "started before its predecessor #" << pred->id << " ended";
      }
    }
  }

  const TraceRecord* wa = Find(trace, write_a->id());
  const TraceRecord* rawc = Find(trace, read_a_write_c->id());
  const TraceRecord* rc = Find(trace, read_c_same_stream->id());
  const TraceRecord* oa = Find(trace, overwrite_a->id());
  ASSERT_TRUE(wa && rawc && rc && oa);
  EXPECT_EQ(wa->policy, "Function");
  EXPECT_EQ(wa->op, "write_a");
  EXPECT_EQ(wa->stream, CpuStream(StreamRole::kCompute)->name());
  EXPECT_EQ(rawc->stream, CpuStream(StreamRole::kHost2Device)->name());
  EXPECT_EQ(wa->writes, (std::vector<uint64_t>{a->id()}));
  EXPECT_EQ(rawc->reads, (std::vector<uint64_t>{a->id()}));
  EXPECT_EQ(rawc->writes, (std::vector<uint64_t>{c->id()}));

  // read-after-write across streams, read-after-write on one stream, write-after-read across.
  ASSERT_TRUE(Contains(rawc->deps, wa->id));
  EXPECT_TRUE(rawc->dep_cross_stream[static_cast<size_t>(
      std::find(rawc->deps.begin(), rawc->deps.end(), wa->id) - rawc->deps.begin())]);
  ASSERT_TRUE(Contains(rc->deps, rawc->id));
  EXPECT_FALSE(rc->dep_cross_stream[static_cast<size_t>(
      std::find(rc->deps.begin(), rc->deps.end(), rawc->id) - rc->deps.begin())]);
  EXPECT_TRUE(Contains(oa->deps, wa->id)) << "write-after-write";
  EXPECT_TRUE(Contains(oa->deps, rawc->id)) << "write-after-read";

  // Allocations: each Function's first write allocated its blob.
  ASSERT_EQ(wa->allocs.size(), 1u);
  EXPECT_EQ(wa->allocs[0].blob_id, a->id());
  EXPECT_EQ(wa->allocs[0].bytes, 64u);
  ASSERT_EQ(rawc->allocs.size(), 1u);
  EXPECT_EQ(rawc->allocs[0].bytes, 128u);
  EXPECT_TRUE(oa->allocs.empty()) << "the blob already had memory";

  // The functor ops: from_host, repeat, to_vector, and the sync's barriers.
  std::map<std::string, int> ops;
  for (const TraceRecord& r : trace) ++ops[r.op];
  EXPECT_GE(ops["from_host"], 1);
  EXPECT_GE(ops["repeat"], 1);
  EXPECT_GE(ops["to_vector"], 1);
  // One barrier per stream for the sync.
  EXPECT_EQ(ops["barrier"], static_cast<int>(vm.devices().streams().size()));
  for (const TraceRecord& r : trace) {
    if (r.op != "repeat") continue;
    ASSERT_EQ(r.allocs.size(), 1u);
    EXPECT_EQ(r.allocs[0].blob_id, y.impl()->blob()->id());
    EXPECT_EQ(r.allocs[0].bytes, 6 * sizeof(float));
    EXPECT_EQ(r.reads, (std::vector<uint64_t>{x.impl()->blob()->id()}));
    EXPECT_EQ(r.attrs, "repeats=[2]") << "an OpCall's attributes, by name";
  }
  for (const TraceRecord& r : trace) {
    if (r.policy != "OpCall") EXPECT_EQ(r.attrs, "") << r.op << " is no op call";
  }
}

TEST_F(TraceRecordTest, AllocationsRecordCacheMissThenCacheHit) {
  VirtualMachine& vm = VirtualMachine::Get();
  const Device device = VmTestDevice();
  empty_cache(device);
  // An odd large size that no cached block can serve after empty_cache.
  constexpr int64_t kNumel = (3 << 20) / 4 + 123;
  uint64_t first_blob = 0, second_blob = 0;
  {
    const Tensor first = empty(Shape({kNumel}), DType::kFloat32, device);
    first_blob = first.impl()->blob()->id();
    vm.Sync();
  }
  vm.Sync();  // the first block is back in the pool, cached
  {
    const Tensor second = empty(Shape({kNumel}), DType::kFloat32, device);
    second_blob = second.impl()->blob()->id();
    vm.Sync();
  }
  vm.Sync();
  const std::vector<TraceRecord> trace = vm.TakeTrace();
  const AllocRecord* first_alloc = nullptr;
  const AllocRecord* second_alloc = nullptr;
  for (const TraceRecord& r : trace) {
    for (const AllocRecord& a : r.allocs) {
      if (a.blob_id == first_blob) first_alloc = &a;
      if (a.blob_id == second_blob) second_alloc = &a;
    }
  }
  ASSERT_NE(first_alloc, nullptr);
  ASSERT_NE(second_alloc, nullptr);
  EXPECT_EQ(first_alloc->bytes, static_cast<size_t>(kNumel) * 4);
  EXPECT_EQ(second_alloc->bytes, static_cast<size_t>(kNumel) * 4);
  EXPECT_FALSE(first_alloc->cache_hit);
  EXPECT_TRUE(second_alloc->cache_hit);
  empty_cache(device);
}

TEST_F(TraceRecordTest, FailedInstructionRecordsItsError) {
  VirtualMachine& vm = VirtualMachine::Get();
  BlobPtr blob = MakeCpuBlob(8);
  InstrRef bad;
  try {
    PhysicalRun([&](InstructionsBuilder* b) {
      bad = b->Function(
          "traced_failure", {}, {blob}, [] { throw std::runtime_error("traced cause 17"); },
          CpuStream(StreamRole::kAux));
    });
  } catch (const std::exception&) {  // OFL_VM_SYNC=1: thrown at the call
  }
  try {
    vm.Sync();
  } catch (const std::exception&) {  // otherwise: thrown by the sync
  }
  const std::vector<TraceRecord> trace = vm.TakeTrace();
  const TraceRecord* r = Find(trace, bad->id());
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->error.find("traced_failure"), std::string::npos) << r->error;
  EXPECT_NE(r->error.find("traced cause 17"), std::string::npos) << r->error;
}

bool FoldingDisabledByEnv() {
  const char* v = std::getenv("OFL_VM_FOLD_RELEASE");
  return v != nullptr && std::string(v) == "0";
}

TEST_F(TraceRecordTest, ReleaseOfATensorUsedOnOneStreamIsFoldedIntoItsLastUser) {
  VirtualMachine& vm = VirtualMachine::Get();
  if (vm.sync_mode() || FoldingDisabledByEnv()) {
    GTEST_SKIP() << "releases are folded only in asynchronous mode with OFL_VM_FOLD_RELEASE on";
  }
  // Hold the compute stream so that every user of x is still queued when x dies.
  Latch gate;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    b->Function(
        "gate", {}, {}, [&gate] { gate.WaitFor(testing::kGenerousTimeout); },
        CpuStream(StreamRole::kCompute));
  });
  uint64_t x_blob = 0, y_blob = 0;
  Tensor y;
  {
    const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
    x_blob = x.impl()->blob()->id();
    y = x.repeat({2});
    y_blob = y.impl()->blob()->id();
  }
  gate.Open();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 1, 2}));
  vm.Sync();
  const std::vector<TraceRecord> trace = vm.TakeTrace();
  int folded = 0;
  for (const TraceRecord& r : trace) {
    EXPECT_FALSE(r.policy == "ReleaseTensor" && Contains(r.writes, x_blob))
        << "an instruction of its own released a blob used on one stream only";
    if (Contains(r.folded_releases, x_blob)) {
      ++folded;
      EXPECT_EQ(r.op, "repeat") << "folded into #" << r.id << ", not into x's last user";
      EXPECT_TRUE(Contains(r.writes, y_blob));
    }
  }
  EXPECT_EQ(folded, 1);
}

TEST_F(TraceRecordTest, ReleaseOfATensorUsedOnTwoStreamsIsAnInstructionAfterBoth) {
  VirtualMachine& vm = VirtualMachine::Get();
  if (vm.sync_mode()) {
    GTEST_SKIP() << "in OFL_VM_SYNC=1 mode every user of a tensor has finished when it dies";
  }
  // Hold both streams so that x's users on each are still queued when x dies.
  Latch gate;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    for (StreamRole role : {StreamRole::kCompute, StreamRole::kAux}) {
      b->Function(
          "gate", {}, {}, [&gate] { gate.WaitFor(testing::kGenerousTimeout); }, CpuStream(role));
    }
  });
  uint64_t x_blob = 0;
  InstrRef reader;
  {
    const Tensor x = tensor<float>({1, 2}, Shape({2}), Device("cpu"));
    x_blob = x.impl()->blob()->id();
    PhysicalRun([&](InstructionsBuilder* b) {
      reader = b->Function(
          "aux_reader", {x.impl()->blob()}, {}, [] {}, CpuStream(StreamRole::kAux));
    });
  }
  gate.Open();
  vm.Sync();
  const std::vector<TraceRecord> trace = vm.TakeTrace();
  const TraceRecord* release = nullptr;
  for (const TraceRecord& r : trace) {
    if (r.policy == "ReleaseTensor" && Contains(r.writes, x_blob)) {
      EXPECT_EQ(release, nullptr) << "released twice";
      release = &r;
    }
  }
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(release->op, "release_tensor");
  EXPECT_EQ(release->stream, CpuStream(StreamRole::kCompute)->name()) << "not on the producer";
  ASSERT_TRUE(Contains(release->deps, reader->id()));
  const TraceRecord* r = Find(trace, reader->id());
  ASSERT_NE(r, nullptr);
  EXPECT_LE(r->end_ns, release->start_ns);
}

TEST(TraceOffTest, NothingIsRecordedWhileTracingIsOff) {
  VirtualMachine& vm = VirtualMachine::Get();
  const bool was_tracing = vm.tracing();
  ScopeGuard restore([&vm, was_tracing] { vm.SetTracing(was_tracing); });
  vm.SetTracing(false);
  vm.Sync();
  vm.TakeTrace();
  const Tensor y = tensor<float>({1, 2}, Shape({2}), VmTestDevice()).repeat({3});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  vm.Sync();
  EXPECT_TRUE(vm.TakeTrace().empty());
}

}  // namespace
}  // namespace ofl::vm
