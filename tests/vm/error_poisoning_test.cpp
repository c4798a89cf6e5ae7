// Tests what happens when an instruction fails inside the VM (a function throwing, out-of-memory in
// Prepare): the blobs it writes and everything computed from them are poisoned, the next wait that
// touches them re-throws the original exception type naming the failed op and its instruction id,
// independent work is unaffected, sync() reports an unread error exactly once, and the VM keeps
// working. In OFL_VM_SYNC=1 mode the same errors surface at the call that issued the instruction.
// Tensors live on VmTestDevice() and the failing functions run on its streams (they throw without
// touching memory); the test of raw blobs made by MakeCpuBlob stays on CPU streams.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace ofl {
namespace {

using vm::testing::CpuStream;
using vm::testing::MakeCpuBlob;
using vm::testing::ScopeGuard;
using vm::testing::VmTestDevice;
using vm::testing::VmTestStream;

bool SyncMode() { return vm::VirtualMachine::Get().sync_mode(); }

// What a call threw, if anything.
struct Caught {
  bool threw = false;
  bool expected_type = false;
  bool is_invalid_argument = false;
  bool is_out_of_memory = false;
  std::string message;
};

template <class E, class F>
Caught CatchFrom(F&& f) {
  Caught c;
  try {
    f();
  } catch (const std::exception& e) {
    c.threw = true;
    c.expected_type = dynamic_cast<const E*>(&e) != nullptr;
    c.is_invalid_argument = dynamic_cast<const InvalidArgument*>(&e) != nullptr;
    c.is_out_of_memory = dynamic_cast<const OutOfMemory*>(&e) != nullptr;
    c.message = e.what();
  }
  return c;
}

// "#<id>" not followed by another digit.
bool MentionsInstruction(const std::string& message, uint64_t id) {
  const std::string needle = "#" + std::to_string(id);
  for (size_t pos = message.find(needle); pos != std::string::npos;
       pos = message.find(needle, pos + 1)) {
    const size_t end = pos + needle.size();
    if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) {
      return true;
    }
  }
  return false;
}

void ExpectNamesFailure(const Caught& c, const std::string& op, uint64_t id,
                        const std::string& cause) {
  ASSERT_TRUE(c.threw) << "expected the error of " << op << " (#" << id << ")";
  EXPECT_TRUE(c.expected_type) << "wrong exception type: " << c.message;
  EXPECT_NE(c.message.find(op), std::string::npos) << c.message;
  EXPECT_TRUE(MentionsInstruction(c.message, id)) << "no #" << id << " in: " << c.message;
  EXPECT_NE(c.message.find(cause), std::string::npos) << c.message;
}

// Issues a Function on `stream` that writes `blob` and throws what `fail` throws. Returns the
// instruction id; in sync mode also what the call threw.
template <class E>
uint64_t IssueFailing(const std::string& op, const vm::BlobPtr& blob, void (*fail)(),
                      vm::Stream* stream, Caught* at_call) {
  vm::InstrRef ref;
  *at_call = CatchFrom<E>([&] {
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      ref = b->Function(
          op, {}, {blob}, [fail] { fail(); }, stream);
    });
  });
  return ref->id();
}

void ThrowRuntimeError() { throw std::runtime_error("kaboom: the widget overflowed at 42"); }
void ThrowInvalidArgument() {
  throw InvalidArgument("picky_kernel: argument 'k' must be < 3, got k=5");
}

