# Every dependency comes from Debian's packages through find_package; nothing is downloaded here.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(TBB REQUIRED CONFIG)        # libtbb-dev: parallel loops in the CPU kernels
find_package(spdlog REQUIRED CONFIG)     # libspdlog-dev: the VM's logging
# libopenblas-dev: the CPU matmul kernels (cblas_sgemm, cblas_dgemm); BLA_VENDOR keeps FindBLAS
# from settling on the reference BLAS, which has the same symbols and a tenth of the speed.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_package(nlohmann_json 3 REQUIRED CONFIG)  # nlohmann-json3-dev: Chrome trace and snapshot JSON
if(NOT OFL_SANITIZE)
  find_package(mimalloc REQUIRED CONFIG) # libmimalloc-dev: small objects on the per-op path
endif()
# openmpi-bin + libopenmpi-dev: the collectives behind global tensors (boxing) and the launcher of
# multi-process programs. AUTO builds them when MPI is found; without MPI a program is one process
# (rank 0 of 1) and global tensors live on placements of rank 0 only.
set(OFL_WITH_MPI AUTO CACHE STRING "Build the MPI collectives for global tensors: AUTO, ON or OFF")
set_property(CACHE OFL_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
set(OFL_HAVE_MPI OFF)
# The C API through the C++ compiler (the project enables no C); not the deprecated C++ bindings.
set(MPI_CXX_SKIP_MPICXX TRUE)
if(OFL_WITH_MPI STREQUAL "ON")
  find_package(MPI REQUIRED COMPONENTS CXX)
  set(OFL_HAVE_MPI ON)
elseif(OFL_WITH_MPI STREQUAL "AUTO")
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(OFL_HAVE_MPI ON)
  endif()
elseif(NOT OFL_WITH_MPI STREQUAL "OFF")
  message(FATAL_ERROR "OFL_WITH_MPI must be AUTO, ON or OFF, got '${OFL_WITH_MPI}'")
endif()
if(OFL_HAVE_MPI)
  # Every target that includes mpi.h: the C API only, never OpenMPI's deprecated C++ bindings
  # (they would need libmpi_cxx).
  set_property(TARGET MPI::MPI_CXX APPEND PROPERTY
    INTERFACE_COMPILE_DEFINITIONS OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
endif()
message(STATUS "oneflow_lite: MPI collectives ${OFL_HAVE_MPI}")
# The CUDA toolkit (nvcc, the runtime): the CUDA backend and its kernels (kernels/cuda/). AUTO
# builds them when nvcc is found (CMake's check_language), whether or not a GPU is present: a
# machine without one gets device_count() == 0 and a clear error on use.
set(OFL_WITH_CUDA AUTO CACHE STRING "Build the CUDA backend and kernels: AUTO, ON or OFF")
set_property(CACHE OFL_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(OFL_HAVE_CUDA OFF)
if(OFL_WITH_CUDA STREQUAL "ON" OR OFL_WITH_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # -DCMAKE_CUDA_ARCHITECTURES=... overrides. By default: the GPUs this machine has (their
    # compute capabilities from nvidia-smi), or with none, sm_80 code plus its PTX, which the
    # driver compiles once for a later GPU (H100/H200) on first use. Each architecture is a whole
    # nvcc pass over every kernel: two by default made a newcomer's first build (the demo, which
    # runs on the CPU) spend most of its time in nvcc.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(_ofl_cuda_archs "")
      find_program(OFL_NVIDIA_SMI nvidia-smi)
      if(OFL_NVIDIA_SMI)
        execute_process(COMMAND "${OFL_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
          OUTPUT_VARIABLE _ofl_caps RESULT_VARIABLE _ofl_smi_rc ERROR_QUIET TIMEOUT 20)
        if(_ofl_smi_rc EQUAL 0)
          string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _ofl_caps "${_ofl_caps}")
          foreach(_cap IN LISTS _ofl_caps)
            string(REPLACE "." "" _cap "${_cap}")
            list(APPEND _ofl_cuda_archs "${_cap}")
          endforeach()
          list(REMOVE_DUPLICATES _ofl_cuda_archs)
        endif()
      endif()
      if(NOT _ofl_cuda_archs)
        set(_ofl_cuda_archs 80)
      endif()
      set(CMAKE_CUDA_ARCHITECTURES "${_ofl_cuda_archs}")
    endif()
    message(STATUS "oneflow_lite: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(OFL_HAVE_CUDA ON)
  elseif(OFL_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "OFL_WITH_CUDA=ON but no CUDA compiler (nvcc) was found; set CUDACXX")
  endif()
elseif(NOT OFL_WITH_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "OFL_WITH_CUDA must be AUTO, ON or OFF, got '${OFL_WITH_CUDA}'")
endif()
message(STATUS "oneflow_lite: CUDA backend ${OFL_HAVE_CUDA}")
# NCCL (shipped with the CUDA toolkit here): the collectives of global tensors on cuda placements.
# Needs CUDA and MPI (MPI hands the communicators their unique ids). AUTO: built when found.
set(OFL_WITH_NCCL AUTO CACHE STRING "Build the NCCL collectives for cuda placements: AUTO, ON or OFF")
set_property(CACHE OFL_WITH_NCCL PROPERTY STRINGS AUTO ON OFF)
set(OFL_HAVE_NCCL OFF)
if(OFL_HAVE_CUDA AND OFL_HAVE_MPI AND NOT OFL_WITH_NCCL STREQUAL "OFF")
  find_path(OFL_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(OFL_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(OFL_NCCL_INCLUDE_DIR AND OFL_NCCL_LIBRARY)
    set(OFL_HAVE_NCCL ON)
  endif()
endif()
if(OFL_WITH_NCCL STREQUAL "ON" AND NOT OFL_HAVE_NCCL)
  message(FATAL_ERROR "OFL_WITH_NCCL=ON but NCCL (nccl.h, libnccl) was not found, or CUDA or MPI is off")
endif()
message(STATUS "oneflow_lite: NCCL collectives ${OFL_HAVE_NCCL}")
if(OFL_BUILD_TOOLS)
  find_package(CLI11 REQUIRED CONFIG)    # libcli11-dev: ofl_vm_trace's command line
endif()
if(OFL_BUILD_TESTS)
  find_package(GTest REQUIRED)           # libgtest-dev
endif()
if(OFL_BUILD_BENCH)
  find_package(benchmark REQUIRED CONFIG)  # libbenchmark-dev
endif()
