// Tests that the VM orders instructions by the blobs they read and write: long random chains of
// Function instructions spread over four streams must compute exactly what a sequential replay
// computes; readers of one blob on different streams run at the same time; a write waits for every
// reader issued before it. The Function tests read and write blob bytes on the host, so they run
// on CPU streams; the chain of public ops runs on VmTestDevice(), where on an asynchronous device
// every step hops between the h2d, compute and d2h streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/vm/vm_test_util.h"
#include "vm/eager_blob_object.h"
#include "vm/instructions_builder.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {
namespace {

using testing::CpuStream;
using testing::Latch;
using testing::MakeCpuBlob;
using testing::SubmitWithoutWaiting;
using testing::VmTestDevice;
using testing::WaitUntil;

constexpr StreamRole kRoles[] = {StreamRole::kCompute, StreamRole::kHost2Device,
                                 StreamRole::kDevice2Host, StreamRole::kAux};

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 29;
  return x;
}

uint64_t Load(const EagerBlobObject* blob) {
  uint64_t v = 0;
  std::memcpy(&v, blob->data(), sizeof(v));
  return v;
}

void Store(EagerBlobObject* blob, uint64_t v) { std::memcpy(blob->data(), &v, sizeof(v)); }

enum class Shake { kNone, kSpin, kSleep };

// One random instruction: results[index] = Mix over its index and the values it reads; then each
// written blob j gets Mix(result, j + 1).
struct RandomOp {
  int stream = 0;
  std::vector<int> reads;
  std::vector<int> writes;
  Shake shake = Shake::kNone;
  int shake_us = 0;
};

std::vector<RandomOp> MakeRandomOps(uint32_t seed, int num_ops, int num_blobs) {
  std::mt19937 rng(seed);
  auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  std::vector<RandomOp> ops(static_cast<size_t>(num_ops));
  for (RandomOp& op : ops) {
    op.stream = static_cast<int>(rng() % 4);
    std::vector<int> order(static_cast<size_t>(num_blobs));
    for (int k = 0; k < num_blobs; ++k) order[static_cast<size_t>(k)] = k;
    std::shuffle(order.begin(), order.end(), rng);
    const int num_reads = static_cast<int>(rng() % 4);  // 0..3
    const int num_writes = coin(20) ? 0 : 1 + static_cast<int>(rng() % 2);
    size_t next = 0;
    for (int r = 0; r < num_reads && next < order.size(); ++r) op.reads.push_back(order[next++]);
    for (int w = 0; w < num_writes; ++w) {
      // Sometimes update a blob in place (it is both read and written).
      if (!op.reads.empty() && coin(25)) {
        const int blob = op.reads[rng() % op.reads.size()];
        if (std::find(op.writes.begin(), op.writes.end(), blob) == op.writes.end()) {
          op.writes.push_back(blob);
          continue;
        }
      }
      if (next < order.size()) op.writes.push_back(order[next++]);
    }
    if (coin(2)) {
      op.shake = Shake::kSleep;
      op.shake_us = 20 + static_cast<int>(rng() % 200);
    } else if (coin(6)) {
      op.shake = Shake::kSpin;
      op.shake_us = 1 + static_cast<int>(rng() % 30);
    }
  }
  return ops;
}

void Perturb(Shake shake, int us) {
  if (shake == Shake::kSleep) {
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  } else if (shake == Shake::kSpin) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
}

