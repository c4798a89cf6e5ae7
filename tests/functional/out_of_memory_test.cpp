// Out of memory end to end: with a CPU pool limit, an op needing more fails inside the VM; reading
// its output (or its dependents) throws OutOfMemory naming the op and the byte counts, sync()
// reports it once, tensors not depending on it read back fine, and lifting the limit makes the
// same op work. The limit is lifted by a scope guard even when a check fails.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"
#include "vm/virtual_machine.h"

namespace ofl::testing {
namespace {

class OutOfMemoryTest : public ::testing::Test {
 protected:
  // Caps the pool at what is reserved now plus a little, and picks a repeat count whose output
  // cannot fit: it is larger than everything reserved, so no cached block can serve it, and larger
  // than the headroom, so no new segment may be reserved for it.
  void SetUp() override {
    std::mt19937_64 rng(31);
    host_ = RandomHost<float>(rng, {256});
    a_ = ToDevice(host_);
    ofl::sync();
    ofl::empty_cache(cpu_);
    before_ = ofl::memory_stats(cpu_);
    const int64_t headroom = int64_t{4} << 20;
    ofl::set_memory_limit(cpu_, before_.reserved_bytes + headroom);
    repeats_ = (before_.reserved_bytes + 4 * headroom) / 1024 + 1;
    big_bytes_ = repeats_ * 1024;
  }

  static bool SyncMode() { return vm::VirtualMachine::Get().sync_mode(); }

  std::vector<std::string> OomPieces() const {
    return {"repeat", "out of memory", std::to_string(big_bytes_), "limit"};
  }

  const Device cpu_ = TestDevice();
  MemoryLimitGuard guard_;  // declared before the tensors: lifts the limit after they are gone
  HostTensor<float> host_;
  Tensor a_;
  MemoryStats before_;
  int64_t repeats_ = 0;
  int64_t big_bytes_ = 0;
};

TEST_F(OutOfMemoryTest, ReadingTheOutputThrowsAndTheRuntimeRecovers) {
  if (SyncMode()) {
    // OFL_VM_SYNC=1: the error surfaces at the op call itself.
    ExpectThrowWith<OutOfMemory>([&] { ofl::repeat(a_, {repeats_}); }, OomPieces());
  } else {
    Tensor big;
    ASSERT_NO_THROW(big = ofl::repeat(a_, {repeats_}));
    EXPECT_EQ(big.numel(), repeats_ * 256);  // the shape is known at once
    ExpectThrowWith<OutOfMemory>([&] { big.to_vector<float>(); }, OomPieces());
    // The output stays poisoned, and so does everything computed from it.
    ExpectThrowWith<OutOfMemory>([&] { big.to_vector<float>(); }, OomPieces());
    const Tensor dependent = big.narrow(0, 0, 10).repeat({2});
    ExpectThrowWith<OutOfMemory>([&] { dependent.to_vector<float>(); }, OomPieces());
    float x[4];
    ExpectThrowWith<OutOfMemory>([&] { big.narrow(0, 0, 4).copy_to_host(x, sizeof(x)); },
                                 OomPieces());
  }
  // Already reported by the reads: sync() has nothing to add.
  EXPECT_NO_THROW(ofl::sync());
  EXPECT_GT(ofl::memory_stats(cpu_).ooms, before_.ooms);

  // Tensors that do not depend on the failed op are fine, and small ops still fit.
  EXPECT_TRUE(SameAs(a_, host_));
  EXPECT_TRUE(SameAs(a_.repeat({2}), RefRepeat(host_, {2})));

  ofl::set_memory_limit(cpu_, 0);
  const Tensor again = ofl::repeat(a_, {repeats_});
  const std::vector<float> v = again.to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(v.size()), repeats_ * 256);
  for (size_t i = 0; i < v.size(); i += 997) ASSERT_EQ(v[i], host_.data[i % 256]) << i;
  ASSERT_EQ(v.back(), host_.data.back());
  EXPECT_NO_THROW(ofl::sync());
  ExpectRuntimeWorks();
}

TEST_F(OutOfMemoryTest, SyncReportsAnUnreadErrorOnce) {
  if (SyncMode()) GTEST_SKIP() << "OFL_VM_SYNC=1 reports the error at the call";
  Tensor big = ofl::repeat(a_, {repeats_});
  ExpectThrowWith<OutOfMemory>([] { ofl::sync(); }, OomPieces());
  EXPECT_NO_THROW(ofl::sync());
  // A later read of the poisoned tensor still fails with the original error.
  ExpectThrowWith<OutOfMemory>([&] { big.to_vector<float>(); }, OomPieces());
  EXPECT_NO_THROW(ofl::sync());
  ofl::set_memory_limit(cpu_, 0);
  ExpectRuntimeWorks();
}

TEST_F(OutOfMemoryTest, EmptyNeedingTooMuch) {
  const int64_t n = big_bytes_ / 4;
  auto run = [&] {
    const Tensor t = ofl::empty(Shape({n}), DType::kFloat32, TestDevice());
    t.narrow(0, 0, 1).to_vector<float>();
  };
  ExpectThrowWith<OutOfMemory>(run, {"empty", "out of memory", std::to_string(n * 4)});
  EXPECT_NO_THROW(ofl::sync());
  EXPECT_TRUE(SameAs(a_, host_));
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
