// The main of the multi-process suite (mpiexec -n N ofl_test_global): starts the process group
// before the tests and finalises it after, prints the full report from rank 0 only (set
// OFL_TEST_ALL_RANKS_PRINT=1 to see every rank's) but every rank's failures, prefixed with the
// rank, and exits non-zero on every rank when a test failed on any of them, so that mpiexec and
// CTest see the failure whichever rank had it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/collective/collectives.h"

namespace {

namespace collective = ofl::kernels::collective;

// Stands in for the default printer on the quiet ranks: failures only, each line with its rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n[rank %d] %s\n", rank_,
                 result.file_name() ? result.file_name() : "unknown", result.line_number(), rank_,
                 result.message());
    std::fflush(stderr);
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    std::fprintf(stderr, "[rank %d] [  FAILED  ] %s.%s\n", rank_, info.test_suite_name(),
                 info.name());
    std::fflush(stderr);
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  collective::InitProcessGroup();
  const int rank = collective::WorldRank();
  const char* all_print = std::getenv("OFL_TEST_ALL_RANKS_PRINT");
  if (rank != 0 && !(all_print && std::strcmp(all_print, "1") == 0)) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
#ifdef OFL_WITH_MPI
  // --gtest_shuffle must order the tests alike on every rank, or their collectives would not pair.
  if (::testing::FLAGS_gtest_shuffle && ::testing::FLAGS_gtest_random_seed == 0 &&
      collective::WorldSize() > 1) {
    int seed = static_cast<int>(std::time(nullptr) % 99999) + 1;
    MPI_Bcast(&seed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ::testing::FLAGS_gtest_random_seed = seed;
  }
#endif
  const int local_rc = RUN_ALL_TESTS();
  int rc = local_rc;
#ifdef OFL_WITH_MPI
  // A rank whose tests passed must still fail when another rank's did not.
  int mpi_up = 0;
  int mpi_down = 0;
  MPI_Initialized(&mpi_up);
  MPI_Finalized(&mpi_down);
  if (mpi_up && !mpi_down && collective::WorldSize() > 1) {
    MPI_Allreduce(&local_rc, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
#endif
  if (rank == 0 && rc != 0 && local_rc == 0) {
    std::fprintf(stderr,
                 "[rank 0] every test passed here but some failed on another rank (see "
                 "the [rank N] lines)\n");
  }
  collective::FinalizeProcessGroup();
  return rc;
}
