// ParallelFor: how the CPU kernels split a range over oneTBB. One call site to change for builds
// where oneTBB's threads must not run our code (TSan: see cmake/Sanitizers.cmake, OFL_TSAN).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace ofl::kernels {

// tbb::parallel_for(range, body), or under OFL_TSAN body(range) on the calling thread: Debian's
// libtbb is not instrumented, so TSan cannot see its hand-offs and would report false races.
template <class Range, class Body>
void ParallelFor(const Range& range, const Body& body) {
#ifdef OFL_TSAN
  if (!range.empty()) body(range);
#else
  tbb::parallel_for(range, body);
#endif
}

}  // namespace ofl::kernels
