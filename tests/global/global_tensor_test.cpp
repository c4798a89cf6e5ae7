// Global tensors across the ranks mpiexec started (CTest: 2, 3 and 4 ranks, and one process):
// to_global from local shards, every boxing pair between S(0), S(1), B and P on even, uneven and
// empty-shard shapes for several element types, global empty, ranks outside a placement, and the
// errors of the global API. Every rank runs every test in the same order.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "ops/sbp_rules.h"
#include "tests/functional/host_memory_backend.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {
namespace {

template <class T>
void CheckEveryBoxingPair(const Shape& shape) {
  const Placement p = World();
  const int n = p.size(), me = p.index_of(rank());
  const std::vector<T> logical = Logical<T>(shape);
  for (const Sbp& from : AllSbps(shape)) {
    const Tensor g = LocalPiece<T>(logical, shape, from, me, n).to_global(p, from);
    ASSERT_TRUE(g.is_global());
    ASSERT_EQ(g.shape(), shape) << from.str();
    for (const Sbp& to : AllSbps(shape)) {
      SCOPED_TRACE(from.str() + " -> " + to.str() + " on " + shape.str());
      const Tensor b = g.to_global(p, to);
      EXPECT_EQ(b.sbp(), to);
      EXPECT_EQ(b.placement(), p);
      EXPECT_EQ(b.shape(), shape);
      if (to.is_split()) {
        const ops::SplitRange r = ops::BalancedSplit(shape[to.axis()], n, me);
        EXPECT_EQ(b.to_local().shape(), WithDim(shape, to.axis(), r.size));
        EXPECT_EQ(b.to_local().to_vector<T>(), Slice(logical, shape, to.axis(), r.start, r.size));
      } else if (to.is_broadcast()) {
        EXPECT_EQ(b.to_local().to_vector<T>(), logical);
      }
      EXPECT_EQ(b.to_vector<T>(), logical);  // P: summed through boxing to B
    }
  }
}

TEST(GlobalTensorTest, InitDistributedIsIdempotentAndNamesTheWorld) {
  init_distributed();
  init_distributed();
  EXPECT_GE(world_size(), 1);
  EXPECT_GE(rank(), 0);
  EXPECT_LT(rank(), world_size());
}

TEST(GlobalTensorTest, EveryBoxingPairKeepsTheLogicalValueFloat) {
  for (const Shape& s : {Shape({8, 4}), Shape({5, 3}), Shape({2, 7}), Shape({1, 3})}) {
    CheckEveryBoxingPair<float>(s);
  }
}

TEST(GlobalTensorTest, EveryBoxingPairKeepsTheLogicalValueOtherTypes) {
  CheckEveryBoxingPair<int64_t>(Shape({5, 3}));
  CheckEveryBoxingPair<int8_t>(Shape({3, 2, 5}));
  CheckEveryBoxingPair<double>(Shape({7}));
  CheckEveryBoxingPair<float16>(Shape({6, 5}));
  CheckEveryBoxingPair<bool>(Shape({5, 2}));
}

TEST(GlobalTensorTest, SplitShardsOfAnySizeConcatenateAlongTheAxis) {
  const Placement p = World();
  const int me = p.index_of(rank()), n = p.size();
  // Rank i passes i + 1 rows of value i: the logical tensor is their concatenation.
  const std::vector<float> mine(static_cast<size_t>((me + 1) * 2), static_cast<float>(me));
  const Tensor g =
      tensor<float>(mine, Shape({me + 1, 2}), Device("cpu")).to_global(p, Sbp::split(0));
  const int64_t rows = static_cast<int64_t>(n) * (n + 1) / 2;
  EXPECT_EQ(g.shape(), Shape({rows, 2}));
  std::vector<float> want;
  for (int r = 0; r < n; ++r) want.insert(want.end(), static_cast<size_t>((r + 1) * 2), r);
  EXPECT_EQ(g.to_vector<float>(), want);
  // Held as the balanced split from then on.
  EXPECT_EQ(g.to_local().shape()[0], ops::BalancedSplit(rows, n, me).size);
}

TEST(GlobalTensorTest, GlobalEmptyAllocatesOnlyTheShard) {
  const Placement p = World();
  const int me = p.index_of(rank()), n = p.size();
  const Tensor g = empty(Shape({10, 3}), DType::kFloat32, p, Sbp::split(0));
  EXPECT_EQ(g.shape(), Shape({10, 3}));
  EXPECT_EQ(g.numel(), 30);
  EXPECT_EQ(g.to_local().shape(), Shape({ops::BalancedSplit(10, n, me).size, 3}));
  EXPECT_EQ(empty(Shape({4}), DType::kInt32, p, Sbp::broadcast()).to_local().shape(), Shape({4}));
}

TEST(GlobalTensorTest, PlacementChangesGoThroughTheFirstSourceRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement world = World();
  const Shape shape({5, 3});
  const std::vector<float> logical = Logical<float>(shape);
  // From one rank to all of them, split on arrival.
  const Tensor one = tensor<float>(logical, shape, Device("cpu"))
                         .to_global(Placement("cpu", {0}), Sbp::broadcast());
  const Tensor spread = one.to_global(world, Sbp::split(0));
  EXPECT_EQ(spread.placement(), world);
  EXPECT_EQ(spread.to_local().shape()[0],
            ops::BalancedSplit(5, world.size(), world.index_of(rank())).size);
  EXPECT_EQ(spread.to_vector<float>(), logical);
  // The same ranks in the other order (another parallel index for each): S(1) -> S(0).
  std::vector<int> reversed(world.ranks().rbegin(), world.ranks().rend());
  const Tensor flipped =
      spread.to_global(world, Sbp::split(1)).to_global(Placement("cpu", reversed), Sbp::split(0));
  EXPECT_EQ(flipped.to_vector<float>(), logical);
  // A partial sum over two ranks onto the last rank alone.
  if (world_size() >= 3) {
    const Placement pair("cpu", {0, 1});
    const int me = pair.index_of(rank());
    const Tensor p = LocalPiece<float>(logical, shape, Sbp::partial_sum(), std::max(me, 0), 2)
                         .to_global(pair, Sbp::partial_sum());
    const Tensor last = p.to_global(Placement("cpu", {world_size() - 1}), Sbp::broadcast());
    if (rank() == world_size() - 1) {
      EXPECT_EQ(last.to_vector<float>(), logical);
    } else {
      EXPECT_EQ(last.to_local().numel(), 0);
    }
  }
}

TEST(GlobalTensorTest, AHangReportNeverCancelsACollective) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Shape shape({4, 2});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor local = tensor<float>(logical, shape, Device("cpu"));
  sync();
  auto& vm = vm::VirtualMachine::Get();
  const double saved = vm.wait_timeout();
  if (rank() == 0) {
    // Rank 0 gives up waiting for the shape exchange long before rank 1 arrives.
    ofl::vm::VmTesting::SetWaitTimeout(0.1);
    try {
      (void)local.to_global(p, Sbp::broadcast());
      ADD_FAILURE() << "no hang report";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("never cancelled"), std::string::npos) << e.what();
    }
    ofl::vm::VmTesting::SetWaitTimeout(saved);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    (void)local.to_global(p, Sbp::broadcast());
  }
  // The exchange rank 0 gave up on still ran: both ranks are in step for the next collectives.
  const Tensor g = local.to_global(p, Sbp::broadcast()).to_global(p, Sbp::split(1));
  EXPECT_EQ(g.to_vector<float>(), logical);
}

