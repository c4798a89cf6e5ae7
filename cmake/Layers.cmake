# The library's layers: each builds as an object library, linked into the one liboneflow_lite, and
# compiles against a view of the source tree (symbolic links under include_views/<layer>/ in the
# build tree) that holds only the headers its layer may include, as ../shared/DESIGN.md draws the
# arrows: api -> ops, vm -> kernels -> core types. An include against the direction finds no file,
# and the file does not compile.
#
#   core     the core types in oneflow_lite/ (attrs, device, dtype, error, identifier, placement,
#            scalar, shape, settings, small-object allocation, memory stats, version, wait hooks):
#            include core only.
#   kernels  kernels/: core and the device interface (oneflow_lite/extension.h with the Tensor
#            handle its op definitions take).
#   vm       vm/: core, the device interface and the kernel interface (kernels/kernel.h,
#            kernels/device_backend.h). The VM knows no collective, process group or op.
#   ops      ops/: core, the device interface and the public op API an op's backward calls
#            (oneflow_lite/functional/functional.h).
#   api      the rest of oneflow_lite/ (the Tensor API, functional/, autograd/, memory, tracing):
#            every layer.
#
# A new .cpp directly in oneflow_lite/ is core unless it is listed in OFL_API_TOP_SOURCES.

set(OFL_API_TOP_SOURCES memory nn optim tensor trace)
set(_ofl_core_headers attrs device dtype error identifier placement scalar shape settings small_object
  memory_stats wait_hooks)
set(_ofl_device_interface oneflow_lite/extension.h oneflow_lite/tensor.h)

set(_ofl_core_view "")
foreach(_h ${_ofl_core_headers})
  list(APPEND _ofl_core_view oneflow_lite/${_h}.h)
endforeach()

# ofl_include_view(NAME PATHS...): include_views/NAME/<path> -> <source>/<path> for each path (a
# file or a folder); oneflow_lite/version.h and the op table's declarations
# (oneflow_lite/generated/, cmake/Codegen.cmake), made in the build tree, are in every view.
function(ofl_include_view name)
  set(_root ${PROJECT_BINARY_DIR}/include_views/${name})
  file(REMOVE_RECURSE ${_root})
  foreach(_p ${ARGN})
    get_filename_component(_dir ${_root}/${_p} DIRECTORY)
    file(MAKE_DIRECTORY ${_dir})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${_p} ${_root}/${_p} SYMBOLIC)
  endforeach()
  file(MAKE_DIRECTORY ${_root}/oneflow_lite)
  file(CREATE_LINK ${PROJECT_BINARY_DIR}/include/oneflow_lite/version.h
    ${_root}/oneflow_lite/version.h SYMBOLIC)
  file(CREATE_LINK ${PROJECT_BINARY_DIR}/include/oneflow_lite/generated
    ${_root}/oneflow_lite/generated SYMBOLIC)
endfunction()

ofl_include_view(core ${_ofl_core_view})
ofl_include_view(kernels ${_ofl_core_view} ${_ofl_device_interface} kernels)
ofl_include_view(vm ${_ofl_core_view} ${_ofl_device_interface} kernels/kernel.h
  kernels/device_backend.h vm)
ofl_include_view(ops ${_ofl_core_view} ${_ofl_device_interface}
  oneflow_lite/functional/functional.h ops)

