// The GIL around the runtime's waits: giving it up while a call waits (GilRelease, and the wait
// hooks of oneflow_lite/wait_hooks.h), taking it back, letting Ctrl-C through a long wait, and
// the interpreter's exit while other threads wait.
//
// Exit. Python ends a thread that takes the GIL back once the interpreter is finalizing
// (PyEval_RestoreThread calls pthread_exit), which unwinds the thread's C++ frames; a frame that
// may not throw (a destructor, such as the one that takes the GIL back) then calls
// std::terminate and the whole process aborts. So the package's exit hook (AtExit, run by
// Python's atexit before it starts finalizing) closes the door: from then on a thread other than
// the exiting one that wants the GIL back waits for the process's end instead (it holds no lock
// of the runtime, and daemon threads are abandoned by Python at exit anyway), and a thread already
// on its way to the GIL is let through before the exit goes on.
//
// Signals. Python runs signal handlers only on its main thread, and only while it holds the GIL.
// A wait of the main thread that sleeps is cut into polls (WaitHooks::interrupted): the thread
// takes the GIL back briefly, runs the pending handlers (PyErr_CheckSignals), and when one raised
// (KeyboardInterrupt) keeps that exception and ends the wait with ofl::WaitInterrupted, which
// SetErrorFor turns back into the kept exception.
#include <Python.h>
#include <pythread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "python/src/bindings.h"

namespace ofl::python {
namespace {

std::mutex exit_mu;
std::condition_variable exit_cv;
bool exiting = false;           // under exit_mu: AtExit ran
unsigned long exit_thread = 0;  // under exit_mu: the thread that runs the exit
int retaking = 0;               // under exit_mu: threads on their way to the GIL
unsigned long main_thread = 0;  // Python's main thread: the one that runs signal handlers

// This thread's state while it has given the GIL up in one of the package's releases; null while
// it holds the GIL (or never released it).
thread_local PyThreadState* away = nullptr;
// Whether `away` was set by the wait hooks (so `after` takes the GIL back) rather than a
// GilRelease.
thread_local bool away_for_wait = false;
// The exception a signal handler raised during a wait, kept until the error reaches Python.
thread_local PyObject* interrupt_type = nullptr;
thread_local PyObject* interrupt_value = nullptr;
thread_local PyObject* interrupt_traceback = nullptr;

[[noreturn]] void WaitForTheProcessEnd() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Takes the GIL back with the thread state `state` gave up, unless Python is exiting and this is
// not the exiting thread (see the top of the file).
void Retake(PyThreadState* state) {
  {
    std::unique_lock<std::mutex> lock(exit_mu);
    if (exiting && PyThread_get_thread_ident() != exit_thread) {
      lock.unlock();
      WaitForTheProcessEnd();
    }
    ++retaking;
  }
  PyEval_RestoreThread(state);
  {
    std::lock_guard<std::mutex> lock(exit_mu);
    --retaking;
  }
  exit_cv.notify_all();
}

// The wait hooks: a thread that holds the GIL gives it up while the runtime really waits, and
// takes it back after. Never once Python is finalizing (a wait at exit then keeps the GIL: no
// other Python thread runs any more).
void ReleaseGilForWait() {
  if (away == nullptr && PythonIsRunning() && PyGILState_Check()) {
    away = PyEval_SaveThread();
    away_for_wait = true;
  }
}

void TakeGilAfterWait() {
  if (away != nullptr && away_for_wait) {
    PyThreadState* s = away;
    away = nullptr;
    away_for_wait = false;
    Retake(s);
  }
}

bool InterruptedWhileWaiting() {
  PyThreadState* s = away;
  if (s == nullptr || PyThread_get_thread_ident() != main_thread || !PythonIsRunning()) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(exit_mu);
    if (exiting) return false;  // the exit waits for queued work; Ctrl-C there is Python's
  }
  const bool for_wait = away_for_wait;
  away = nullptr;  // a handler that waits itself releases and retakes on its own
  away_for_wait = false;
  Retake(s);
  const bool raised = PyErr_CheckSignals() != 0;
  if (raised) {
    Py_CLEAR(interrupt_type);
    Py_CLEAR(interrupt_value);
    Py_CLEAR(interrupt_traceback);
    PyErr_Fetch(&interrupt_type, &interrupt_value, &interrupt_traceback);
  }
  away = PyEval_SaveThread();
  away_for_wait = for_wait;
  return raised;
}

}  // namespace

namespace {
std::atomic<uint64_t> release_count{0};
}  // namespace

GilRelease::GilRelease() : state_(PyEval_SaveThread()) {
  away = state_;
  release_count.fetch_add(1, std::memory_order_relaxed);
}

uint64_t GilReleaseCount() { return release_count.load(std::memory_order_relaxed); }

GilRelease::~GilRelease() {
  away = nullptr;
  Retake(state_);
}

bool RestoreInterrupt() {
  if (interrupt_type == nullptr) return false;
  PyErr_Restore(interrupt_type, interrupt_value, interrupt_traceback);
  interrupt_type = interrupt_value = interrupt_traceback = nullptr;
  return true;
}

void AtExit() {
  {
    std::lock_guard<std::mutex> lock(exit_mu);
    exiting = true;
    exit_thread = PyThread_get_thread_ident();
    if (retaking == 0) return;
  }
  // Threads on their way to the GIL: let them have it (and go on in Python) before finalizing.
  Py_BEGIN_ALLOW_THREADS;
  {
    std::unique_lock<std::mutex> lock(exit_mu);
    exit_cv.wait(lock, [] { return retaking == 0; });
  }
  Py_END_ALLOW_THREADS;
}

void InstallWaitHooks(unsigned long python_main_thread) {
  main_thread = python_main_thread;
  ofl::set_wait_hooks({&ReleaseGilForWait, &TakeGilAfterWait, &InterruptedWhileWaiting});
}

}  // namespace ofl::python
