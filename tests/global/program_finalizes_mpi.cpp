// A program that ends as MPI programs do: MPI_Finalize() while the runtime is still up, with
// global work done and a collective still in flight, and ofl::shutdown() (here: the exit hook)
// after it. MPI_Finalize hooks the runtime (kernels/collective/collectives.h): the collectives
// issued before it run, the watchdog thread stops before MPI goes (its next MPI_Iprobe would abort
// the job), a global op afterwards throws ofl::Error naming MPI_Finalize, and local work still
// runs. CTest runs it under mpiexec (global.program_finalizes_mpi); it prints "ok" and exits 0.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ofl::init_distributed();
  const int n = ofl::world_size();
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(r);
  const ofl::Placement p("cpu", ranks);
  const ofl::Tensor g = ofl::tensor<float>({1.f, 2.f}, ofl::Shape({1, 2}), ofl::Device("cpu"))
                            .to_global(p, ofl::Sbp::split(0))
                            .to_global(p, ofl::Sbp::broadcast());
  bool ok = g.to_vector<float>().size() == static_cast<size_t>(2 * n);
  // Issued, not waited for: MPI_Finalize lets it run first.
  const ofl::Tensor pending =
      g.to_global(p, ofl::Sbp::split(1)).to_global(p, ofl::Sbp::broadcast());
  MPI_Finalize();
  // Long enough for a watchdog still polling (every 50 ms) to call MPI after MPI_Finalize.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::vector<float> got = pending.to_vector<float>();
  ok = ok && got == g.to_vector<float>();
  bool refused = false;
  try {
    (void)g.to_global(p, ofl::Sbp::split(0)).to_global(p, ofl::Sbp::broadcast()).to_vector<float>();
  } catch (const ofl::Error& e) {
    refused = n == 1 || std::string(e.what()).find("MPI_Finalize") != std::string::npos;
    if (!refused) std::printf("rank %d: unexpected error: %s\n", ofl::rank(), e.what());
  }
  if (n == 1) refused = true;  // one process: no MPI collectives at all
  const std::vector<float> local =
      ofl::tensor<float>({1.f, 2.f}, ofl::Shape({2}), ofl::Device("cpu"))
          .repeat({2})
          .to_vector<float>();
  ok = ok && refused && local == std::vector<float>({1.f, 2.f, 1.f, 2.f});
  if (ok) std::printf("ok (rank %d)\n", ofl::rank());
  return ok ? 0 : 1;
}
