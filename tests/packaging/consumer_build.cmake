# Packaging checks, run by CTest with `cmake -DMODE=... -P consumer_build.cmake` (tests/CMakeLists.txt
# passes the variables below). Each mode is one test:
#   install     `cmake --install <build> --prefix <work>/prefix`, then the installed file list: the
#               public headers and none of the internal ones, the library and its SONAME links, the
#               package config, the pkg-config file.
#   headers     every installed header compiles on its own with only the installed headers, and none
#               includes a header that was not installed (vm/, kernels/, ops/...).
#   cmake       tools/examples/consumer configured with find_package against the prefix, built, run
#               without LD_LIBRARY_PATH, its output checked.
#   pkgconfig   the same main.cpp compiled with `pkg-config --cflags --libs oneflow_lite`, run, checked.
# Variables: MODE, OFL_BUILD_DIR, OFL_SOURCE_DIR, OFL_WORK_DIR, OFL_LIBDIR, OFL_VERSION,
# OFL_LIBRARY_FILES (the library file, then its links, separated by |), OFL_CXX, OFL_GENERATOR,
# OFL_MAKE_PROGRAM, OFL_PKG_CONFIG.
cmake_minimum_required(VERSION 3.25)

set(prefix "${OFL_WORK_DIR}/prefix")
string(REPLACE "|" ";" OFL_LIBRARY_FILES "${OFL_LIBRARY_FILES}")
set(consumer_src "${OFL_SOURCE_DIR}/tools/examples/consumer")
# Whatever the caller's environment holds, the programs must find liboneflow_lite on their own.
unset(ENV{LD_LIBRARY_PATH})

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "${what} failed (${rc}):\n  ${cmd}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The consumer's output: the version line, the values of expand, repeat and expand_backward, and the
# same on the consumer's own device type (tools/examples/consumer/main.cpp's MyDevice).
function(check_consumer_output out)
  set(expected
    "oneflow_lite ${OFL_VERSION} (headers ${OFL_VERSION})"
    "x (3,1): 1 2 3"
    "expand (2,3,2): 1 1 2 2 3 3 1 1 2 2 3 3"
    "repeat (6,2): 1 1 2 2 3 3 1 1 2 2 3 3"
    "expand_backward (3,1): 4 8 12"
    "mydev:1 expand (2,3,2): 1 1 2 2 3 3 1 1 2 2 3 3"
    "mydev:1 back on cpu (1,3): 1 2 3"
    "mydev:1 repeat: repeat: no kernel registered for device type mydev. Register one with register_kernel(\"repeat\", \"mydev\", fn)")
  foreach(line IN LISTS expected)
    string(FIND "${out}" "${line}\n" pos)
    if(pos EQUAL -1)
      message(FATAL_ERROR "consumer output lacks the line '${line}'; it printed:\n${out}")
    endif()
  endforeach()
  message(STATUS "consumer output:\n${out}")
endfunction()

# The program must have loaded liboneflow_lite from the prefix, not from the build tree or elsewhere.
function(check_loads_from_prefix exe)
  find_program(LDD ldd)
  if(NOT LDD)
    return()
  endif()
  run_checked("ldd" ${LDD} ${exe})
  string(REGEX MATCH "liboneflow_lite[^ ]* => ([^ ]*)" m "${run_output}")
  if(NOT m)
    return()  # a static library: nothing to load
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" loaded)
  file(REAL_PATH "${prefix}/${OFL_LIBDIR}" want_dir)
  cmake_path(GET loaded PARENT_PATH loaded_dir)
  if(NOT loaded_dir STREQUAL want_dir)
    message(FATAL_ERROR "${exe} loads ${loaded}, not the library in ${want_dir}")
  endif()
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${prefix}")
  run_checked("cmake --install" ${CMAKE_COMMAND} --install "${OFL_BUILD_DIR}" --prefix "${prefix}")
  set(must_exist
    include/oneflow_lite/oneflow_lite.h include/oneflow_lite/tensor.h
    include/oneflow_lite/version.h include/oneflow_lite/functional/functional.h
    ${OFL_LIBDIR}/cmake/oneflow_lite/oneflow_liteConfig.cmake
    ${OFL_LIBDIR}/cmake/oneflow_lite/oneflow_liteConfigVersion.cmake
    ${OFL_LIBDIR}/cmake/oneflow_lite/oneflow_liteTargets.cmake
    ${OFL_LIBDIR}/pkgconfig/oneflow_lite.pc)
  foreach(f IN LISTS OFL_LIBRARY_FILES)
    list(APPEND must_exist ${OFL_LIBDIR}/${f})
  endforeach()
  foreach(f IN LISTS must_exist)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "not installed: ${prefix}/${f}")
    endif()
  endforeach()
  # The SONAME link and the development link point at the real file (first in OFL_LIBRARY_FILES).
  list(LENGTH OFL_LIBRARY_FILES n)
  if(n GREATER 1)
    list(POP_FRONT OFL_LIBRARY_FILES real)
    foreach(link IN LISTS OFL_LIBRARY_FILES)
      if(NOT link STREQUAL real AND NOT IS_SYMLINK "${prefix}/${OFL_LIBDIR}/${link}")
        message(FATAL_ERROR "${prefix}/${OFL_LIBDIR}/${link} is not a symlink to ${real}")
      endif()
    endforeach()
  endif()
  foreach(f tensor_impl.h small_object.h settings.h identifier.h functional/functor_util.h)
    if(EXISTS "${prefix}/include/oneflow_lite/${f}")
      message(FATAL_ERROR "internal header installed: include/oneflow_lite/${f}")
    endif()
  endforeach()
  foreach(d vm kernels ops)
    if(EXISTS "${prefix}/include/${d}")
      message(FATAL_ERROR "internal headers installed: include/${d}")
    endif()
  endforeach()

