# One static library per module (src/<module>/*.cpp), named handoff_<module> with the alias
# handoff::<module>. Modules are separate targets so each builds and tests on its own.
# Warnings on the project's own targets only (PRIVATE: never on the exported targets' usage
# requirements, so a consumer's flags stay its own). They are errors only when asked for
# (HANDOFF_WARNINGS_AS_ERRORS, root CMakeLists.txt): the project's CI and the `dev` preset turn it
# on; a user's plain configure, find_package or add_subdirectory never gets -Werror, because a
# newer compiler's new warning must not break someone else's build.
set(HANDOFF_WARNINGS -Wall -Wextra -Wpedantic)
if(HANDOFF_WARNINGS_AS_ERRORS)
  list(APPEND HANDOFF_WARNINGS -Werror)
  # GCC 12's -Wrestrict fires inside libstdc++'s std::string operator+ at -O3 (a known false
  # positive, GCC bug 105651): it stays a warning with GCC 12, every other warning an error.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND HANDOFF_WARNINGS -Wno-error=restrict)
  endif()
endif()
set(HANDOFF_MODULES "" CACHE INTERNAL "")

# Unity builds (CMAKE_UNITY_BUILD=ON, what scripts/test.sh uses to keep CI short) compile a
# target's files together. These files define helpers in anonymous namespaces under the same
# names as a sibling file of their target (kDeg, kData, fmt, ...), so they compile alone.
set(HANDOFF_UNITY_ALONE
  src/asset/stabilize.cpp src/asset/validate.cpp src/crowd/crowd.cpp
  tests/controller/powered_test.cpp tests/drive/drive_law_test.cpp tests/drive/drive_stiffness_test.cpp
  tests/drive/pin_test.cpp tests/rig/import_test.cpp
  tests/scenario/scenario_validate_test.cpp)

function(handoff_unity_alone)
  foreach(file ${HANDOFF_UNITY_ALONE})
    if(EXISTS "${PROJECT_SOURCE_DIR}/${file}")
      set_source_files_properties("${PROJECT_SOURCE_DIR}/${file}" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()

# The module named `handoff` (the handoff itself) is the library handoff_core / handoff::core,
# because handoff::handoff is the umbrella target.
function(handoff_module_name name out)
  if(name STREQUAL "handoff")
    set(${out} core PARENT_SCOPE)
  else()
    set(${out} ${name} PARENT_SCOPE)
  endif()
endfunction()

function(handoff_add_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  handoff_module_name(${name} lib)
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  handoff_unity_alone()
  add_library(handoff_${lib} STATIC ${sources})
  add_library(handoff::${lib} ALIAS handoff_${lib})
  target_include_directories(handoff_${lib}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(handoff_${lib} PRIVATE ${HANDOFF_WARNINGS})
  if(NOT HANDOFF_UNITY_LIBRARIES STREQUAL "")
    set_target_properties(handoff_${lib} PROPERTIES UNITY_BUILD ${HANDOFF_UNITY_LIBRARIES})
  endif()
  target_link_libraries(handoff_${lib} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(handoff_${lib} PROPERTIES EXPORT_NAME ${lib})
  set(HANDOFF_MODULES ${HANDOFF_MODULES} handoff_${lib} CACHE INTERNAL "")
endfunction()

# A GoogleTest executable's compile options. Its own code compiles at HANDOFF_TEST_OPTIMIZE, -O1
# in the optimized configurations by default: the libraries it tests keep their -O3, so the tests
# run the optimized code, and the tests' assertions and loops gain nothing from -O3, which costs
# half as much again to compile (a unity batch of the runner's tests: 23.1 s at -O3, 15.2 s at -O1).
# The libFuzzer coverage counters (HANDOFF_FUZZ) guide the fuzzers through the libraries they
# link; no fuzzer links a test, so the tests' own code goes without them (11 % less compile time
# in the sanitizer build). docs/ARCHITECTURE.md, "The test suite's time".
set(HANDOFF_TEST_OPTIMIZE "$<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>" CACHE STRING
    "compile options for the tests' own code (after the configuration's: the last -O wins)")
function(handoff_test_options target)
  target_compile_options(${target} PRIVATE ${HANDOFF_WARNINGS} ${HANDOFF_TEST_OPTIMIZE})
  if(HANDOFF_FUZZ AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -fno-sanitize=fuzzer-no-link)
  endif()
endfunction()

# Tests of a module: tests/<module>/*.cpp become one GoogleTest executable.
function(handoff_add_module_tests name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp")
  if(NOT sources)
    return()
  endif()
  handoff_module_name(${name} lib)
  handoff_unity_alone()
  add_executable(handoff_${name}_tests ${sources})
  handoff_test_options(handoff_${name}_tests)
  target_include_directories(handoff_${name}_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(handoff_${name}_tests PRIVATE handoff::${lib} ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(handoff_${name}_tests PRIVATE
    HANDOFF_DATA_DIR="${PROJECT_SOURCE_DIR}/data" HANDOFF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  handoff_register_gtests(handoff_${name}_tests ${name})
endfunction()

# CTest tests of a GoogleTest binary. By default one CTest test per GoogleTest test
# (gtest_discover_tests: a failure names its test, ctest -R picks one). With HANDOFF_TEST_SHARDS
# = N > 0, N tests per binary instead (<binary>.shard<i>, GoogleTest's own sharding: every test
# runs once, in one of N processes): what the sanitizer build uses, where starting a process is
# most of a short test's time (ASan's shadow memory, LeakSanitizer's scan at exit: 0.5-0.8 s a
# process against 10-50 ms in the normal build; docs/ARCHITECTURE.md, "The test suite's time").
set(HANDOFF_TEST_SHARDS 0 CACHE STRING "CTest tests per GoogleTest binary (0: one per test)")
function(handoff_register_gtests target label)
  if(HANDOFF_TEST_SHARDS GREATER 0)
    math(EXPR last "${HANDOFF_TEST_SHARDS} - 1")
    foreach(i RANGE ${last})
      add_test(NAME ${target}.shard${i} COMMAND ${target})
      set_tests_properties(${target}.shard${i} PROPERTIES LABELS ${label}
                           ENVIRONMENT "GTEST_TOTAL_SHARDS=${HANDOFF_TEST_SHARDS};GTEST_SHARD_INDEX=${i}")
    endforeach()
  else()
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 120 PROPERTIES LABELS ${label})
  endif()
endfunction()