// Issues `ops` in random batches over four streams and compares every result and every final blob
// value with a sequential replay.
void RunAndCompareWithReplay(uint32_t seed, int num_ops, int num_blobs) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(num_blobs) + " blobs");
  const std::vector<RandomOp> ops = MakeRandomOps(seed, num_ops, num_blobs);
  std::vector<BlobPtr> blobs;
  for (int k = 0; k < num_blobs; ++k) blobs.push_back(MakeCpuBlob(sizeof(uint64_t)));
  std::vector<Stream*> streams;
  for (StreamRole role : kRoles) streams.push_back(CpuStream(role));
  // Written by exactly one instruction each; read after Sync.
  std::vector<uint64_t> results(ops.size(), 0);

  PhysicalRun([&](InstructionsBuilder* b) {
    for (int k = 0; k < num_blobs; ++k) {
      EagerBlobObject* blob = blobs[static_cast<size_t>(k)].get();
      b->Function(
          "init", {}, {blobs[static_cast<size_t>(k)]},
          [blob, k] { Store(blob, static_cast<uint64_t>(k) + 1); }, streams[0]);
    }
  });

  std::mt19937 rng(seed ^ 0x5a5a5a5au);
  size_t i = 0;
  while (i < ops.size()) {
    const size_t batch = std::min<size_t>(ops.size() - i, 1 + rng() % 40);
    PhysicalRun([&](InstructionsBuilder* b) {
      for (size_t n = 0; n < batch; ++n, ++i) {
        const RandomOp& op = ops[i];
        std::vector<BlobPtr> reads, writes;
        std::vector<EagerBlobObject*> read_ptrs, write_ptrs;
        for (int r : op.reads) {
          reads.push_back(blobs[static_cast<size_t>(r)]);
          read_ptrs.push_back(reads.back().get());
        }
        for (int w : op.writes) {
          writes.push_back(blobs[static_cast<size_t>(w)]);
          write_ptrs.push_back(writes.back().get());
        }
        uint64_t* result = &results[i];
        const uint64_t index = i;
        const Shake shake = op.shake;
        const int shake_us = op.shake_us;
        b->Function(
            "random_op_" + std::to_string(i), std::move(reads), std::move(writes),
            [=] {
              uint64_t h = Mix(seed, index);
              for (const EagerBlobObject* r : read_ptrs) h = Mix(h, Load(r));
              Perturb(shake, shake_us);
              *result = h;
              for (size_t j = 0; j < write_ptrs.size(); ++j) Store(write_ptrs[j], Mix(h, j + 1));
            },
            streams[static_cast<size_t>(op.stream)]);
      }
    });
  }
  VirtualMachine::Get().Sync();

  std::vector<uint64_t> values(static_cast<size_t>(num_blobs));
  for (int k = 0; k < num_blobs; ++k) values[static_cast<size_t>(k)] = static_cast<uint64_t>(k) + 1;
  size_t mismatches = 0;
  for (size_t n = 0; n < ops.size(); ++n) {
    uint64_t h = Mix(seed, n);
    for (int r : ops[n].reads) h = Mix(h, values[static_cast<size_t>(r)]);
    if (results[n] != h && ++mismatches <= 5) {
      ADD_FAILURE() << "instruction " << n << " (stream " << ops[n].stream
                    << ") read values that a sequential run would not have given it";
    }
    for (size_t j = 0; j < ops[n].writes.size(); ++j) {
      values[static_cast<size_t>(ops[n].writes[j])] = Mix(h, j + 1);
    }
  }
  EXPECT_EQ(mismatches, 0u);
  for (int k = 0; k < num_blobs; ++k) {
    EXPECT_EQ(Load(blobs[static_cast<size_t>(k)].get()), values[static_cast<size_t>(k)])
        << "final value of blob " << k;
  }
}

TEST(DependenceOrderTest, RandomChainsOverFourStreamsMatchSequentialReplay) {
  RunAndCompareWithReplay(/*seed=*/1, /*num_ops=*/3000, /*num_blobs=*/12);
}

TEST(DependenceOrderTest, RandomChainsOnFewHotBlobsMatchSequentialReplay) {
  // Three blobs: nearly every instruction conflicts with the one before it on another stream.
  RunAndCompareWithReplay(/*seed=*/7, /*num_ops=*/2000, /*num_blobs=*/3);
}

