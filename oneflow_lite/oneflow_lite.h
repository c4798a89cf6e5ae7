// The umbrella header: everything a user of oneflow_lite needs.
#pragma once

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/device.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/memory.h"
#include "oneflow_lite/memory_stats.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"
#include "oneflow_lite/trace.h"
#include "oneflow_lite/wait_hooks.h"