TEST(ErrorPoisoningTest, FailedFunctionPoisonsItsOutputAndEverythingComputedFromIt) {
  sync();
  Tensor t = tensor<float>({1, 2, 3, 4}, Shape({4}), VmTestDevice());
  const Tensor independent = tensor<float>({5, 6}, Shape({2}), VmTestDevice());

  Caught at_call;
  const uint64_t id =
      IssueFailing<std::runtime_error>("exploding_fn", t.impl()->blob(), &ThrowRuntimeError,
                                       VmTestStream(vm::StreamRole::kAux), &at_call);
  if (SyncMode()) {
    ExpectNamesFailure(at_call, "exploding_fn", id, "kaboom: the widget overflowed at 42");
  } else {
    EXPECT_FALSE(at_call.threw) << "an error inside the VM was thrown at the call: "
                                << at_call.message;
  }
  EXPECT_FALSE(at_call.is_invalid_argument || at_call.is_out_of_memory) << at_call.message;

  // A dependent op on another stream, and one more step down the chain.
  Tensor dependent, second;
  const Caught dep_call = CatchFrom<std::runtime_error>([&] {
    dependent = t.repeat({2});
    second = dependent.repeat({3});
  });
  if (SyncMode()) {
    ExpectNamesFailure(dep_call, "exploding_fn", id, "kaboom");
  } else {
    EXPECT_FALSE(dep_call.threw) << dep_call.message;
    ExpectNamesFailure(CatchFrom<std::runtime_error>([&] { t.to_vector<float>(); }), "exploding_fn",
                       id, "kaboom");
    ExpectNamesFailure(CatchFrom<std::runtime_error>([&] { dependent.to_vector<float>(); }),
                       "exploding_fn", id, "kaboom");
    ExpectNamesFailure(CatchFrom<std::runtime_error>([&] { second.to_vector<float>(); }),
                       "exploding_fn", id, "kaboom");
  }
  // A poisoned blob stays poisoned: reading it again throws again.
  ExpectNamesFailure(CatchFrom<std::runtime_error>([&] { t.to_vector<float>(); }), "exploding_fn",
                     id, "kaboom");

  EXPECT_EQ(independent.to_vector<float>(), (std::vector<float>{5, 6}));
  // Every error was reported by a read (or at the call): sync has nothing left to report.
  EXPECT_NO_THROW(sync());
  EXPECT_EQ(tensor<float>({7, 8}, Shape({2}), VmTestDevice()).repeat({2}).to_vector<float>(),
            (std::vector<float>{7, 8, 7, 8}));
}

TEST(ErrorPoisoningTest, InvalidArgumentRaisedInsideTheVmKeepsItsType) {
  sync();
  Tensor t = tensor<float>({1, 2, 3}, Shape({3}), VmTestDevice());
  Caught at_call;
  const uint64_t id =
      IssueFailing<InvalidArgument>("picky_fn", t.impl()->blob(), &ThrowInvalidArgument,
                                    VmTestStream(vm::StreamRole::kCompute), &at_call);
  if (SyncMode()) {
    ExpectNamesFailure(at_call, "picky_fn", id, "argument 'k' must be < 3, got k=5");
  } else {
    EXPECT_FALSE(at_call.threw) << at_call.message;
    const Tensor dependent = t.expand({2, 3}).contiguous();
    ExpectNamesFailure(CatchFrom<InvalidArgument>([&] { dependent.to_vector<float>(); }),
                       "picky_fn", id, "argument 'k' must be < 3, got k=5");
  }
  ExpectNamesFailure(CatchFrom<InvalidArgument>([&] { t.to_vector<float>(); }), "picky_fn", id,
                     "got k=5");
  EXPECT_NO_THROW(sync());
}

TEST(ErrorPoisoningTest, PoisonedInputsSkipTheDependentAndPoisonWhatItWrites) {
  sync();
  vm::BlobPtr source = MakeCpuBlob(8);
  vm::BlobPtr derived = MakeCpuBlob(8);
  Caught at_call;
  const uint64_t id = IssueFailing<std::runtime_error>(
      "exploding_fn", source, &ThrowRuntimeError, CpuStream(vm::StreamRole::kCompute), &at_call);
  bool dependent_ran = false;
  vm::InstrRef dependent;
  const Caught dep_call = CatchFrom<std::runtime_error>([&] {
    vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
      dependent = b->Function(
          "dependent_fn", {source}, {derived}, [&] { dependent_ran = true; },
          CpuStream(vm::StreamRole::kHost2Device));
    });
  });
  EXPECT_EQ(dep_call.threw, SyncMode()) << dep_call.message;
  vm::VirtualMachine::Get().Wait(dependent.get());

  EXPECT_FALSE(dependent_ran) << "an instruction ran on a poisoned input";
  ASSERT_NE(dependent->error(), nullptr);
  EXPECT_EQ(dependent->error()->instruction_id, id);
  EXPECT_EQ(dependent->error()->op_name, "exploding_fn");
  ASSERT_NE(derived->error(), nullptr);
  EXPECT_EQ(derived->error()->instruction_id, id);
  EXPECT_FALSE(derived->allocated()) << "a skipped instruction allocated its output";
  // Reported once: by the call in sync mode, by this sync otherwise.
  if (SyncMode()) {
    EXPECT_NO_THROW(sync());
  } else {
    ExpectNamesFailure(CatchFrom<std::runtime_error>([] { sync(); }), "exploding_fn", id, "kaboom");
  }
  EXPECT_NO_THROW(sync());
}

