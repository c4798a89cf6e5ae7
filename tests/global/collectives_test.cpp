// The collectives of kernels/collective/collectives.h against values computed locally: every rank
// derives every other rank's input from that rank's number, so each rank checks its own result.
// Every dtype, even and uneven counts, empty shards, placements that are not the world in order,
// and the errors, which must throw on every rank alike before any message (a rank that threw while
// the others communicate would hang the suite). Runs with any number of processes; a case that
// needs more ranks skips and says how many.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/collective/collectives.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective {
namespace {

// A bool element is one byte (0 or 1); std::vector<bool> is not an array of them.
template <class T>
using Elem = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <class T>
constexpr bool kIsHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T>
Elem<T> Make(int v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Neither 0 nor 1, so an element that was never written shows, bool included.
template <class T>
Elem<T> Sentinel() {
  return std::is_same_v<T, bool> ? Elem<T>(0xAB) : Make<T>(77);
}

template <class T>
std::vector<double> AsDoubles(const std::vector<Elem<T>>& v) {
  std::vector<double> out;
  for (const Elem<T>& e : v) {
    if constexpr (kIsHalf<T>) {
      out.push_back(static_cast<float>(e));
    } else {
      out.push_back(static_cast<double>(e));
    }
  }
  return out;
}

// Small integers: their sums over four ranks are exact in every dtype, int8 and bfloat16 included.
template <class T>
int Value(int rank, int64_t i, int salt) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rank + 1) * (i + salt + 1) % 3 != 0;  // often 1 on several ranks: a sum would be 2
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return static_cast<int>((rank * 7 + i * 3 + salt) % 11);
  } else {
    return static_cast<int>((rank * 7 + i * 3 + salt) % 11) - 5;
  }
}

template <class T>
std::vector<Elem<T>> Input(int rank, int64_t n, int salt, int64_t first = 0) {
  std::vector<Elem<T>> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(Make<T>(Value<T>(rank, first + i, salt)));
  return v;
}

// What a sum over `ranks` gives: a bool sum is a logical OR.
template <class T>
std::vector<Elem<T>> ExpectedSum(const std::vector<int>& ranks, int64_t n, int salt) {
  std::vector<Elem<T>> v;
  for (int64_t i = 0; i < n; ++i) {
    int sum = 0;
    for (int r : ranks) sum += Value<T>(r, i, salt);
    v.push_back(Make<T>(std::is_same_v<T, bool> ? sum > 0 : sum));
  }
  return v;
}

std::vector<int> World() {
  std::vector<int> ranks(WorldSize());
  for (int i = 0; i < WorldSize(); ++i) ranks[i] = i;
  return ranks;
}

int IndexOf(const std::vector<int>& ranks, int rank) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int64_t> Split(int64_t total, int64_t parts) {
  std::vector<int64_t> counts(parts, total / parts);
  for (int64_t i = 0; i < total % parts; ++i) ++counts[i];
  return counts;
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

template <class T>
std::string Where(const std::vector<int>& ranks, const std::vector<int64_t>& counts) {
  std::string s =
      "rank " + std::to_string(WorldRank()) + ", " + to_string(DTypeOf<T>::value) + ", ranks [";
  for (int r : ranks) s += std::to_string(r) + " ";
  s += "], counts [";
  for (int64_t c : counts) s += std::to_string(c) + " ";
  return s + "]";
}

enum class Counts { kEven, kUneven, kEmptyShards };

// Elements per placement: 4 each; 10 (11 where 10 splits evenly) as 3,3,2,2 over four ranks;
// n/2 so that some ranks hold nothing (1,1,0,0 over four).
std::vector<int64_t> CountsFor(Counts mode, int64_t n) {
  switch (mode) {
    case Counts::kEven:
      return Split(4 * n, n);
    case Counts::kUneven:
      return Split(10 % n == 0 ? 11 : 10, n);
    case Counts::kEmptyShards:
      return Split(n / 2, n);
  }
  return {};
}

// Elements that index j sends to index k in AllToAllV.
int64_t PairCount(Counts mode, int64_t j, int64_t k) {
  switch (mode) {
    case Counts::kEven:
      return 2;
    case Counts::kUneven:
      return (j + 2 * k) % 3 + 1;
    case Counts::kEmptyShards:
      return (j + k) % 2;
  }
  return 0;
}

template <class T>
void CheckAllGatherV(const std::vector<int>& ranks, const std::vector<int64_t>& counts) {
  const int me = IndexOf(ranks, WorldRank());
  const std::vector<Elem<T>> send = Input<T>(ranks[me], counts[me], 1);
  std::vector<Elem<T>> recv(Sum(counts), Sentinel<T>());
  AllGatherV(send.data(), counts[me], recv.data(), counts, DTypeOf<T>::value, ranks);
  std::vector<Elem<T>> expected;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::vector<Elem<T>> part = Input<T>(ranks[i], counts[i], 1);
    expected.insert(expected.end(), part.begin(), part.end());
  }
  EXPECT_EQ(AsDoubles<T>(recv), AsDoubles<T>(expected))
      << "AllGatherV, " << Where<T>(ranks, counts);
}