elseif(MODE STREQUAL "headers")
  file(GLOB_RECURSE headers RELATIVE "${prefix}/include" "${prefix}/include/*.h")
  if(NOT headers)
    message(FATAL_ERROR "no headers under ${prefix}/include")
  endif()
  set(tu_dir "${OFL_WORK_DIR}/headers")
  file(REMOVE_RECURSE "${tu_dir}")
  set(tus "")
  foreach(h IN LISTS headers)
    # Every header that an installed header includes with quotes must be installed too.
    file(STRINGS "${prefix}/include/${h}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" inc "${inc}")
      if(NOT EXISTS "${prefix}/include/${inc}")
        message(FATAL_ERROR "installed header ${h} includes \"${inc}\", which is not installed")
      endif()
    endforeach()
    string(MAKE_C_IDENTIFIER "${h}" id)
    file(WRITE "${tu_dir}/${id}.cpp" "#include \"${h}\"\n")
    list(APPEND tus "${tu_dir}/${id}.cpp")
  endforeach()
  run_checked("compiling each installed header alone" ${OFL_CXX} -std=c++17 -fsyntax-only
    -I${prefix}/include ${tus})
  list(LENGTH headers n)
  message(STATUS "${n} installed headers compile on their own: ${headers}")

elseif(MODE STREQUAL "cmake")
  set(build "${OFL_WORK_DIR}/consumer-cmake")
  file(REMOVE_RECURSE "${build}")
  set(gen_args -G "${OFL_GENERATOR}")
  if(OFL_MAKE_PROGRAM)
    list(APPEND gen_args -DCMAKE_MAKE_PROGRAM=${OFL_MAKE_PROGRAM})
  endif()
  run_checked("configuring the consumer" ${CMAKE_COMMAND} -S "${consumer_src}" -B "${build}"
    ${gen_args} -DCMAKE_CXX_COMPILER=${OFL_CXX} -DCMAKE_PREFIX_PATH=${prefix})
  # find_package must have picked the package in the prefix, not one installed elsewhere.
  file(STRINGS "${build}/CMakeCache.txt" dir_line REGEX "^oneflow_lite_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" found_dir "${dir_line}")
  file(REAL_PATH "${found_dir}" found_dir)
  file(REAL_PATH "${prefix}/${OFL_LIBDIR}/cmake/oneflow_lite" want_dir)
  if(NOT found_dir STREQUAL want_dir)
    message(FATAL_ERROR "find_package(oneflow_lite) found ${found_dir}, not ${want_dir}")
  endif()
  run_checked("building the consumer" ${CMAKE_COMMAND} --build "${build}")
  run_checked("running the consumer" "${build}/ofl_consumer")
  check_consumer_output("${run_output}")
  check_loads_from_prefix("${build}/ofl_consumer")

elseif(MODE STREQUAL "pkgconfig")
  set(build "${OFL_WORK_DIR}/consumer-pkgconfig")
  file(REMOVE_RECURSE "${build}")
  file(MAKE_DIRECTORY "${build}")
  set(ENV{PKG_CONFIG_PATH} "${prefix}/${OFL_LIBDIR}/pkgconfig")
  run_checked("pkg-config --modversion" ${OFL_PKG_CONFIG} --modversion oneflow_lite)
  string(STRIP "${run_output}" modversion)
  if(NOT modversion STREQUAL OFL_VERSION)
    message(FATAL_ERROR "pkg-config says version ${modversion}, the build is ${OFL_VERSION}")
  endif()
  run_checked("pkg-config --cflags --libs" ${OFL_PKG_CONFIG} --cflags --libs oneflow_lite)
  separate_arguments(flags UNIX_COMMAND "${run_output}")
  run_checked("pkg-config --variable=libdir" ${OFL_PKG_CONFIG} --variable=libdir oneflow_lite)
  string(STRIP "${run_output}" libdir)
  run_checked("compiling main.cpp with pkg-config's flags" ${OFL_CXX} -std=c++17
    "${consumer_src}/main.cpp" -o "${build}/ofl_consumer" ${flags} -Wl,-rpath,${libdir})
  run_checked("running the consumer" "${build}/ofl_consumer")
  check_consumer_output("${run_output}")
  check_loads_from_prefix("${build}/ofl_consumer")

else()
  message(FATAL_ERROR "MODE must be install, headers, cmake or pkgconfig, not '${MODE}'")
endif()
