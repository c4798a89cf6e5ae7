# The include directions of ../shared/DESIGN.md, as the build enforces them (cmake/Layers.cmake):
# a file of layer LAYER that includes a header its layer may not see fails to compile, naming the
# header; one that includes a header it may see compiles.
# Usage: cmake -DCXX=... -DVIEWS=<build>/include_views -DLAYER=vm -DWORK=<dir> -P include_directions.cmake
set(_allowed_core oneflow_lite/shape.h oneflow_lite/error.h oneflow_lite/settings.h)
set(_refused_core oneflow_lite/tensor.h oneflow_lite/extension.h vm/stream.h kernels/kernel.h)
set(_allowed_kernels oneflow_lite/extension.h kernels/kernel.h kernels/offset_calc.h)
set(_refused_kernels vm/instruction.h ops/op_schema.h oneflow_lite/functional/functional.h
  oneflow_lite/tensor_impl.h)
set(_allowed_vm kernels/kernel.h kernels/device_backend.h oneflow_lite/wait_hooks.h)
set(_refused_vm kernels/collective/collectives.h kernels/collective/watchdog.h ops/op_schema.h
  oneflow_lite/tensor_impl.h oneflow_lite/functional/functional.h)
set(_allowed_ops oneflow_lite/functional/functional.h oneflow_lite/extension.h)
set(_refused_ops vm/instruction.h kernels/kernel.h oneflow_lite/functional/op_call.h
  oneflow_lite/tensor_impl.h)

if(NOT DEFINED _allowed_${LAYER})
  message(FATAL_ERROR "no layer named '${LAYER}'")
endif()
file(MAKE_DIRECTORY ${WORK})
set(_failures "")
foreach(_kind allowed refused)
  foreach(_header ${_${_kind}_${LAYER}})
    string(MAKE_C_IDENTIFIER ${_header} _id)
    set(_src ${WORK}/${LAYER}_${_id}.cpp)
    file(WRITE ${_src} "#include \"${_header}\"\n")
    execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only -I ${VIEWS}/${LAYER} ${_src}
      RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_QUIET)
    if(_kind STREQUAL "allowed" AND NOT _rc EQUAL 0)
      string(APPEND _failures "${LAYER} may include ${_header}, but it did not compile:\n${_err}\n")
    elseif(_kind STREQUAL "refused")
      if(_rc EQUAL 0)
        string(APPEND _failures "${LAYER} may not include ${_header}, but it compiled\n")
      elseif(NOT _err MATCHES "${_header}: No such file or directory")
        string(APPEND _failures "${LAYER} including ${_header} failed for another reason:\n${_err}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(_failures)
  message(FATAL_ERROR "${_failures}")
endif()
message(STATUS "${LAYER}: every allowed include compiles, every refused one is not found")
