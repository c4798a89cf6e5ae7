// The CPU as a device backend: synchronous (work is done when a call returns, so events are
// complete once recorded and the VM records none) and host-accessible (the host reads its memory).
#pragma once

#include "oneflow_lite/extension.h"

namespace ofl::kernels::cpu {

class CpuBackend final : public DeviceBackend {
 public:
  int device_count() override { return 1; }
  void* allocate(int index, size_t bytes) override;
  void deallocate(int index, void* ptr, size_t bytes) override;
  NativeStream create_stream(int index) override;
  void destroy_stream(int, NativeStream) override {}
  NativeEvent create_event(int index) override;
  void destroy_event(int, NativeEvent) override {}
  void record_event(NativeEvent, NativeStream) override {}
  bool query_event(NativeEvent) override { return true; }
  void synchronize_event(NativeEvent) override {}
  void stream_wait_event(NativeStream, NativeEvent) override {}
  void copy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                  NativeStream stream) override;
  bool synchronous() const override { return true; }
  bool host_accessible() const override { return true; }
};

}  // namespace ofl::kernels::cpu
