// Hooks around the runtime's waits that may sleep, for language bindings: a binding that holds an
// interpreter lock while it calls the runtime (Python's GIL) releases the lock in `before` and
// takes it back in `after`, so it gives the lock up only when a call really waits (a read of a
// tensor still being computed, sync, back-pressure on a submitter) and a call that does not wait
// pays nothing for it. `interrupted` lets a signal through such a wait (Python's Ctrl-C), which
// would otherwise be held until the wait ends.
#pragma once

#include <string>

#include "oneflow_lite/error.h"

namespace ofl {

struct WaitHooks {
  // On the waiting thread (a thread of the program; a VM worker only where a program's own
  // callback waits), with no lock of the runtime held, just before a wait that may sleep.
  void (*before)() = nullptr;
  // On the same thread once that wait is over, also when it ends in an exception; still with no
  // lock of the runtime held. Pairs nest no deeper than one per thread.
  void (*after)() = nullptr;
  // On the same thread, between `before` and `after`, while that wait sleeps: at least every
  // 100 ms (kWaitInterruptPollMs), with no lock of the runtime held. True ends the wait at once
  // with WaitInterrupted. The awaited work is not cancelled: it runs on in the background and its
  // results and errors reach the next wait, except a copy into or out of the caller's memory
  // (to_vector, copy_to_host, from_host), which the caller may free once the exception reaches
  // it: one that has not started is dropped, one that has is waited for (it is a bounded copy).
  bool (*interrupted)() = nullptr;
};

// How often a sleeping wait asks WaitHooks::interrupted, in milliseconds.
constexpr int kWaitInterruptPollMs = 50;

// A wait ended early because the wait hooks' `interrupted` returned true.
class WaitInterrupted : public Error {
 public:
  explicit WaitInterrupted(const std::string& msg) : Error(msg) {}
};

// Replaces the hooks (all null: none, the default). Set them once, before any thread waits.
void set_wait_hooks(const WaitHooks& hooks);

}  // namespace ofl
