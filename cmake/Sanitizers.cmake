# OFL_SANITIZE="address;undefined" or "thread": instruments the library, tests and tools alike.
# tools/ofl.sh test builds the VM, pool and API suites both ways (build-asan, build-tsan); the
# runtime options and suppression files it runs them with are in tests/sanitizers/.
if(OFL_SANITIZE)
  list(JOIN OFL_SANITIZE "," _ofl_san)
  add_compile_options(-fsanitize=${_ofl_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_ofl_san})
  if("thread" IN_LIST OFL_SANITIZE)
    # Debian's libtbb is not built with TSan: the hand-off between a oneTBB worker and the thread
    # that called tbb::parallel_for is invisible to TSan, so every parallel kernel would be reported
    # as a race. OFL_TSAN makes ofl::kernels::ParallelFor (kernels/parallel.h) run the range on the
    # calling thread; the VM's own threads and synchronisation stay fully checked.
    add_compile_definitions(OFL_TSAN)
  endif()
endif()
