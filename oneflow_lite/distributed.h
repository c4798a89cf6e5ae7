// Global tensors across processes, OneFlow's consistent view: a program launched on several ranks
// (`mpiexec -n 4 ./app`) sees a global tensor as one logical tensor laid out over a Placement's
// ranks by an Sbp (split / broadcast / partial_sum); each rank holds its physical shard. Every
// rank runs the same calls in the same order. The collectives are MPI's (OpenMPI) for cpu
// placements; a build without MPI, or a program not started by mpiexec, is a world of one process.
#pragma once

#include <string>

#include "oneflow_lite/dtype.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/scalar.h"
#include "oneflow_lite/shape.h"
#include "oneflow_lite/tensor.h"

namespace ofl {

// Reads the MPI environment (initialises MPI unless the program did); idempotent. ofl::shutdown()
// finalises MPI if this call initialised it.
void init_distributed();
// This process's rank and the number of processes: 0 and 1 when not launched under MPI.
int rank();
int world_size();
// Ends every rank of the job at once because this one cannot go on (an exception nothing caught,
// while the other ranks may be waiting for this one inside a collective: a normal exit would then
// wait for them in MPI_Finalize until the hang timeout, or forever). Logs `why` naming this rank,
// tells the other ranks (each logs which rank ended the job, and why), then MPI_Abort: mpiexec
// ends the job with a non-zero status. Python's package calls it when the program ends with an
// uncaught exception; a C++ program calls it from its own handler, e.g. around main's body:
//   catch (const std::exception& e) { ofl::abort_job(e.what()); throw; }
// Returns, doing nothing, when there is no job to end (one process, or before init_distributed).
void abort_job(const std::string& why);

// A global tensor of the given logical shape whose shards are allocated (not initialised) on the
// placement's ranks; ranks outside the placement hold an empty shard.
Tensor empty(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp);
// The same, filled: every element of the logical tensor `value` (partial_sum: the first rank of
// the placement holds it, the others zeros), made by each rank alone.
Tensor full(const Shape& logical, Scalar value, DType dtype, const Placement& placement,
            const Sbp& sbp);
Tensor zeros(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp);
Tensor ones(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp);
// Uniform in [0, 1) / standard normal: the numbers the local rand / randn of the whole logical
// shape draws (the same seed and order of calls), whatever the SBP and the rank count; each rank
// draws the whole tensor and keeps its shard (partial_sum is refused: a random sum has no shards).
Tensor rand(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp);
Tensor randn(const Shape& logical, DType dtype, const Placement& placement, const Sbp& sbp);

}  // namespace ofl
