// Global tensors on cuda placements: NCCL moves the shards between the ranks' GPUs (each rank uses
// the GPU of its node-local rank). Without a GPU, or in a build without NCCL, every rank gets the
// same clear error before any message and the runtime keeps working; with a GPU (tools/
// gpu_check.sh, or one GPU shared by every rank) every boxing pair keeps the logical value, as on
// cpu placements.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "kernels/collective/nccl_collectives.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

Placement CudaWorld() { return Placement("cuda", World().ranks()); }

bool CudaPlacementsWork() {
  return kernels::collective::BuiltWithNccl() && device_count(DeviceType::kCUDA) > 0;
}

// The GPU this rank's shards live on (the node-local rank modulo the GPUs present).
Device MyGpu() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const int r = local != nullptr ? std::atoi(local) : rank();
  return Device(DeviceType::kCUDA, r % device_count(DeviceType::kCUDA));
}

TEST(CudaPlacementTest, WithoutAGpuOrNcclEveryRankGetsTheSameClearError) {
  if (CudaPlacementsWork()) GTEST_SKIP() << "NCCL and a GPU are present";
  const Placement p = CudaWorld();
  try {
    (void)empty(Shape({4, 2}), DType::kFloat32, p, Sbp::split(0));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("empty: Placement(type=\"cuda\""), std::string::npos) << msg;
    if (kernels::collective::BuiltWithNccl()) {
      EXPECT_NE(dynamic_cast<const DeviceError*>(&e), nullptr) << msg;
      EXPECT_NE(msg.find("no CUDA device is available"), std::string::npos) << msg;
    } else {
      EXPECT_NE(dynamic_cast<const InvalidArgument*>(&e), nullptr) << msg;
      EXPECT_NE(msg.find("built without"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(
      (void)tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(p, Sbp::broadcast()), Error);
  // Nothing was issued: the ranks are still in step on cpu placements.
  const Tensor ok =
      tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(World(), Sbp::broadcast());
  EXPECT_EQ(ok.to_vector<float>(), (std::vector<float>{1, 2}));
}

template <class T>
void CheckEveryBoxingPairOnGpus(const Shape& shape) {
  const Placement p = CudaWorld();
  const int n = p.size(), me = p.index_of(rank());
  const std::vector<T> logical = Logical<T>(shape);
  for (const Sbp& from : AllSbps(shape)) {
    const Tensor g = LocalPiece<T>(logical, shape, from, me, n).to(MyGpu()).to_global(p, from);
    ASSERT_EQ(g.to_local().device(), MyGpu());
    for (const Sbp& to : AllSbps(shape)) {
      SCOPED_TRACE(from.str() + " -> " + to.str() + " on " + shape.str());
      const Tensor b = g.to_global(p, to);
      EXPECT_EQ(b.sbp(), to);
      EXPECT_EQ(b.to_local().device(), MyGpu());
      EXPECT_EQ(b.to_vector<T>(), logical);
    }
  }
}

TEST(CudaPlacementTest, EveryBoxingPairKeepsTheLogicalValue) {
  if (!CudaPlacementsWork()) {
    GTEST_SKIP() << (kernels::collective::BuiltWithNccl()
                         ? device_unavailable_reason(DeviceType::kCUDA)
                         : std::string("built without NCCL"));
  }
  for (const Shape& s : {Shape({8, 4}), Shape({5, 3}), Shape({1, 3})}) {
    CheckEveryBoxingPairOnGpus<float>(s);
  }
  CheckEveryBoxingPairOnGpus<int64_t>(Shape({5, 3}));
  CheckEveryBoxingPairOnGpus<float16>(Shape({6, 5}));
  CheckEveryBoxingPairOnGpus<bool>(Shape({5, 2}));
}

TEST(CudaPlacementTest, GlobalExpandAndItsBackwardMatchTheLocalComputation) {
  if (!CudaPlacementsWork()) GTEST_SKIP() << "needs NCCL and a GPU";
  const Placement p = CudaWorld();
  const Shape shape({4, 1});
  const std::vector<float> logical = Logical<float>(shape);
  const Tensor x = tensor<float>(logical, shape, MyGpu()).to_global(p, Sbp::broadcast());
  const Tensor y = x.to_global(p, Sbp::split(0)).expand({4, 6});
  const Tensor want = tensor<float>(logical, shape, Device("cpu")).expand({4, 6}).contiguous();
  EXPECT_EQ(y.to_vector<float>(), want.to_vector<float>());
  const Tensor dx = expand_backward(y.contiguous(), Shape({4, 1}));
  EXPECT_EQ(dx.to_vector<float>(), expand_backward(want, Shape({4, 1})).to_vector<float>());
}

TEST(CudaPlacementTest, AnInt16SumIsRefusedAtTheCall) {
  if (!CudaPlacementsWork()) GTEST_SKIP() << "needs NCCL and a GPU";
  const Placement p = CudaWorld();
  const Tensor x = tensor<int16_t>({1, 2}, Shape({2}), MyGpu()).to_global(p, Sbp::partial_sum());
  ExpectInvalid([&] { (void)x.to_global(p, Sbp::broadcast()); }, {"to_global", "int16", "NCCL"});
  const Tensor ok = tensor<float>({1, 2}, Shape({2}), MyGpu()).to_global(p, Sbp::broadcast());
  EXPECT_EQ(ok.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(CudaPlacementTest, APlacementChangeKeepsTheDeviceType) {
  if (!CudaPlacementsWork()) GTEST_SKIP() << "needs NCCL and a GPU";
  const Tensor x =
      tensor<float>({1, 2}, Shape({2}), Device("cpu")).to_global(World(), Sbp::broadcast());
  ExpectInvalid([&] { (void)x.to_global(CudaWorld(), Sbp::broadcast()); },
                {"to_global", "keeps the device type", "to_local().to(device)"});
}

}  // namespace
}  // namespace ofl::testing
