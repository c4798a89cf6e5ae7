// OFL_CHECK_COLLECTIVES=1: ranks that issue different collectives at the same point of their
// programs get the same error on every rank, naming both sides, instead of a hang or garbage; and
// they stay in step for the next collective. (CTest runs the suite with the switch on as
// global.mpi_3_checked; without it this test skips.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

TEST(CollectiveCheckTest, OutOfStepCollectivesThrowOnEveryRankNamingBothSides) {
  const char* on = std::getenv("OFL_CHECK_COLLECTIVES");
  if (on == nullptr || std::string(on) == "0") {
    GTEST_SKIP() << "needs OFL_CHECK_COLLECTIVES=1 (CTest: global.mpi_3_checked)";
  }
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  const Shape shape({4, 2});
  const std::vector<float> logical = Logical<float>(shape);
  const int me = p.index_of(rank());
  // Rank 0 gathers a split tensor; the others all-reduce a partial sum.
  const Sbp from = rank() == 0 ? Sbp::split(0) : Sbp::partial_sum();
  const Tensor x = LocalPiece<float>(logical, shape, Sbp::broadcast(), me, p.size())
                       .to_global(p, Sbp::broadcast())
                       .to_global(p, from);  // local slices / zeros: no communication
  try {
    (void)x.to_global(p, Sbp::broadcast()).to_local().to_vector<float>();
    ADD_FAILURE() << "out-of-step collectives were not reported";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const char* piece : {"out of step", "rank 0 issued collective #", "boxing S->B",
                              "boxing P->B", "S(0) -> B", "P -> B"}) {
      EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg;
    }
  }
  // Every rank skipped the mismatched collective: the next one lines up again.
  const Tensor b = tensor<float>(logical, shape, Device("cpu"))
                       .to_global(p, Sbp::broadcast())
                       .to_global(p, Sbp::partial_sum())
                       .to_global(p, Sbp::split(1));
  EXPECT_EQ(b.to_vector<float>(), logical);
}

}  // namespace
}  // namespace ofl::testing