TEST(DependenceOrderTest, ReadersOfOneBlobOnDifferentStreamsRunConcurrently) {
  BlobPtr blob = MakeCpuBlob(sizeof(uint64_t));
  PhysicalRun([&](InstructionsBuilder* b) {
    EagerBlobObject* raw = blob.get();
    b->Function(
        "init", {}, {blob}, [raw] { Store(raw, 42); }, CpuStream(StreamRole::kCompute));
  });

  // Each reader arrives, then waits (bounded) for the other: both meet only if both run at once.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool met[2] = {false, false};
  uint64_t seen[2] = {0, 0};
  std::atomic<int> finished{0};
  auto reader = [&](int which) {
    return [&, which] {
      seen[which] = Load(blob.get());
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      met[which] = cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; });
      lock.unlock();
      // Linger, so that a writer that does not wait for this reader would run meanwhile.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      finished.fetch_add(1);
    };
  };
  int finished_seen_by_writer = -1;
  PhysicalRun([&](InstructionsBuilder* b) {
    b->Function("reader_h2d", {blob}, {}, reader(0), CpuStream(StreamRole::kHost2Device));
    b->Function("reader_d2h", {blob}, {}, reader(1), CpuStream(StreamRole::kDevice2Host));
  });
  PhysicalRun([&](InstructionsBuilder* b) {
    EagerBlobObject* raw = blob.get();
    b->Function(
        "writer_aux", {}, {blob},
        [&, raw] {
          finished_seen_by_writer = finished.load();
          Store(raw, 43);
        },
        CpuStream(StreamRole::kAux));
  });
  VirtualMachine::Get().Sync();

  EXPECT_TRUE(met[0] && met[1]) << "the two readers never ran at the same time";
  EXPECT_EQ(seen[0], 42u);
  EXPECT_EQ(seen[1], 42u);
  EXPECT_EQ(finished_seen_by_writer, 2) << "the writer started before both readers finished";
  EXPECT_EQ(Load(blob.get()), 43u);
}

TEST(DependenceOrderTest, WriteAfterReadsWaitsForEveryReader) {
  BlobPtr blob = MakeCpuBlob(sizeof(uint64_t));
  PhysicalRun([&](InstructionsBuilder* b) {
    EagerBlobObject* raw = blob.get();
    b->Function(
        "init", {}, {blob}, [raw] { Store(raw, 7); }, CpuStream(StreamRole::kCompute));
  });

  const StreamRole reader_roles[] = {StreamRole::kHost2Device, StreamRole::kDevice2Host,
                                     StreamRole::kAux};
  Latch gates[3];
  uint64_t seen[3] = {0, 0, 0};
  std::atomic<bool> writer_started{false};
  std::atomic<bool> writer_done{false};
  SubmitWithoutWaiting([&](InstructionsBuilder* b) {
    for (int r = 0; r < 3; ++r) {
      b->Function(
          "blocked_reader_" + std::to_string(r), {blob}, {},
          [&, r] {
            gates[r].WaitFor(testing::kGenerousTimeout);
            seen[r] = Load(blob.get());
          },
          CpuStream(reader_roles[r]));
    }
    EagerBlobObject* raw = blob.get();
    b->Function(
        "writer_compute", {}, {blob},
        [&, raw] {
          writer_started.store(true);
          Store(raw, 8);
          writer_done.store(true);
        },
        CpuStream(StreamRole::kCompute));
  });

  for (int r = 0; r < 3; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    EXPECT_FALSE(writer_started.load()) << "the writer ran while reader " << r << " was blocked";
    gates[r].Open();
  }
  EXPECT_TRUE(WaitUntil([&] { return writer_done.load(); }));
  VirtualMachine::Get().Sync();
  for (int r = 0; r < 3; ++r) EXPECT_EQ(seen[r], 7u) << "reader " << r;
  EXPECT_EQ(Load(blob.get()), 8u);
}

