# Installs the built project into a scratch prefix, then configures, builds and runs
# examples/consumer, tests/install/own_bullet and examples/game against it with
# find_package(handoff): what a game project does.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
set(extra "")
if(SANITIZE)
  set(extra "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
# configure_and_build(<label> <source dir> <build dir> [cmake options...]): configures and builds one
# project against the installed package; a failure names the project and prints its output.
function(configure_and_build label source build)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${source} -B ${build} -G Ninja -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                          ${ARGN} ${extra}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring ${label} against the installed package failed:\n${out}\n${err}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building ${label} failed:\n${out}\n${err}")
  endif()
endfunction()
# run_and_expect(<label> <regex> <working dir> <command...>): runs one built program; it must exit 0
# and print what matches the regex.
function(run_and_expect label regex dir)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${dir} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${label} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

configure_and_build(examples/consumer ${SOURCE_DIR}/examples/consumer ${WORK_DIR}/build)
# The importer's worker is installed, and an installed program reads a file with it.
set(worker ${WORK_DIR}/prefix/${LIBEXEC_DIR}/handoff/handoff-import-worker)
if(NOT EXISTS ${worker})
  message(FATAL_ERROR "cmake --install did not install the import worker at ${worker}")
endif()
run_and_expect(examples/consumer "imported [0-9]+ joints.*consumer ok" ${WORK_DIR}
               ${CMAKE_COMMAND} -E env HANDOFF_IMPORT_WORKER=${worker} ${WORK_DIR}/build/consumer
               ${SOURCE_DIR}/data/deepmimic/humanoid3d_getup_facedown.bvh)

# A game that links Bullet itself beside handoff (tests/install/own_bullet): its own
# btDiscreteDynamicsWorld and a handoff world in one process, on the Bullet build handoff's package
# config names (issue 26: a float Bullet beside a float64 handoff crashed at start).
configure_and_build(own_bullet ${SOURCE_DIR}/tests/install/own_bullet ${WORK_DIR}/own_bullet)
run_and_expect(own_bullet "own bullet ok" ${WORK_DIR} ${WORK_DIR}/own_bullet/own_bullet)

# The example game (examples/game): its own Bullet world, level, crates and four characters, run
# from the project root as a user runs it; it checks its own figures and exits non-zero naming a
# failed one. It links the single-precision Bullet, as games do: not built against a
# -DHANDOFF_BULLET_DOUBLE=ON handoff.
if(BULLET_DOUBLE)
  message("examples/game: skipped (handoff is built against double-precision Bullet)")
  return()
endif()
configure_and_build(examples/game ${SOURCE_DIR}/examples/game ${WORK_DIR}/game -DCMAKE_BUILD_TYPE=Release
                    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
run_and_expect(examples/game "game ok" ${SOURCE_DIR} ${CMAKE_COMMAND} -E env HANDOFF_IMPORT_WORKER=${worker}
               ${WORK_DIR}/game/game)