TEST(GlobalTensorTest, RanksOutsideThePlacementHoldNothing) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement first("cpu", {0});
  const Tensor g =
      tensor<int32_t>({1, 2, 3}, Shape({3}), Device("cpu")).to_global(first, Sbp::broadcast());
  EXPECT_EQ(g.shape(), Shape({3}));
  if (rank() == 0) {
    EXPECT_EQ(g.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  } else {
    EXPECT_EQ(g.to_local().numel(), 0);
    try {
      (void)g.to_vector<int32_t>();
      ADD_FAILURE() << "read on a rank outside the placement";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("outside the tensor's Placement"), std::string::npos)
          << e.what();
    }
  }
}

TEST(GlobalTensorTest, BadCallsAreClearErrorsOnEveryRankAndLeaveTheRuntimeWorking) {
  const Placement p = World();
  const Tensor g = empty(Shape({4, 2}), DType::kFloat32, p, Sbp::broadcast());
  ExpectInvalid([&] { (void)g.narrow(1, 0, 1); }, {"narrow", "global tensor", "Placement",
                                                   "with sbp B every rank's shard is the whole"});
  // A broadcast tensor is not advised to be boxed to broadcast.
  try {
    (void)g.narrow(1, 0, 1);
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).find("Sbp::broadcast()"), std::string::npos) << e.what();
  }
  const Tensor split = empty(Shape({2 * world_size(), 2}), DType::kFloat32, p, Sbp::split(0));
  ExpectInvalid([&] { (void)split.narrow(1, 0, 1); },
                {"narrow", "sbp S(0)", "to_global(placement, Sbp::broadcast()).to_local()"});
  ExpectInvalid([&] { (void)g.to(Device("sim:0")); }, {"to", "global tensor"});
  ExpectInvalid([&] { (void)g.to_global(p, Sbp::split(2)); }, {"to_global", "S(2)", "(4,2"});
  ExpectInvalid(
      [&] {
        (void)empty(Shape({4}), DType::kFloat32, Placement("cpu", {world_size()}),
                    Sbp::broadcast());
      },
      {"empty", "rank " + std::to_string(world_size()), "outside the world"});
  // A device type of the program's own has a backend but no collectives.
  static const bool registered = [] {
    register_device_backend("nocollectives", std::make_shared<HostMemoryBackend>());
    return true;
  }();
  (void)registered;
  ExpectInvalid(
      [&] {
        (void)empty(Shape({4}), DType::kFloat32, Placement("nocollectives", {0}), Sbp::broadcast());
      },
      {"empty", "device type 'nocollectives' is not supported for global tensors",
       "cpu placements move host memory with MPI", "cuda placements", "sim placements"});
  ExpectInvalid([] { (void)tensor<float>({1}, Shape({1}), Device("cpu")).placement(); },
                {"placement", "local"});
  // Shards that do not fit together: every rank sees every shape, so every rank throws.
  if (world_size() >= 2) {
    const int64_t cols = rank() == 0 ? 3 : 2;
    ExpectInvalid(
        [&] {
          (void)tensor<float>(std::vector<float>(cols, 1.f), Shape({1, cols}), Device("cpu"))
              .to_global(p, Sbp::split(0));
        },
        {"to_global", "do not fit together", "only the split axis may differ"});
  }
  const Tensor ok = tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(p, Sbp::broadcast());
  EXPECT_EQ(ok.to_vector<float>(), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace ofl::testing