# What every layer compiles with: warnings, the build's feature macros and its dependencies'
# headers (linking them is liboneflow_lite's, below).
add_library(ofl_layer_settings INTERFACE)
target_compile_options(ofl_layer_settings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
target_link_libraries(ofl_layer_settings INTERFACE Threads::Threads TBB::tbb spdlog::spdlog
  nlohmann_json::nlohmann_json)
if(OFL_SANITIZE)
  target_compile_definitions(ofl_layer_settings INTERFACE OFL_PLAIN_NEW)
else()
  target_link_libraries(ofl_layer_settings INTERFACE mimalloc)
endif()
if(OFL_HAVE_MPI)
  target_link_libraries(ofl_layer_settings INTERFACE MPI::MPI_CXX)
  target_compile_definitions(ofl_layer_settings INTERFACE OFL_WITH_MPI)
endif()
if(OFL_HAVE_CUDA)
  target_link_libraries(ofl_layer_settings INTERFACE CUDA::cudart)
  target_compile_definitions(ofl_layer_settings INTERFACE OFL_WITH_CUDA)
endif()
if(OFL_HAVE_NCCL)
  target_include_directories(ofl_layer_settings INTERFACE ${OFL_NCCL_INCLUDE_DIR})
  target_compile_definitions(ofl_layer_settings INTERFACE OFL_WITH_NCCL)
endif()

# ofl_layer(NAME VIEW SOURCES...): the object library ofl_NAME, compiled against VIEW (a view
# above, or the source root for api).
function(ofl_layer name view)
  add_library(ofl_${name} OBJECT ${ARGN})
  target_include_directories(ofl_${name} PRIVATE ${view})
  target_link_libraries(ofl_${name} PRIVATE ofl_layer_settings)
  add_dependencies(ofl_${name} ofl_codegen)  # the op table's headers, before anything compiles
endfunction()

file(GLOB _ofl_top_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/oneflow_lite/*.cpp)
set(_ofl_core_sources "")
set(_ofl_api_sources "")
foreach(_src ${_ofl_top_sources})
  get_filename_component(_stem ${_src} NAME_WE)
  if(_stem IN_LIST OFL_API_TOP_SOURCES)
    list(APPEND _ofl_api_sources ${_src})
  else()
    list(APPEND _ofl_core_sources ${_src})
  endif()
endforeach()
file(GLOB _ofl_api_more CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/oneflow_lite/functional/*.cpp
  ${PROJECT_SOURCE_DIR}/oneflow_lite/autograd/*.cpp)
file(GLOB _ofl_ops_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/ops/*.cpp)
file(GLOB _ofl_vm_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/vm/*.cpp ${PROJECT_SOURCE_DIR}/vm/allocator/*.cpp)
file(GLOB _ofl_kernels_sources CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/kernels/*.cpp
  ${PROJECT_SOURCE_DIR}/kernels/cpu/*.cpp
  ${PROJECT_SOURCE_DIR}/kernels/sim/*.cpp
  ${PROJECT_SOURCE_DIR}/kernels/collective/*.cpp)
if(NOT OFL_HAVE_MPI)
  # MPI's side of the collectives; without MPI the process group is the one-process world.
  list(REMOVE_ITEM _ofl_kernels_sources ${PROJECT_SOURCE_DIR}/kernels/collective/mpi_transport.cpp)
endif()
if(OFL_HAVE_CUDA)
  file(GLOB _ofl_cuda_sources CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cpp ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cu)
  list(APPEND _ofl_kernels_sources ${_ofl_cuda_sources}
    ${PROJECT_SOURCE_DIR}/kernels/cuda_device/cuda_device.cpp)
else()
  # The cuda device type without a backend: its first use says this build has no CUDA.
  list(APPEND _ofl_kernels_sources ${PROJECT_SOURCE_DIR}/kernels/cuda_device/cuda_missing.cpp)
endif()

ofl_layer(core ${PROJECT_BINARY_DIR}/include_views/core ${_ofl_core_sources})
# The optimizer steps' element loops take a square root per element: without errno to set, the
# compiler vectorizes it (sqrtps), where errno handling keeps the whole loop scalar.
set_source_files_properties(${PROJECT_SOURCE_DIR}/kernels/cpu/optim_step_kernel.cpp
  PROPERTIES COMPILE_OPTIONS -fno-math-errno)
ofl_layer(kernels ${PROJECT_BINARY_DIR}/include_views/kernels ${_ofl_kernels_sources})
ofl_layer(vm ${PROJECT_BINARY_DIR}/include_views/vm ${_ofl_vm_sources})
ofl_layer(ops ${PROJECT_BINARY_DIR}/include_views/ops ${_ofl_ops_sources})
ofl_layer(api "${PROJECT_SOURCE_DIR};${PROJECT_BINARY_DIR}/include" ${_ofl_api_sources}
  ${_ofl_api_more} ${OFL_GENERATED_API_SOURCES})
if(OFL_HAVE_CUDA)
  # One CUDA runtime in the process: the shared libcudart, not also the static one CMake adds by
  # default for targets with .cu sources.
  set_target_properties(ofl_kernels PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Shared)
  target_compile_options(ofl_kernels PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)
endif()

set(OFL_LAYER_OBJECTS $<TARGET_OBJECTS:ofl_core> $<TARGET_OBJECTS:ofl_kernels>
  $<TARGET_OBJECTS:ofl_vm> $<TARGET_OBJECTS:ofl_ops> $<TARGET_OBJECTS:ofl_api>)
