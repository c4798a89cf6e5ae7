# Every dependency comes from Debian's packages through find_package; nothing is downloaded here.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(TBB REQUIRED CONFIG)        # libtbb-dev: parallel loops in the CPU kernels
find_package(spdlog REQUIRED CONFIG)     # libspdlog-dev: the VM's logging
find_package(nlohmann_json 3 REQUIRED CONFIG)  # nlohmann-json3-dev: Chrome trace and snapshot JSON
if(NOT OFL_SANITIZE)
  find_package(mimalloc REQUIRED CONFIG) # libmimalloc-dev: small objects on the per-op path
endif()
if(OFL_BUILD_TOOLS)
  find_package(CLI11 REQUIRED CONFIG)    # libcli11-dev: ofl_vm_trace's command line
endif()
if(OFL_BUILD_TESTS)
  find_package(GTest REQUIRED)           # libgtest-dev
endif()
if(OFL_BUILD_BENCH)
  find_package(benchmark REQUIRED CONFIG)  # libbenchmark-dev
endif()
