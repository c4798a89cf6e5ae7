// Tests that several threads can issue ops into the one VM at the same time: each thread runs its
// own expand / contiguous / repeat / backward chains (and reads a tensor shared by all) and checks
// every result it reads back; nothing is lost, mixed up or reported as an error. Runs on
// VmTestDevice().
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"

namespace ofl {
namespace {

using vm::testing::VmTestDevice;

constexpr int kThreads = 4;
constexpr int kIterations = 150;

// What one thread checked, reported back to the main thread.
struct IssuerReport {
  int iterations_done = 0;
  int mismatches = 0;
  std::string first_mismatch;
  std::string exception;
};

void Note(IssuerReport* report, const std::string& what) {
  if (report->mismatches++ == 0) report->first_mismatch = what;
}

void IssueChains(int thread, const Tensor& shared, const std::vector<float>& shared_values,
                 IssuerReport* report) {
  try {
    for (int it = 0; it < kIterations; ++it) {
      const std::string where =
          "thread " + std::to_string(thread) + " iteration " + std::to_string(it);
      std::vector<float> xv(6);
      for (int i = 0; i < 6; ++i) xv[i] = static_cast<float>(thread * 1000 + (it % 97) * 7 + i);
      const Tensor x = tensor<float>(xv, Shape({2, 1, 3}), VmTestDevice());

      const Tensor c = x.expand({4, 2, 5, 3}).contiguous();
      const Tensor g = expand_backward(c, Shape({2, 1, 3}));
      const Tensor r = x.repeat({2, 1, 2, 1});
      const Tensor rb = repeat_backward(r, Shape({2, 1, 3}), {2, 1, 2, 1});
      const Tensor s = shared.expand({3, 5}).contiguous();
      const Tensor s2 = shared.repeat({2, 1});

      std::vector<float> want_g(6), want_rb(6);
      for (int i = 0; i < 6; ++i) {
        want_g[i] = 20 * xv[i];
        want_rb[i] = 4 * xv[i];
      }
      if (g.to_vector<float>() != want_g) Note(report, where + ": expand_backward");
      if (rb.to_vector<float>() != want_rb) Note(report, where + ": repeat_backward");

      if (it % 8 == 0) {
        std::vector<float> want_c;
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 2; ++b)
            for (int d = 0; d < 5; ++d)
              for (int k = 0; k < 3; ++k) want_c.push_back(xv[b * 3 + k]);
        if (c.to_vector<float>() != want_c) Note(report, where + ": expand + contiguous");
        std::vector<float> want_r;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            for (int d = 0; d < 2; ++d)
              for (int k = 0; k < 3; ++k) want_r.push_back(xv[b * 3 + k]);
        if (r.to_vector<float>() != want_r) Note(report, where + ": repeat");
        std::vector<float> want_s, want_s2;
        for (int a = 0; a < 3; ++a)
          want_s.insert(want_s.end(), shared_values.begin(), shared_values.end());
        for (int a = 0; a < 2; ++a)
          want_s2.insert(want_s2.end(), shared_values.begin(), shared_values.end());
        if (s.to_vector<float>() != want_s) Note(report, where + ": shared expand");
        if (s2.to_vector<float>() != want_s2) Note(report, where + ": shared repeat");
      }
      report->iterations_done = it + 1;
    }
  } catch (const std::exception& e) {
    report->exception = e.what();
  }
}

TEST(ConcurrentIssuersTest, FourThreadsIssueChainsAndReadBackCorrectResults) {
  const std::vector<float> shared_values = {1.5f, -2.f, 3.25f, 4.f, -5.5f};
  const Tensor shared = tensor<float>(shared_values, Shape({1, 5}), VmTestDevice());

  std::vector<IssuerReport> reports(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(IssueChains, t, std::cref(shared), std::cref(shared_values),
                         &reports[static_cast<size_t>(t)]);
  }
  for (std::thread& t : threads) t.join();
  EXPECT_NO_THROW(sync());

  for (int t = 0; t < kThreads; ++t) {
    const IssuerReport& r = reports[static_cast<size_t>(t)];
    EXPECT_EQ(r.exception, "") << "thread " << t;
    EXPECT_EQ(r.iterations_done, kIterations) << "thread " << t;
    EXPECT_EQ(r.mismatches, 0) << "thread " << t << ", first: " << r.first_mismatch;
  }
  EXPECT_EQ(shared.to_vector<float>(), shared_values);
}

TEST(ConcurrentIssuersTest, ViewsHeldByOtherThreadsKeepAStorageAliveAfterItsCreatorDropsIt) {
  // Each thread gets its own handle on one storage; the main thread drops its handle at once. The
  // storage is released once, after the last thread's last read, and every read stays correct.
  std::vector<float> values(64);
  for (int i = 0; i < 64; ++i) values[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor base = tensor<float>(values, Shape({8, 8}), VmTestDevice());
  sync();  // base's block is allocated now
  const int64_t allocated_before_threads = memory_stats(VmTestDevice()).allocated_bytes;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&wrong, t, mine = base] {
      for (int it = 0; it < 200; ++it) {
        const int row_index = (t + it) % 8;
        const Tensor row = mine.narrow(0, row_index, 1).contiguous();
        const std::vector<float> got = row.to_vector<float>();
        for (int k = 0; k < 8; ++k) {
          if (got[static_cast<size_t>(k)] != static_cast<float>(row_index * 8 + k)) {
            wrong.fetch_add(1);
          }
        }
      }
    });
  }
  base = Tensor();
  for (std::thread& t : threads) t.join();
  EXPECT_NO_THROW(sync());
  EXPECT_EQ(wrong.load(), 0);
  // Every view is gone now, so the storage's block is back in the pool.
  EXPECT_LT(memory_stats(VmTestDevice()).allocated_bytes, allocated_before_threads);
}

}  // namespace
}  // namespace ofl