template <class T>
void CheckAllReduceSum(const std::vector<int>& ranks, int64_t count) {
  const std::vector<Elem<T>> send = Input<T>(WorldRank(), count, 2);
  std::vector<Elem<T>> recv(count, Sentinel<T>());
  AllReduceSum(send.data(), recv.data(), count, DTypeOf<T>::value, ranks);
  const std::vector<double> expected = AsDoubles<T>(ExpectedSum<T>(ranks, count, 2));
  EXPECT_EQ(AsDoubles<T>(recv), expected) << "AllReduceSum, " << Where<T>(ranks, {count});
  std::vector<Elem<T>> buf = send;
  AllReduceSum(buf.data(), buf.data(), count, DTypeOf<T>::value, ranks);
  EXPECT_EQ(AsDoubles<T>(buf), expected) << "AllReduceSum in place, " << Where<T>(ranks, {count});
}

template <class T>
void CheckReduceScatterSum(const std::vector<int>& ranks, const std::vector<int64_t>& counts) {
  const int me = IndexOf(ranks, WorldRank());
  const int64_t total = Sum(counts);
  const std::vector<Elem<T>> send = Input<T>(WorldRank(), total, 3);
  std::vector<Elem<T>> recv(counts[me], Sentinel<T>());
  ReduceScatterSum(send.data(), recv.data(), counts, DTypeOf<T>::value, ranks);
  const std::vector<Elem<T>> sum = ExpectedSum<T>(ranks, total, 3);
  int64_t first = 0;
  for (int i = 0; i < me; ++i) first += counts[i];
  const std::vector<Elem<T>> expected(sum.begin() + first, sum.begin() + first + counts[me]);
  EXPECT_EQ(AsDoubles<T>(recv), AsDoubles<T>(expected))
      << "ReduceScatterSum, " << Where<T>(ranks, counts);
}

// The send blocks lie in reverse order and both sides leave a one-element gap after each block:
// the displacements are honoured, and the gaps stay untouched.
template <class T>
void CheckAllToAllV(const std::vector<int>& ranks, Counts mode) {
  const int64_t n = static_cast<int64_t>(ranks.size());
  const int me = IndexOf(ranks, WorldRank());
  std::vector<int64_t> send_counts(n), send_displs(n), recv_counts(n), recv_displs(n);
  int64_t at = 0;
  for (int64_t k = n - 1; k >= 0; --k) {
    send_counts[k] = PairCount(mode, me, k);
    send_displs[k] = at;
    at += send_counts[k] + 1;
  }
  std::vector<Elem<T>> send(at, Sentinel<T>());
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<Elem<T>> block = Input<T>(ranks[me], send_counts[k], 4, 100 * k);
    std::copy(block.begin(), block.end(), send.begin() + send_displs[k]);
  }
  at = 0;
  for (int64_t j = 0; j < n; ++j) {
    recv_counts[j] = PairCount(mode, j, me);
    recv_displs[j] = at;
    at += recv_counts[j] + 1;
  }
  std::vector<Elem<T>> recv(at, Sentinel<T>());
  std::vector<Elem<T>> expected(at, Sentinel<T>());
  for (int64_t j = 0; j < n; ++j) {
    const std::vector<Elem<T>> block = Input<T>(ranks[j], recv_counts[j], 4, 100 * me);
    std::copy(block.begin(), block.end(), expected.begin() + recv_displs[j]);
  }
  AllToAllV(send.data(), send_counts, send_displs, recv.data(), recv_counts, recv_displs,
            DTypeOf<T>::value, ranks);
  EXPECT_EQ(AsDoubles<T>(recv), AsDoubles<T>(expected))
      << "AllToAllV, " << Where<T>(ranks, recv_counts);
}

