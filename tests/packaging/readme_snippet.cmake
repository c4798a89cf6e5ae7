# The own-device example of docs/devices.md must be the code that CTest builds and runs through the
# installed package (tools/examples/consumer/main.cpp, between its "docs/devices.md" markers).
# Usage: cmake -DOFL_SOURCE_DIR=... -P readme_snippet.cmake
file(READ "${OFL_SOURCE_DIR}/tools/examples/consumer/main.cpp" main)
file(READ "${OFL_SOURCE_DIR}/docs/devices.md" doc)
string(REGEX MATCH "// --- docs/devices\\.md \"Your own device\": begin ---\n(.*)// --- docs/devices\\.md \"Your own device\": end ---" _ "${main}")
set(code "${CMAKE_MATCH_1}")
string(REGEX MATCH "<!-- own-device-snippet: begin -->\n```cpp\n(.*)```\n<!-- own-device-snippet: end -->" _ "${doc}")
set(shown "${CMAKE_MATCH_1}")
if(code STREQUAL "" OR shown STREQUAL "")
  message(FATAL_ERROR "markers not found (main.cpp: '${code}' docs/devices.md: '${shown}')")
endif()
if(NOT code STREQUAL shown)
  message(FATAL_ERROR "docs/devices.md's own-device example differs from tools/examples/consumer/main.cpp:\n--- main.cpp\n${code}\n--- docs/devices.md\n${shown}")
endif()
message(STATUS "docs/devices.md's own-device example matches tools/examples/consumer/main.cpp")
