#include "ops/write_op.h"

#include <utility>
#include <vector>

namespace ofl::ops {

OpSchema MakeWriteOp(const char* name, const char* kernel, AttrSchema attrs) {
  OpSchema op;
  op.name = name;
  op.num_inputs = 1;
  op.attrs = std::move(attrs);
  op.form = InPlaceForm{/*kernel=*/kernel, /*reads_target=*/false, /*node_op=*/""};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    return std::vector<TensorMeta>{in[0]};
  };
  op.backward = [](const GradContext&, const std::vector<Tensor>&) {
    return std::vector<Tensor>(1);
  };
  return op;
}

}  // namespace ofl::ops
