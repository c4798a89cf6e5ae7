// Global tensors on sim placements: the simulated accelerator's memory is moved with MPI through
// host staging buffers (kernels/collective/sim_device_collectives.cpp). Each rank's shards live
// on the sim device of its node-local rank (sim:0 and sim:1 in turn), which the host never
// touches: every boxing pair, placement change, to_global of local shards and global empty must
// give what the same calls give on cpu placements, the sim's collectives must not mix with the
// CPU's, and a failure on one rank must fail the collective on every rank and leave the next one
// working.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {
namespace {

// Every boxing pair on the sim placement gives the shards the same pair gives on the cpu placement.
template <class T>
void CheckEveryBoxingPairAgainstCpu(const Shape& shape) {
  const Placement cpu = World(), sim = SimWorld();
  const int n = cpu.size(), me = cpu.index_of(rank());
  const std::vector<T> logical = Logical<T>(shape);
  for (const Sbp& from : AllSbps(shape)) {
    const Tensor piece = LocalPiece<T>(logical, shape, from, me, n);
    const Tensor on_cpu = piece.to_global(cpu, from);
    const Tensor on_sim = piece.to(MySim()).to_global(sim, from);
    ASSERT_EQ(on_sim.to_local().device(), MySim());
    ASSERT_EQ(on_sim.shape(), shape);
    for (const Sbp& to : AllSbps(shape)) {
      SCOPED_TRACE(from.str() + " -> " + to.str() + " on " + shape.str());
      const Tensor want = on_cpu.to_global(cpu, to);
      const Tensor got = on_sim.to_global(sim, to);
      EXPECT_EQ(got.sbp(), to);
      EXPECT_EQ(got.placement(), sim);
      EXPECT_EQ(got.shape(), shape);
      EXPECT_EQ(got.to_local().device(), MySim());
      EXPECT_EQ(got.to_local().shape(), want.to_local().shape());
      EXPECT_EQ(got.to_local().to_vector<T>(), want.to_local().to_vector<T>());
      EXPECT_EQ(got.to_vector<T>(), logical);  // P: summed through boxing to B
    }
  }
}

TEST(SimPlacementTest, EveryBoxingPairGivesTheShardsOfTheCpuPlacement) {
  for (const Shape& s : {Shape({8, 4}), Shape({5, 3}), Shape({2, 7}), Shape({1, 3})}) {
    CheckEveryBoxingPairAgainstCpu<float>(s);
  }
}

TEST(SimPlacementTest, EveryBoxingPairGivesTheShardsOfTheCpuPlacementOtherTypes) {
  CheckEveryBoxingPairAgainstCpu<int64_t>(Shape({5, 3}));
  CheckEveryBoxingPairAgainstCpu<int8_t>(Shape({3, 2, 5}));
  CheckEveryBoxingPairAgainstCpu<int16_t>(Shape({4, 3}));  // MPI sums int16 (NCCL cannot)
  CheckEveryBoxingPairAgainstCpu<double>(Shape({7}));
  CheckEveryBoxingPairAgainstCpu<float16>(Shape({6, 5}));
  CheckEveryBoxingPairAgainstCpu<bool>(Shape({5, 2}));
}

TEST(SimPlacementTest, ToGlobalOfUnevenShardsAndToLocal) {
  const Placement p = SimWorld();
  const int me = p.index_of(rank()), n = p.size();
  // Rank i passes i + 1 rows of value i: the logical tensor is their concatenation, rebalanced by
  // an all-gather on the sim.
  const std::vector<float> mine(static_cast<size_t>((me + 1) * 2), static_cast<float>(me));
  const Tensor g = tensor<float>(mine, Shape({me + 1, 2}), MySim()).to_global(p, Sbp::split(0));
  const int64_t rows = static_cast<int64_t>(n) * (n + 1) / 2;
  EXPECT_EQ(g.shape(), Shape({rows, 2}));
  std::vector<float> want;
  for (int r = 0; r < n; ++r) want.insert(want.end(), static_cast<size_t>((r + 1) * 2), r);
  EXPECT_EQ(g.to_vector<float>(), want);
  const Tensor local = g.to_local();
  EXPECT_FALSE(local.is_global());
  EXPECT_EQ(local.device(), MySim());
  const ops::SplitRange r = ops::BalancedSplit(rows, n, me);
  EXPECT_EQ(local.shape(), Shape({r.size, 2}));
  EXPECT_EQ(local.to_vector<float>(), Slice(want, Shape({rows, 2}), 0, r.start, r.size));
  // The shard is a sim tensor like any other: local ops run on it, and it goes global again.
  std::vector<float> twice = want;
  for (float& v : twice) v *= 2;
  EXPECT_EQ((local + local).to_global(p, Sbp::split(0)).to_vector<float>(), twice);
}

TEST(SimPlacementTest, GlobalEmptyAllocatesOnlyTheShardOnTheSim) {
  const Placement p = SimWorld();
  const int me = p.index_of(rank()), n = p.size();
  const Tensor g = empty(Shape({10, 3}), DType::kFloat32, p, Sbp::split(0));
  EXPECT_EQ(g.shape(), Shape({10, 3}));
  EXPECT_EQ(g.to_local().device(), MySim());
  EXPECT_EQ(g.to_local().shape(), Shape({ops::BalancedSplit(10, n, me).size, 3}));
  const Tensor b = empty(Shape({4}), DType::kInt32, p, Sbp::broadcast());
  EXPECT_EQ(b.to_local().shape(), Shape({4}));
  EXPECT_EQ(b.to_local().device(), MySim());
  // Zero elements: every collective moves nothing and still pairs.
  const Tensor none = empty(Shape({0, 3}), DType::kFloat32, p, Sbp::split(0));
  EXPECT_EQ(none.to_global(p, Sbp::broadcast()).to_local().shape(), Shape({0, 3}));
  EXPECT_EQ(none.to_global(p, Sbp::split(1)).to_vector<float>(), std::vector<float>{});
}

TEST(SimPlacementTest, PlacementChangesGoThroughTheFirstSourceRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement world = SimWorld();
  const Shape shape({5, 3});
  const std::vector<float> logical = Logical<float>(shape);
  // From one rank to all of them, split on arrival.
  const Tensor one = (rank() == 0 ? tensor<float>(logical, shape, MySim()) : Tensor())
                         .to_global(Placement("sim", {0}), Sbp::broadcast());
  const Tensor spread = one.to_global(world, Sbp::split(0));
  EXPECT_EQ(spread.placement(), world);
  EXPECT_EQ(spread.to_local().device(), MySim());
  EXPECT_EQ(spread.to_local().shape()[0],
            ops::BalancedSplit(5, world.size(), world.index_of(rank())).size);
  EXPECT_EQ(spread.to_vector<float>(), logical);
  // The same ranks in the other order: S(1) -> S(0).
  std::vector<int> reversed(world.ranks().rbegin(), world.ranks().rend());
  const Tensor flipped =
      spread.to_global(world, Sbp::split(1)).to_global(Placement("sim", reversed), Sbp::split(0));
  EXPECT_EQ(flipped.to_vector<float>(), logical);
  // The first source rank outside the destination: it only sends.
  const Tensor rest = spread.to_global(Placement("sim", {world_size() - 1}), Sbp::broadcast());
  if (rank() == world_size() - 1) {
    EXPECT_EQ(rest.to_local().device(), MySim());
    EXPECT_EQ(rest.to_vector<float>(), logical);
  } else {
    EXPECT_EQ(rest.to_local().numel(), 0);
  }
  // A partial sum over two ranks onto the last rank alone.
  if (world_size() >= 3) {
    const Placement pair("sim", {0, 1});
    const int me = pair.index_of(rank());
    const Tensor local = LocalPiece<float>(logical, shape, Sbp::partial_sum(), std::max(me, 0), 2);
    const Tensor p = (me >= 0 ? local.to(MySim()) : local).to_global(pair, Sbp::partial_sum());
    const Tensor last = p.to_global(Placement("sim", {world_size() - 1}), Sbp::broadcast());
    if (rank() == world_size() - 1) {
      EXPECT_EQ(last.to_vector<float>(), logical);
    } else {
      EXPECT_EQ(last.to_local().numel(), 0);
    }
  }
}

TEST(SimPlacementTest, SimAndCpuCollectivesIssuedTogetherDoNotMix) {
  // Issued back to back without waiting: the sim's collective stream and the CPU's run at the same
  // time, each over its own communicators.
  const Placement cpu = World(), sim = SimWorld();
  const int n = cpu.size(), me = cpu.index_of(rank());
  const Shape shape({6, 5});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor piece = LocalPiece<float>(logical, shape, Sbp::split(0), me, n);
  std::vector<Tensor> on_cpu, on_sim;
  Tensor c = piece.to_global(cpu, Sbp::split(0));
  Tensor s = piece.to(MySim()).to_global(sim, Sbp::split(0));
  for (int i = 0; i < 8; ++i) {
    const Sbp to = i % 2 == 0 ? Sbp::broadcast() : Sbp::split(i % 4 == 1 ? 1 : 0);
    c = c.to_global(cpu, to);
    s = s.to_global(sim, to);
    on_cpu.push_back(c);
    on_sim.push_back(s);
  }
  for (size_t i = 0; i < on_sim.size(); ++i) {
    EXPECT_EQ(on_sim[i].to_local().to_vector<float>(), on_cpu[i].to_local().to_vector<float>())
        << "step " << i;
  }
  EXPECT_EQ(s.to_vector<float>(), logical);
}

TEST(SimPlacementTest, GlobalOpsAndTheirBackwardMatchTheLocalComputation) {
  const Placement p = SimWorld();
  const Shape shape({4, 1});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = tensor<float>(logical, shape, MySim()).to_global(p, Sbp::broadcast());
  const Tensor y = x.to_global(p, Sbp::split(0)).expand({4, 6});
  EXPECT_EQ(y.to_local().device(), MySim());
  const Tensor want = tensor<float>(logical, shape, Device("cpu")).expand({4, 6}).contiguous();
  EXPECT_EQ(y.to_vector<float>(), want.to_vector<float>());
  const Tensor dx = expand_backward(y.contiguous(), Shape({4, 1}));
  EXPECT_EQ(dx.to_vector<float>(), expand_backward(want, Shape({4, 1})).to_vector<float>());
  const Tensor r = x.to_global(p, Sbp::split(1)).repeat({1, 3});
  EXPECT_EQ(r.to_vector<float>(),
            tensor<float>(logical, shape, Device("cpu")).repeat({1, 3}).to_vector<float>());
}

TEST(SimPlacementTest, BadCallsAreTheSameErrorOnEveryRank) {
  const Placement p = SimWorld();
  // A cpu tensor on one rank only: every rank refuses, naming that rank and both devices.
  const int last = world_size() - 1;
  const Tensor mine = rank() == last ? tensor<float>({1, 2}, Shape({2}), Device("cpu"))
                                     : tensor<float>({1, 2}, Shape({2}), MySim());
  ExpectInvalid([&] { (void)mine.to_global(p, Sbp::broadcast()); },
                {"to_global: rank " + std::to_string(last) + ":", "the local tensor is on cpu:0",
                 "Placement(type=\"sim\"", "needs this rank's tensors on sim:"});
  // Autograd runs through sim placements as through cpu ones.
  Tensor leaf = tensor<float>({1, 2, 3}, Shape({3}), MySim());
  leaf.requires_grad_();
  (leaf.to_global(p, Sbp::broadcast()) * leaf.to_global(p, Sbp::broadcast())).sum().backward();
  EXPECT_EQ(leaf.grad().device(), MySim());
  EXPECT_EQ(leaf.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // A placement change keeps the device type, both ways.
  const Tensor on_cpu =
      tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(World(), Sbp::broadcast());
  ExpectInvalid([&] { (void)on_cpu.to_global(p, Sbp::broadcast()); },
                {"to_global", "keeps the device type", "to_local().to(device)"});
  const Tensor on_sim = tensor<float>({1, 2}, Shape({2}), MySim()).to_global(p, Sbp::broadcast());
  ExpectInvalid([&] { (void)on_sim.to_global(World(), Sbp::broadcast()); },
                {"to_global", "keeps the device type"});
  ExpectInvalid([&] { (void)on_sim.narrow(0, 0, 1); }, {"narrow", "global tensor", "sim"});
  // Still in step.
  EXPECT_EQ(on_sim.to_global(p, Sbp::split(0)).to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(
      on_sim.to_local().to(Device("cpu")).to_global(World(), Sbp::broadcast()).to_vector<float>(),
      (std::vector<float>{1, 2}));
}

constexpr int kFailing = 1;  // the rank whose part fails

// Lifts the pool's limit and clears the sim's injected faults after each test.
class SimCollectiveFailureTest : public OneRankFailsTest {
 protected:
  void Disarm() override {
    Pool()->SetLimit(0);
    kernels::sim::SimBackend::Instance().ClearFaults();
  }
  static vm::CachingAllocator* Pool() {
    return vm::VirtualMachine::Get().devices().GetAllocator(MySim());
  }

  // Reads `t`, expecting an error of type E on every rank: with `own` in its message on the
  // failing rank, one of `peer` on the others.
  template <class E>
  static void ExpectEverywhere(const Tensor& t, const std::string& own,
                               const std::vector<std::string>& peer) {
    try {
      (void)t.to_local().to_vector<float>();
      ADD_FAILURE() << "rank " << rank() << ": the collective's output read without an error";
    } catch (const E& e) {
      const std::string msg = e.what();
      bool found = false;
      if (rank() == kFailing) {
        found = msg.find(own) != std::string::npos;
      } else {
        for (const std::string& w : peer) found = found || msg.find(w) != std::string::npos;
      }
      EXPECT_TRUE(found) << "rank " << rank() << ": " << msg;
    }
  }

  static void ExpectNextCollectivesWork(const Tensor& x, const std::vector<float>& logical,
                                        const Shape& shape) {
    const Placement p = SimWorld();
    EXPECT_EQ(x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>(), logical);
    const Tensor partial =
        LocalPiece<float>(logical, shape, Sbp::partial_sum(), p.index_of(rank()), p.size())
            .to(MySim())
            .to_global(p, Sbp::partial_sum());
    EXPECT_EQ(partial.to_global(p, Sbp::broadcast()).to_local().to_vector<float>(), logical);
  }
};

TEST_F(SimCollectiveFailureTest, AnOutputOneRankCannotAllocateFailsTheCollectiveOnEveryRank) {
  const Placement p = SimWorld();
  const Shape shape({1024 * p.size(), 256});  // 1 MiB per rank: more than any block cached so far
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::split(0), p.index_of(rank()), p.size())
                       .to(MySim())
                       .to_global(p, Sbp::split(0));
  sync();
  // On one rank the all-gather's output cannot be allocated: the sim's pool may not grow (a fault
  // injected once would not do: on an asynchronous device the VM drains it and tries again).
  if (rank() == kFailing) Pool()->SetLimit(1);
  const Tensor gathered = x.to_global(p, Sbp::broadcast());
  ExpectEverywhere<OutOfMemory>(
      gathered, "out of memory on " + MySim().str(),
      {"rank " + std::to_string(kFailing) + " could not take part in boxing S->B"});
  Pool()->SetLimit(0);
  ExpectNextCollectivesWork(x, logical, shape);
}

TEST_F(SimCollectiveFailureTest, AnAsynchronousDeviceErrorOnOneRankFailsTheCollectiveOnEveryRank) {
  const Placement p = SimWorld();
  const Shape shape({4 * p.size(), 64});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::split(0), p.index_of(rank()), p.size())
                       .to(MySim())
                       .to_global(p, Sbp::split(0));
  sync();
  if (rank() == kFailing) {
    // A task of the device fails; the device reports it at its next wait or query, which is the
    // staging of the next collective (or, should the VM query first, the op that gets it there).
    auto& sim = kernels::sim::SimBackend::Instance();
    const NativeStream stream = sim.create_stream(MySim().index());
    sim.Enqueue(stream, [] { throw std::runtime_error("planted task failure"); });
    sim.destroy_stream(MySim().index(), stream);
  }
  const Tensor gathered = x.to_global(p, Sbp::broadcast());
  ExpectEverywhere<DeviceError>(
      gathered, "planted task failure",
      {"rank " + std::to_string(kFailing) + " could not copy its input from sim memory",
       "rank " + std::to_string(kFailing) + " could not take part"});
  ExpectNextCollectivesWork(x, logical, shape);
}

}  // namespace
}  // namespace ofl::testing
