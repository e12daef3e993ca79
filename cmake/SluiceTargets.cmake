# Helpers that give every Sluice target the same flags.

# Warnings are errors on Sluice's own code only (third-party headers are SYSTEM).
set(SLUICE_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)

# sluice_library(<name> SOURCES ... [DEPS ...])
# A static library for one layer (src/<layer>). DEPS are the layers below it and third-party
# targets; the dependency graph in CMake mirrors DESIGN.md's layers.
function(sluice_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# sluice_test(<name> SOURCES ... [DEPS ...] [LABELS ...])
# A GoogleTest binary; each TEST becomes its own ctest test. Label slow tests "slow" so that
# `make test` skips them and `make test-all` runs them.
function(sluice_test name)
  if(NOT SLUICE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${SLUICE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    SLUICE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SLUICE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # One label per test: gtest_discover_tests (PRE_TEST) writes a label list unquoted into the
  # generated script, where only its first element would survive. "slow" replaces "unit".
  set(label unit)
  if("slow" IN_LIST ARG_LABELS)
    set(label slow)
  elseif(ARG_LABELS)
    list(GET ARG_LABELS 0 label)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${label}")
endfunction()
