// Hooks around the runtime's waits that may sleep, for language bindings: a binding that holds an
// interpreter lock while it calls the runtime (Python's GIL) releases the lock in `before` and
// takes it back in `after`, so it gives the lock up only when a call really waits (a read of a
// tensor still being computed, sync, back-pressure on a submitter) and a call that does not wait
// pays nothing for it.
#pragma once

namespace ofl {

struct WaitHooks {
  // On the waiting thread (a thread of the program; a VM worker only where a program's own
  // callback waits), with no lock of the runtime held, just before a wait that may sleep.
  void (*before)() = nullptr;
  // On the same thread once that wait is over, also when it ends in an exception; still with no
  // lock of the runtime held. Pairs nest no deeper than one per thread.
  void (*after)() = nullptr;
};

// Replaces the hooks (both null: none, the default). Set them once, before any thread waits.
void set_wait_hooks(const WaitHooks& hooks);

}  // namespace ofl