TEST(DependenceOrderTest, ReadAfterWriteOnAnotherStreamSeesTheWrite) {
  // A chain that hops streams at every step: each step reads what the previous one wrote.
  BlobPtr blob = MakeCpuBlob(sizeof(uint64_t));
  std::vector<uint64_t> seen(400, 0);
  for (size_t i = 0; i < seen.size(); ++i) {
    PhysicalRun([&](InstructionsBuilder* b) {
      EagerBlobObject* raw = blob.get();
      uint64_t* out = &seen[i];
      if (i == 0) {
        b->Function(
            "first", {}, {blob}, [raw] { Store(raw, 1); }, CpuStream(kRoles[0]));
      } else {
        b->Function(
            "step", {blob}, {blob},
            [raw, out] {
              *out = Load(raw);
              Store(raw, *out + 1);
            },
            CpuStream(kRoles[i % 4]));
      }
    });
  }
  VirtualMachine::Get().Sync();
  for (size_t i = 1; i < seen.size(); ++i) ASSERT_EQ(seen[i], i) << "step " << i;
  EXPECT_EQ(Load(blob.get()), seen.size());
}

// One step of the public-op chain on 8 floats: a permutation, a doubling or a shuffle of halves,
// applied to the tensor and to its host reference alike.
Tensor ChainStep(int kind, const Tensor& x, std::vector<float>* ref) {
  std::vector<float> next(8);
  switch (kind) {
    case 0:  // the transpose of (2, 4)
      for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 2; ++i) next[static_cast<size_t>(j * 2 + i)] = (*ref)[i * 4 + j];
      }
      *ref = next;
      return x.reshape({2, 4}).permute({1, 0}).contiguous().reshape({8});
    case 1:  // 2 * x, summed from a broadcast
      for (size_t i = 0; i < 8; ++i) next[i] = 2 * (*ref)[i];
      *ref = next;
      return expand_backward(x.expand({2, 8}), Shape({8}));
    default:  // the second half, twice
      for (size_t i = 0; i < 8; ++i) next[i] = (*ref)[4 + i % 4];
      *ref = next;
      return x.narrow(0, 4, 4).repeat({2});
  }
}

TEST(DependenceOrderTest, PublicOpsHoppingStreamsSeeEveryEarlierWrite) {
  // Each step reads what the step before wrote, a fresh host tensor is consumed by an op as soon as
  // it is issued, each result is copied to the CPU without waiting, and the tensors before die at
  // once: an op that ran before its input was complete (launched is not complete; a host write on
  // h2d must be waited for on the device), or a block reused while an earlier copy still read it,
  // shows up as a wrong value in the copies checked at the end.
  const Device device = VmTestDevice();
  const Device cpu("cpu");
  constexpr int kSteps = 300;
  std::vector<Tensor> copies;
  std::vector<std::vector<float>> want;
  Tensor x;
  std::vector<float> ref;
  for (int i = 0; i < kSteps; ++i) {
    if (i % 8 == 0) {  // restarting the chain now and then keeps the values small and exact
      ref.clear();
      for (int k = 0; k < 8; ++k) ref.push_back(static_cast<float>((i + 3 * k) % 13 - 6));
      x = tensor<float>(ref, Shape({8}), device);
    }
    x = ChainStep(i % 3, x, &ref);
    copies.push_back(x.to(cpu));
    want.push_back(ref);

    std::vector<float> fresh_values(4);
    for (int k = 0; k < 4; ++k)
      fresh_values[static_cast<size_t>(k)] = static_cast<float>(i * 4 + k);
    const Tensor fresh = tensor<float>(fresh_values, Shape({4}), device);
    copies.push_back(fresh.repeat({2}).to(cpu));
    fresh_values.insert(fresh_values.end(), fresh_values.begin(), fresh_values.end());
    want.push_back(fresh_values);
  }
  x = Tensor();
  for (size_t i = 0; i < copies.size(); ++i) {
    ASSERT_EQ(copies[i].to_vector<float>(), want[i]) << "copy " << i << " (step " << i / 2 << ")";
  }
  EXPECT_NO_THROW(sync());
}

}  // namespace
}  // namespace ofl::vm
