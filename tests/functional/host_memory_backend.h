// HostMemoryBackend: a device type whose memory is ordinary host memory and whose work is done
// when a call returns, for tests that register device types of their own.
#pragma once

#include <cstdlib>
#include <cstring>

#include "oneflow_lite/extension.h"

namespace ofl::testing {

class HostMemoryBackend : public DeviceBackend {
 public:
  int device_count() override { return 1; }
  void* allocate(int, size_t n) override { return std::aligned_alloc(256, (n + 255) / 256 * 256); }
  void deallocate(int, void* p, size_t) override { std::free(p); }
  NativeStream create_stream(int) override { return this; }
  void destroy_stream(int, NativeStream) override {}
  NativeEvent create_event(int) override { return this; }
  void destroy_event(int, NativeEvent) override {}
  void record_event(NativeEvent, NativeStream) override {}
  bool query_event(NativeEvent) override { return true; }
  void synchronize_event(NativeEvent) override {}
  void stream_wait_event(NativeStream, NativeEvent) override {}
  void copy_async(void* d, const void* s, size_t n, CopyKind, NativeStream) override {
    std::memcpy(d, s, n);
  }
};

}  // namespace ofl::testing
