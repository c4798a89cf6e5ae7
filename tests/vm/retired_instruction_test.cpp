// A finished instruction is dropped from the dependences of the blobs it used once the VM retires
// it, so a live tensor does not keep its producer's instruction (a few hundred bytes) alive. While
// tracing, it stays, so that the trace shows the edges to it.
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

}  // namespace
}  // namespace ofl::vm
