// The in-place ops that only write their tensor, never read it: fill_ and zero_ (the "fill"
// kernel), range_ (arange, linspace) and random_ (the random draws). Each is the kernel `kernel`
// with the op's attributes into input 0's own view; no gradient flows through the write.
#pragma once

#include "ops/op_schema.h"

namespace ofl::ops {

OpSchema MakeWriteOp(const char* name, const char* kernel, AttrSchema attrs);

}  // namespace ofl::ops
