// A global-tensor program: run it on 4 processes with
//   mpiexec -n 4 build/tools/examples/global/ofl_example_global
// (as root add --allow-run-as-root; on fewer cores add --oversubscribe). Every rank runs the same
// code; rank 0 prints.
#include <cstdio>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

int main() {
  ofl::init_distributed();
  std::vector<int> ranks;
  for (int r = 0; r < ofl::world_size(); ++r) ranks.push_back(r);
  const ofl::Placement placement("cpu", ranks);

  // OneFlow's expand example: logical (4,3,1,2), split on its last dim. Each rank passes its own
  // shard (4,3,1,1): the logical value is 0..23 in row-major order.
  const int me = ofl::rank();
  std::vector<float> shard;
  for (int i = 0; i < 12; ++i) shard.push_back(static_cast<float>(2 * i + me % 2));
  const ofl::Tensor x = ofl::tensor<float>(shard, ofl::Shape({4, 3, 1, 1}), ofl::Device("cpu"))
                            .to_global(ofl::Placement("cpu", {0, 1}), ofl::Sbp::split(3));

  // Only ranks 0 and 1 hold x (a placement of two). Broadcast it to every rank, then expand: the
  // split moves to dim 4, each rank expands its own shard, nothing is communicated.
  const ofl::Tensor y = x.to_global(ofl::Placement("cpu", {0, 1}), ofl::Sbp::broadcast());
  const ofl::Tensor w = y.expand({2, 4, 3, 4, 2});
  const ofl::Tensor z = w.to_global(ofl::Placement("cpu", {0, 1}), ofl::Sbp::split(4));
  std::vector<float> values;  // the logical values, readable where the tensor lives
  if (z.placement().contains(me)) values = z.to_vector<float>();

  // A tensor over the whole world: split rows, boxed to a partial sum (own rows in zeros) and
  // back to broadcast (an all-reduce).
  const ofl::Tensor g =
      ofl::tensor<float>(std::vector<float>(6, 1.f + me), ofl::Shape({2, 3}), ofl::Device("cpu"))
          .to_global(placement, ofl::Sbp::split(0));
  const ofl::Tensor total =
      g.to_global(placement, ofl::Sbp::partial_sum()).to_global(placement, ofl::Sbp::broadcast());
  const std::vector<float> rows = total.to_vector<float>();

  if (me == 0) {
    std::printf("world of %d rank(s); x %s %s on %s\n", ofl::world_size(), x.shape().str().c_str(),
                x.sbp().str().c_str(), x.placement().str().c_str());
    std::printf("expand -> %s %s: %zu values, first %g, last %g\n", w.shape().str().c_str(),
                w.sbp().str().c_str(), values.size(), values.front(), values.back());
    std::printf("g %s %s: first row sum %g\n", g.shape().str().c_str(), g.sbp().str().c_str(),
                rows[0] + rows[1] + rows[2]);
  }
  ofl::shutdown();  // joins the runtime and finalises MPI
  return 0;
}
