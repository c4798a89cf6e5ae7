// Bounded spinning for the VM's hand-offs. A wake-up through a condition variable costs tens of
// microseconds, so a waiter first spins; but on a busy or small machine the thread it waits for may
// need this very core, so after a few microseconds of pause-spinning it yields the core on each
// round, and after `budget_ns` it gives up (the caller then sleeps).
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace ofl::vm {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns true as soon as ready() holds, false when the budget ran out first.
template <class Ready>
bool SpinUntil(Ready&& ready, int64_t budget_ns) {
  if (ready()) return true;
  constexpr int kPauseRounds = 256;  // about 5-10 us of pause before yielding
  for (int i = 0; i < kPauseRounds; ++i) {
    if (ready()) return true;
    CpuRelax();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(budget_ns);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::yield();
  }
  return ready();
}

}  // namespace ofl::vm