TEST(ErrorPoisoningTest, SyncThrowsAnUnreadErrorOnceThenTheVmKeepsWorking) {
  sync();
  const Tensor t = tensor<float>({1, 2}, Shape({2}), VmTestDevice());
  Caught at_call;
  const uint64_t id =
      IssueFailing<InvalidArgument>("picky_fn", t.impl()->blob(), &ThrowInvalidArgument,
                                    VmTestStream(vm::StreamRole::kDevice2Host), &at_call);
  if (SyncMode()) {
    ExpectNamesFailure(at_call, "picky_fn", id, "got k=5");
    EXPECT_NO_THROW(sync()) << "an error thrown at the call was reported again by sync";
  } else {
    ExpectNamesFailure(CatchFrom<InvalidArgument>([] { sync(); }), "picky_fn", id, "got k=5");
    EXPECT_NO_THROW(sync()) << "sync reported the same error twice";
  }
  const Tensor fresh =
      tensor<float>({1, 2, 3}, Shape({3, 1}), VmTestDevice()).expand({3, 2}).contiguous();
  EXPECT_EQ(fresh.to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  EXPECT_NO_THROW(sync());
}

TEST(ErrorPoisoningTest, SyncReportsTheFirstUnreadErrorAndCountsTheOthers) {
  if (SyncMode()) GTEST_SKIP() << "in OFL_VM_SYNC=1 mode each error is thrown at its own call";
  sync();
  const Tensor a = tensor<float>({1}, Shape({1}), VmTestDevice());
  const Tensor b = tensor<float>({2}, Shape({1}), VmTestDevice());
  Caught unused;
  const uint64_t first =
      IssueFailing<InvalidArgument>("first_fn", a.impl()->blob(), &ThrowInvalidArgument,
                                    VmTestStream(vm::StreamRole::kCompute), &unused);
  const uint64_t second =
      IssueFailing<std::runtime_error>("second_fn", b.impl()->blob(), &ThrowRuntimeError,
                                       VmTestStream(vm::StreamRole::kCompute), &unused);
  ASSERT_LT(first, second);
  const Caught c = CatchFrom<InvalidArgument>([] { sync(); });
  ExpectNamesFailure(c, "first_fn", first, "got k=5");
  EXPECT_NE(c.message.find("1 more error"), std::string::npos) << c.message;
  EXPECT_NO_THROW(sync());
}

TEST(ErrorPoisoningTest, OutOfMemoryInPrepareSurfacesAsOutOfMemoryAndTheLimitCanBeLifted) {
  const Device device = VmTestDevice();
  sync();
  empty_cache(device);
  ScopeGuard restore([device] { set_memory_limit(device, 0); });
  const MemoryStats before = memory_stats(device);
  set_memory_limit(device, before.reserved_bytes + (int64_t{8} << 20));
  const int64_t big_numel = int64_t{4} << 20;  // 16 MiB of float: more than the limit leaves
  const std::string big_bytes = std::to_string(big_numel * 4);

  Tensor big, dependent;
  const Caught at_call = CatchFrom<OutOfMemory>([&] {
    big = empty(Shape({big_numel}), DType::kFloat32, device);
    dependent = big.narrow(0, 0, 4).contiguous();
  });
  auto expect_oom_message = [&](const Caught& c) {
    ASSERT_TRUE(c.threw);
    EXPECT_TRUE(c.expected_type) << c.message;
    EXPECT_NE(c.message.find("empty"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("instruction #"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find(big_bytes), std::string::npos) << c.message;
  };
  if (SyncMode()) {
    expect_oom_message(at_call);
  } else {
    EXPECT_FALSE(at_call.threw) << at_call.message;
    expect_oom_message(CatchFrom<OutOfMemory>([&] { big.narrow(0, 0, 4).to_vector<float>(); }));
    expect_oom_message(CatchFrom<OutOfMemory>([&] { dependent.to_vector<float>(); }));
  }
  EXPECT_GT(memory_stats(device).ooms, before.ooms);
  // Small work still fits under the limit.
  EXPECT_EQ(tensor<float>({1, 2}, Shape({2}), VmTestDevice()).repeat({2}).to_vector<float>(),
            (std::vector<float>{1, 2, 1, 2}));
  EXPECT_NO_THROW(sync());

  set_memory_limit(device, 0);
  {
    // The same request succeeds once the limit is lifted (only a slice is read back).
    const Tensor fits = empty(Shape({big_numel}), DType::kFloat32, device);
    EXPECT_NO_THROW(fits.narrow(0, big_numel - 2, 2).to_vector<float>());
  }
  EXPECT_NO_THROW(sync());
  empty_cache(device);
}

}  // namespace
}  // namespace ofl
