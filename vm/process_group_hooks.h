// What the VM needs of the process group that global tensors run over, without knowing MPI: this
// process's rank and the world size once the group exists (each rank writes a trace file of its
// own at exit), and the group's teardown at shutdown, after every stream stopped and so after every
// collective ran. The layer that makes the process group sets them while the library loads
// (oneflow_lite/functional/global_functors.cpp); until then the VM sees a world of one process
// with nothing to tear down.
#pragma once

namespace ofl::vm {

struct ProcessGroupHooks {
  int (*world_rank)() = nullptr;
  int (*world_size)() = nullptr;
  void (*finalize)() = nullptr;
};

void SetProcessGroupHooks(const ProcessGroupHooks& hooks);
const ProcessGroupHooks& GetProcessGroupHooks();

}  // namespace ofl::vm