template <class T>
void CheckBroadcast(const std::vector<int>& ranks, int64_t count) {
  const int root = static_cast<int>(ranks.size()) - 1;
  const std::vector<Elem<T>> data = Input<T>(ranks[root], count, 5);
  std::vector<Elem<T>> buf =
      WorldRank() == ranks[root] ? data : std::vector<Elem<T>>(count, Sentinel<T>());
  Broadcast(buf.data(), count, DTypeOf<T>::value, root, ranks);
  EXPECT_EQ(AsDoubles<T>(buf), AsDoubles<T>(data)) << "Broadcast, " << Where<T>(ranks, {count});
}

// Every collective over `ranks`; a rank outside the placement calls nothing.
template <class T>
void CheckAll(const std::vector<int>& ranks, Counts mode) {
  if (IndexOf(ranks, WorldRank()) < 0) return;
  const std::vector<int64_t> counts = CountsFor(mode, static_cast<int64_t>(ranks.size()));
  CheckAllGatherV<T>(ranks, counts);
  CheckAllReduceSum<T>(ranks, Sum(counts));
  CheckReduceScatterSum<T>(ranks, counts);
  CheckAllToAllV<T>(ranks, mode);
  CheckBroadcast<T>(ranks, Sum(counts));
}

template <class T>
void CheckAllModes(const std::vector<int>& ranks) {
  for (Counts mode : {Counts::kEven, Counts::kUneven, Counts::kEmptyShards})
    CheckAll<T>(ranks, mode);
}

template <class T>
class CollectivesTest : public ::testing::Test {};

struct DTypeNames {
  template <class T>
  static std::string GetName(int) {
    return to_string(DTypeOf<T>::value);
  }
};

using AllDTypes = ::testing::Types<bool, uint8_t, int8_t, int16_t, int32_t, int64_t, float16,
                                   bfloat16, float, double>;
TYPED_TEST_SUITE(CollectivesTest, AllDTypes, DTypeNames);

TYPED_TEST(CollectivesTest, WorldEvenCounts) { CheckAll<TypeParam>(World(), Counts::kEven); }

TYPED_TEST(CollectivesTest, WorldUnevenCounts) { CheckAll<TypeParam>(World(), Counts::kUneven); }

TYPED_TEST(CollectivesTest, WorldEmptyShards) {
  CheckAll<TypeParam>(World(), Counts::kEmptyShards);
}

// The list order is the parallel index: index 0 is world rank 1 here.
TYPED_TEST(CollectivesTest, ReversedPair) {
  if (WorldSize() < 2) GTEST_SKIP() << "the placement {1, 0} needs 2 processes";
  CheckAllModes<TypeParam>({1, 0});
  if (WorldSize() >= 3) CheckAllModes<TypeParam>({2, 1, 0});
}

// Ranks outside the placement call nothing and go on.
TYPED_TEST(CollectivesTest, SubsetOfTheWorld) {
  if (WorldSize() < 3) GTEST_SKIP() << "the placement {0, 2} needs 3 processes";
  CheckAllModes<TypeParam>({0, 2});
  if (WorldSize() >= 4) CheckAllModes<TypeParam>({3, 1, 2});
}

// One rank of the world: the local copy, on whichever rank it is.
TYPED_TEST(CollectivesTest, SingleRankPlacement) { CheckAllModes<TypeParam>({WorldSize() - 1}); }

TEST(ProcessGroupTest, WorldMatchesTheLauncher) {
  EXPECT_TRUE(ProcessGroupInitialized());
  ASSERT_GE(WorldSize(), 1);
  EXPECT_GE(WorldRank(), 0);
  EXPECT_LT(WorldRank(), WorldSize());
#ifdef OFL_WITH_MPI
  EXPECT_TRUE(BuiltWithMpi());
  int size = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(WorldSize(), size);
  EXPECT_EQ(WorldRank(), rank);
#else
  EXPECT_FALSE(BuiltWithMpi());
  EXPECT_EQ(WorldSize(), 1);
#endif
}

