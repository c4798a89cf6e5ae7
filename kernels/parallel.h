// ParallelFor: how the CPU kernels split a range over oneTBB. One call site to change for builds
// where oneTBB's threads must not run our code (TSan: see cmake/Sanitizers.cmake, OFL_TSAN).
#pragma once

#include <cstdint>

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

// body(begin, end) over [0, n): in one call on the calling thread when n <= serial_below, else
// split over ParallelFor in chunks of at least `grain`.
template <class Body>
void ParallelRange(int64_t n, int64_t serial_below, int64_t grain, const Body& body) {
  if (n <= serial_below) {
    body(int64_t{0}, n);
    return;
  }
  ParallelFor(tbb::blocked_range<int64_t>(0, n, grain),
              [&](const tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}

}  // namespace ofl::kernels
