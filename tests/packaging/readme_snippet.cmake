# The README's own-device example must be the code that CTest builds and runs through the installed
# package (tools/examples/consumer/main.cpp, between its "README" markers).
# Usage: cmake -DOFL_SOURCE_DIR=... -P readme_snippet.cmake
file(READ "${OFL_SOURCE_DIR}/tools/examples/consumer/main.cpp" main)
file(READ "${OFL_SOURCE_DIR}/README.md" readme)
string(REGEX MATCH "// --- README \"Your own device\": begin ---\n(.*)// --- README \"Your own device\": end ---" _ "${main}")
set(code "${CMAKE_MATCH_1}")
string(REGEX MATCH "<!-- own-device-snippet: begin -->\n```cpp\n(.*)```\n<!-- own-device-snippet: end -->" _ "${readme}")
set(shown "${CMAKE_MATCH_1}")
if(code STREQUAL "" OR shown STREQUAL "")
  message(FATAL_ERROR "markers not found (main.cpp: '${code}' README: '${shown}')")
endif()
if(NOT code STREQUAL shown)
  message(FATAL_ERROR "README.md's own-device example differs from tools/examples/consumer/main.cpp:\n--- main.cpp\n${code}\n--- README.md\n${shown}")
endif()
message(STATUS "README's own-device example matches tools/examples/consumer/main.cpp")