// The sum of two halves is rounded once, to nearest even: 1024 + 1.5 is 1026 in float16 (whose
// step there is 1) and 256 + 1.5 is 258 in bfloat16 (step 2); a truncating or bitwise sum is not.
TEST(ProcessGroupTest, HalfSumsRoundToNearestEven) {
  if (WorldSize() < 2) GTEST_SKIP() << "a sum of two halves needs 2 processes";
  const std::vector<int> pair = {0, 1};
  if (WorldRank() > 1) return;
  float16 h = WorldRank() == 0 ? float16(1024.0f) : float16(1.5f);
  AllReduceSum(&h, &h, 1, DType::kFloat16, pair);
  EXPECT_EQ(static_cast<float>(h), 1026.0f);
  bfloat16 b = WorldRank() == 0 ? bfloat16(256.0f) : bfloat16(1.5f);
  AllReduceSum(&b, &b, 1, DType::kBFloat16, pair);
  EXPECT_EQ(static_cast<float>(b), 258.0f);
}

// The type and message of what `fn` throws: an exact ofl::Error (not an InvalidArgument) when
// `exact_error`, and every part of `parts` in the message.
template <class E, class F>
void ExpectThrows(F&& fn, const std::vector<std::string>& parts, bool exact_error = false) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one naming " << parts[0];
  } catch (const E& e) {
    if (exact_error) {
      EXPECT_EQ(dynamic_cast<const InvalidArgument*>(&e), nullptr) << e.what();
    }
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// Every rank makes every call and each throws before any message, so the ranks stay in step.
TEST(CollectiveErrorsTest, CountAboveIntMaxNamesTheCollective) {
  const std::vector<int> world = World();
  const int n = WorldSize();
  const int me = WorldRank();
  const int64_t big = int64_t{INT_MAX} + 1;
  ExpectThrows<Error>([&] { AllReduceSum(nullptr, nullptr, big, DType::kFloat32, world); },
                      {"AllReduceSum", "2147483648", "INT_MAX"}, true);
  ExpectThrows<Error>([&] { Broadcast(nullptr, big, DType::kInt64, 0, world); },
                      {"Broadcast", "2147483648"}, true);
  // Each count fits but their sum (the last displacement) does not.
  const std::vector<int64_t> counts(n, int64_t{INT_MAX} / n + 1);
  ExpectThrows<Error>(
      [&] { AllGatherV(nullptr, counts[me], nullptr, counts, DType::kUInt8, world); },
      {"AllGatherV", "INT_MAX"}, true);
  ExpectThrows<Error>([&] { ReduceScatterSum(nullptr, nullptr, counts, DType::kFloat16, world); },
                      {"ReduceScatterSum", "INT_MAX"}, true);
  const std::vector<int64_t> huge(n, big), zeros(n, 0);
  ExpectThrows<Error>(
      [&] { AllToAllV(nullptr, huge, zeros, nullptr, zeros, zeros, DType::kBool, world); },
      {"AllToAllV", "send_counts[0] 2147483648"}, true);
}

TEST(CollectiveErrorsTest, RankOutsideTheWorldIsInvalidArgument) {
  const int n = WorldSize();
  const std::vector<int> ranks = {0, n};
  const std::string outside = "rank " + std::to_string(n) + " is outside the world of " +
                              std::to_string(n) + " process(es)";
  const std::vector<int64_t> counts = {1, 1};
  int buf[2] = {0, 0};
  ExpectThrows<InvalidArgument>([&] { AllReduceSum(buf, buf, 2, DType::kInt32, ranks); },
                                {"AllReduceSum", outside});
  ExpectThrows<InvalidArgument>([&] { AllGatherV(buf, 1, buf, counts, DType::kInt32, ranks); },
                                {"AllGatherV", outside});
  ExpectThrows<InvalidArgument>([&] { ReduceScatterSum(buf, buf, counts, DType::kInt32, ranks); },
                                {"ReduceScatterSum", outside});
  ExpectThrows<InvalidArgument>(
      [&] {
        AllToAllV(buf, counts, {0, 1}, buf, counts, {0, 1}, DType::kInt32, ranks);
      },
      {"AllToAllV", outside});
  ExpectThrows<InvalidArgument>([&] { Broadcast(buf, 2, DType::kInt32, 0, ranks); },
                                {"Broadcast", outside});
  ExpectThrows<InvalidArgument>([&] { AllReduceSum(buf, buf, 2, DType::kInt32, {-1}); },
                                {"rank -1 is outside"});
}

TEST(CollectiveErrorsTest, BadArgumentsAreInvalidArgument) {
  const std::vector<int> world = World();
  const int n = WorldSize();
  const int me = WorldRank();
  std::vector<int64_t> buf(8 * n, 0);
  const std::vector<int64_t> ones(n, 1);
  ExpectThrows<InvalidArgument>(
      [&] {
        AllGatherV(buf.data(), 1, buf.data(), std::vector<int64_t>(n + 1, 1), DType::kInt64, world);
      },
      {"AllGatherV", "entries"});
  ExpectThrows<InvalidArgument>(
      [&] { AllGatherV(buf.data(), 2, buf.data(), ones, DType::kInt64, world); },
      {"AllGatherV", "send_count 2 differs from counts[" + std::to_string(me) + "]"});
  ExpectThrows<InvalidArgument>(
      [&] { AllReduceSum(buf.data(), buf.data(), -3, DType::kInt64, world); },
      {"AllReduceSum", "count -3 is negative"});
  ExpectThrows<InvalidArgument>([&] { Broadcast(buf.data(), 1, DType::kInt64, n, world); },
                                {"Broadcast", "root_index"});
  ExpectThrows<InvalidArgument>(
      [&] {
        AllReduceSum(buf.data(), buf.data(), 1, DType::kInt64, {me, me});
      },
      {"AllReduceSum", "appears twice"});
  ExpectThrows<InvalidArgument>([&] { AllReduceSum(buf.data(), buf.data(), 1, DType::kInt64, {}); },
                                {"empty"});
  // A one-rank AllToAllV sends itself what it receives.
  ExpectThrows<InvalidArgument>(
      [&] { AllToAllV(buf.data(), {2}, {0}, buf.data(), {1}, {0}, DType::kInt64, {me}); },
      {"AllToAllV", "sends itself 2"});
  if (n >= 2) {
    ExpectThrows<InvalidArgument>(
        [&] { AllReduceSum(buf.data(), buf.data(), 1, DType::kInt64, {(me + 1) % n}); },
        {"AllReduceSum", "not in the placement"});
  }
}

// After every rank threw, the next collective still pairs up.
TEST(CollectiveErrorsTest, RanksStayInStepAfterErrors) {
  EXPECT_THROW(AllReduceSum(nullptr, nullptr, -1, DType::kInt32, World()), InvalidArgument);
  int v = WorldRank() + 1;
  AllReduceSum(&v, &v, 1, DType::kInt32, World());
  EXPECT_EQ(v, WorldSize() * (WorldSize() + 1) / 2);
}

// Two threads (two devices' collective stream workers) run collectives on different placements at
// once, creating the second placement's communicator while the first one is in use.
TEST(ProcessGroupTest, TwoThreadsOnDifferentPlacements) {
  if (WorldSize() < 2) GTEST_SKIP() << "two placements need 2 processes";
#ifdef OFL_WITH_MPI
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "MPI gave less than MPI_THREAD_MULTIPLE";
#endif
  const int n = WorldSize();
  std::vector<int> rotated;
  for (int i = 0; i < n; ++i) rotated.push_back((i + 1) % n);
  const std::vector<std::vector<int>> placements = {World(), rotated};
  std::vector<int64_t> results(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        int64_t v = WorldRank() + t + i;
        AllReduceSum(&v, &v, 1, DType::kInt64, placements[t]);
        results[t] += v;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 2; ++t) {
    int64_t expected = 0;
    for (int i = 0; i < 20; ++i) expected += int64_t{n} * (n - 1) / 2 + int64_t{n} * (t + i);
    EXPECT_EQ(results[t], expected) << "placement " << t;
  }
}

// Finalising ends the group for good: a second finalize is a no-op, a collective afterwards throws.
// In a child process (re-executed, so it starts its own process group), hence outside mpiexec only.
TEST(ProcessGroupDeathTest, CollectivesThrowAfterFinalize) {
  if (WorldSize() > 1 || std::getenv("OMPI_COMM_WORLD_SIZE")) {
    GTEST_SKIP() << "the child process needs a one-process run outside mpiexec";
  }
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        FinalizeProcessGroup();
        FinalizeProcessGroup();
        if (ProcessGroupInitialized()) std::exit(2);
        int v = 1;
        try {
          AllReduceSum(&v, &v, 1, DType::kInt32, {0});
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(0);
        }
        std::exit(3);
      },
      ::testing::ExitedWithCode(0),
      "AllReduceSum over ranks \\[0\\].*the process group was finalized \\(ofl::shutdown\\)");
}

}  // namespace
}  // namespace ofl::kernels::collective
