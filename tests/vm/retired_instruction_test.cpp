// A finished instruction is dropped from the dependences of the blobs it used once the VM retires
// it, so a live tensor does not keep its producer's instruction (a few hundred bytes) alive. While
// tracing, it stays, so that the trace shows the edges to it.
#include <vector>

#include "tests/vm/vm_test_util.h"

namespace ofl::vm {
namespace {

using testing::MakeCpuBlob;
using testing::SubmitWithoutWaiting;

// Writes `out`, then reads it; returns the writer and the reader.
std::pair<InstrRef, InstrRef> WriteThenRead(const BlobPtr& out) {
  InstrRef writer, reader;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    writer = b->Function(
        "retired_test_write", {}, {out}, [] {}, out->producer_stream());
    reader = b->Function(
        "retired_test_read", {out}, {}, [] {}, out->producer_stream());
  });
  VirtualMachine::Get().Wait(reader.get());
  return {writer, reader};
}

bool IsReader(const BlobPtr& blob, const InstrRef& instr) {
  for (const InstrRef& r : blob->dependence().readers) {
    if (r.get() == instr.get()) return true;
  }
  return false;
}

TEST(RetiredInstructionTest, ALiveBlobLetsGoOfItsFinishedWriterAndReaders) {
  BlobPtr out = MakeCpuBlob(48);
  auto [writer, reader] = WriteThenRead(out);
  // Retiring happens in the next submissions (sync submits barriers, twice to be sure).
  VirtualMachine::Get().Sync();
  VirtualMachine::Get().Sync();
  EXPECT_EQ(out->dependence().last_writer.get(), nullptr);
  EXPECT_FALSE(IsReader(out, reader));
  // Only the test's own handles are left.
  EXPECT_EQ(RefCountOf(writer.get()).load(), 1);
  EXPECT_EQ(RefCountOf(reader.get()).load(), 1);
}

TEST(RetiredInstructionTest, WhileTracingTheBlobKeepsThemForTheTrace) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.StartTraceSession();
  BlobPtr out = MakeCpuBlob(48);
  auto [writer, reader] = WriteThenRead(out);
  vm.Sync();
  vm.Sync();
  EXPECT_EQ(out->dependence().last_writer.get(), writer.get());
  EXPECT_TRUE(IsReader(out, reader));
  vm.StopTraceSession();
}

// While tracing, finished readers are not retired from the blob's readers, so pruning alone
// bounds the list: a blob read 1,000 times, never more than 51 reads unfinished at once, keeps at
// most 128 (a full list of 64 grows once when more than half of it is still running, as can happen
// in OFL_VM_SYNC=1 mode; at 128 fewer than half can be).
TEST(RetiredInstructionTest, ABlobReadManyTimesWhileTracingKeepsABoundedReaderList) {
  VirtualMachine& vm = VirtualMachine::Get();
  vm.StartTraceSession();
  BlobPtr out = MakeCpuBlob(48);
  WriteThenRead(out);
  for (int i = 0; i < 1000; ++i) {
    SubmitWithoutWaiting([&](InstructionsBuilder* b) {
      b->Function(
          "retired_test_read", {out}, {}, [] {}, out->producer_stream());
    });
    if (i % 50 == 49) vm.Sync();
  }
  vm.Sync();
  EXPECT_LE(out->dependence().readers.size(), 128u);
  EXPECT_LE(out->dependence().readers.capacity(), 128u);
  vm.StopTraceSession();
}

// Pruning drops finished readers only: 200 readers queued behind a blocked one all stay recorded,
// in the order they were issued.
TEST(RetiredInstructionTest, UnfinishedReadersAreNeverPruned) {
  BlobPtr out = MakeCpuBlob(48);
  WriteThenRead(out);
  VirtualMachine::Get().Sync();
  testing::Latch gate;
  std::vector<InstrRef> readers;
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    readers.push_back(b->Function(
        "retired_test_blocked_read", {out}, {}, [&gate] { gate.Wait(); }, out->producer_stream()));
    for (int i = 0; i < 199; ++i) {
      readers.push_back(b->Function(
          "retired_test_read", {out}, {}, [] {}, out->producer_stream()));
    }
  });
  std::vector<Instruction*> recorded;
  for (const InstrRef& r : out->dependence().readers) recorded.push_back(r.get());
  gate.Open();
  VirtualMachine::Get().Sync();
  ASSERT_EQ(recorded.size(), readers.size());
  for (size_t i = 0; i < readers.size(); ++i) EXPECT_EQ(recorded[i], readers[i].get()) << i;
}

}  // namespace
}  // namespace ofl::vm
