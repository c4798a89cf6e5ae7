# OFL_SANITIZE="address;undefined" or "thread": instruments the library, tests and tools alike.
if(OFL_SANITIZE)
  list(JOIN OFL_SANITIZE "," _ofl_san)
  add_compile_options(-fsanitize=${_ofl_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_ofl_san})
endif()
