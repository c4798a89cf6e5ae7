// libFuzzer target for autograd: decodes the input into a random differentiable program
// (tests/common/grad_program.h: views, copies, broadcast arithmetic and sums over float64 leaves,
// then backward of the sum) and runs it on cpu and on sim:0. The leaves' gradients must be
// bit-identical on both devices (fan-in sums in a fixed order, the same kernels' arithmetic); any
// exception (every program is valid by construction), a crash, a hang or a sanitizer report is a
// failure.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "oneflow_lite/oneflow_lite.h"
#include "tests/common/grad_program.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // The simulator's random delays test the VM's ordering elsewhere; here they would only slow
  // every execution down.
  setenv("OFL_SIM_MAX_DELAY_US", "0", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto run = [&](const ofl::Device& device) {
    ofl_fuzz::Input in(data, size);
    return ofl::grad_program::Run([&in](int64_t n) { return in.Below(n); }, device);
  };
  try {
    const ofl::grad_program::Result cpu = run(ofl::Device("cpu"));
    const ofl::grad_program::Result sim = run(ofl::Device("sim:0"));
    if (cpu.grad_bits != sim.grad_bits) {
      std::fprintf(stderr, "autograd_fuzz: gradients differ between cpu and sim:0 for:%s\n",
                   cpu.trace.c_str());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "autograd_fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
