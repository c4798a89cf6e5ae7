// Autograd does not reach global tensors yet: each way in is an InvalidArgument with the same
// message on every rank, and the ranks stay in step (a collective afterwards still works).
#include <gtest/gtest.h>

#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

TEST(GlobalAutogradTest, EveryWayIntoAutogradIsRefusedOnEveryRank) {
  const Placement p = World();
  const Tensor local = tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
  const Tensor g = local.to_global(p, Sbp::broadcast());
  Tensor mutable_g = g;
  ExpectInvalid([&] { mutable_g.requires_grad_(); },
                {"requires_grad_", "autograd of global tensors is not supported yet"});
  ExpectInvalid([&] { g.backward(); },
                {"backward", "autograd of global tensors is not supported yet"});
  // Only rank 0's tensor requires grad: every rank refuses the conversion alike.
  Tensor leaf = tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
  if (rank() == 0) leaf.requires_grad_();
  ExpectInvalid([&] { (void)leaf.to_global(p, Sbp::broadcast()); },
                {"to_global", "autograd of global tensors is not supported yet"});
  {
    NoGradGuard no_grad;  // converting under the guard is allowed
    EXPECT_EQ(leaf.to_global(p, Sbp::broadcast()).to_vector<float>(),
              (std::vector<float>{1, 2, 3}));
  }
  EXPECT_EQ(leaf.detach().to_global(p, Sbp::broadcast()).to_vector<float>(),
            (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace ofl::testing
