// A collective whose part fails on one rank only (its output cannot be allocated, or its input's
// producer failed there) still runs on every rank (oneflow_lite/functional/collective_policy.h):
// the ranks agree that it cannot move data, every rank's next wait gets the error (the failing rank
// its own, the others one naming that rank), and the next collective pairs as it should and gives
// the right values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {
namespace {

constexpr int kFailing = 1;  // the rank whose part fails

// Disarms the injected fault after each test.
class CollectiveFailureTest : public OneRankFailsTest {
 protected:
  void Disarm() override { Pool()->SetFailAt(0); }
  static vm::CachingAllocator* Pool() {
    return vm::VirtualMachine::Get().devices().GetAllocator(Device("cpu"));
  }

  // Reads `t` on this rank, expecting the OutOfMemory every rank must get, with `own` (on the
  // failing rank) or `peer` (on the others) in its message.
  static void ExpectOutOfMemoryEverywhere(const Tensor& t, const std::string& own,
                                          const std::string& peer) {
    try {
      (void)t.to_local().to_vector<float>();
      ADD_FAILURE() << "rank " << rank() << ": the collective's output read without an error";
    } catch (const OutOfMemory& e) {
      const std::string msg = e.what();
      const std::string& want = rank() == kFailing ? own : peer;
      EXPECT_NE(msg.find(want), std::string::npos) << "'" << want << "' not in: " << msg;
    }
  }

  // The next collectives pair as they should: the right values on every rank.
  static void ExpectNextCollectivesWork(const Tensor& x, const std::vector<float>& logical,
                                        const Shape& shape) {
    const Placement p = World();
    EXPECT_EQ(x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>(), logical);
    const Tensor partial =
        LocalPiece<float>(logical, shape, Sbp::partial_sum(), p.index_of(rank()), p.size())
            .to_global(p, Sbp::partial_sum());
    EXPECT_EQ(partial.to_global(p, Sbp::broadcast()).to_local().to_vector<float>(), logical);
  }
};

TEST_F(CollectiveFailureTest, AnOutputOneRankCannotAllocateFailsTheCollectiveOnEveryRank) {
  const Placement p = World();
  const Shape shape({16 * p.size(), 256});  // 16 KiB per rank: a pool block, not a tiny slab
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::split(0), p.index_of(rank()), p.size())
                       .to_global(p, Sbp::split(0));
  sync();
  // On one rank the all-gather's output cannot be allocated: the next pool request fails.
  if (rank() == kFailing) Pool()->SetFailAt(1);
  const Tensor gathered = x.to_global(p, Sbp::broadcast());
  ExpectOutOfMemoryEverywhere(
      gathered, "(injected fault)",
      "rank " + std::to_string(kFailing) + " could not take part in boxing S->B");
  EXPECT_EQ(Pool()->fail_at(), 0) << "the injected fault was not used";
  ExpectNextCollectivesWork(x, logical, shape);
}

TEST_F(CollectiveFailureTest, AnInputThatFailedOnOneRankFailsTheCollectiveOnEveryRank) {
  const Placement p = World();
  const Shape shape({4 * p.size(), 256});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor local =
      LocalPiece<float>(logical, shape, Sbp::split(0), p.index_of(rank()), p.size());
  sync();
  // On one rank the op that produces the shard fails: the shard is poisoned there, and only there.
  if (rank() == kFailing) Pool()->SetFailAt(1);
  const Tensor shard = local.repeat({1, 1});
  const Tensor gathered = shard.to_global(p, Sbp::split(0)).to_global(p, Sbp::broadcast());
  ExpectOutOfMemoryEverywhere(
      gathered, "repeat",
      "rank " + std::to_string(kFailing) + " could not take part in boxing S->B");
  ExpectNextCollectivesWork(local.to_global(p, Sbp::split(0)), logical, shape);
}

}  // namespace
}  // namespace ofl::testing
