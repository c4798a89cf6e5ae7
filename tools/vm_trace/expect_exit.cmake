# Runs a command and checks its exit code and output, for CTest tests of ofl_vm_trace's command
# line (CTest alone can check either the exit code or the output, not both):
#   cmake -DEXPECT_RC=2 [-DEXPECT_STDOUT=regex] [-DEXPECT_STDERR=regex] [-DEXPECT_STDERR_EMPTY=ON]
#         -P expect_exit.cmake <program> <args...>
if(NOT DEFINED EXPECT_RC)
  message(FATAL_ERROR "expect_exit.cmake: pass -DEXPECT_RC=<exit code>")
endif()

# The command is everything after the script's own path on cmake's command line.
set(_cmd)
set(_after_script OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after_script)
    list(APPEND _cmd "${CMAKE_ARGV${_i}}")
  elseif("${CMAKE_ARGV${_i}}" MATCHES "expect_exit\\.cmake$")
    set(_after_script ON)
  endif()
endforeach()
if(NOT _cmd)
  message(FATAL_ERROR "expect_exit.cmake: no command given after the script")
endif()

execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
list(JOIN _cmd " " _shown)
set(_report "command: ${_shown}\nexit code: ${_rc}\n--- stdout ---\n${_out}\n--- stderr ---\n${_err}")
if(NOT "${_rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expected exit code ${EXPECT_RC}\n${_report}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT _out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'\n${_report}")
endif()
if(DEFINED EXPECT_STDERR AND NOT _err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}'\n${_report}")
endif()
if(EXPECT_STDERR_EMPTY AND NOT _err STREQUAL "")
  message(FATAL_ERROR "expected nothing on stderr\n${_report}")
endif()
message(STATUS "ok: ${_shown} exited ${_rc}")
