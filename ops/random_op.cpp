// random_: fills input 0 (a contiguous tensor) with draws of the "random" kernel
// (kernels/random.h): uniform, normal or integers, element i from Philox(seed, offset + i). The
// functions of oneflow_lite/random.h take the seed and offset from the generator of the device type
// at the call and check the arguments; nothing differentiates through a draw.
#include "ops/write_op.h"

namespace ofl::ops {
namespace {

OpSchema MakeRandomOp() {
  return MakeWriteOp("random_", "random",
                     {{"dist", AttrType::kInt},
                      {"seed", AttrType::kInt},
                      {"offset", AttrType::kInt},
                      {"a", AttrType::kDouble},
                      {"b", AttrType::kDouble},
                      {"low", AttrType::kInt},
                      {"span", AttrType::kInt}});
}
OFL_REGISTER_OP(MakeRandomOp);

}  // namespace
}  // namespace ofl::ops
