// A program that initialises MPI itself: ofl::init_distributed() uses that MPI, ofl::shutdown()
// joins the runtime without finalising it, and the program's own MPI calls and MPI_Finalize still
// work afterwards. CTest runs it under mpiexec (examples.program_owns_mpi); it prints "ok" on
// success.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ofl::init_distributed();
  std::vector<int> ranks;
  for (int r = 0; r < ofl::world_size(); ++r) ranks.push_back(r);
  const ofl::Placement p("cpu", ranks);
  const ofl::Tensor g = ofl::tensor<float>({1.f, 2.f}, ofl::Shape({1, 2}), ofl::Device("cpu"))
                            .to_global(p, ofl::Sbp::split(0))
                            .to_global(p, ofl::Sbp::broadcast());
  const std::vector<float> values = g.to_vector<float>();
  ofl::shutdown();  // before MPI_Finalize: must leave the program's MPI alone
  int finalized = 1;
  MPI_Finalized(&finalized);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const bool ok = finalized == 0 && sum == ofl::world_size() &&
                  values.size() == static_cast<size_t>(2 * ofl::world_size());
  bool later_call_refused = false;
  try {
    (void)ofl::tensor<float>({1.f}, ofl::Shape({1}), ofl::Device("cpu")).to_vector<float>();
  } catch (const ofl::Error&) {
    later_call_refused = true;
  }
  MPI_Finalize();
  if (ok && later_call_refused) std::printf("ok (rank %d)\n", ofl::rank());
  return ok && later_call_refused ? 0 : 1;
}
