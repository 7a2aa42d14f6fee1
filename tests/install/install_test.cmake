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
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build -G Ninja
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${extra}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer against the installed package failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed:\n${out}\n${err}")
endif()
# The importer's worker is installed, and an installed program reads a file with it.
set(worker ${WORK_DIR}/prefix/${LIBEXEC_DIR}/handoff/handoff-import-worker)
if(NOT EXISTS ${worker})
  message(FATAL_ERROR "cmake --install did not install the import worker at ${worker}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HANDOFF_IMPORT_WORKER=${worker}
                        ${WORK_DIR}/build/consumer ${SOURCE_DIR}/data/deepmimic/humanoid3d_getup_facedown.bvh
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "consumer ok" OR NOT out MATCHES "imported [0-9]+ joints")
  message(FATAL_ERROR "the consumer failed (${rc}):\n${out}\n${err}")
endif()

# A game that links Bullet itself beside handoff (tests/install/own_bullet): its own
# btDiscreteDynamicsWorld and a handoff world in one process, on the Bullet build handoff's package
# config names (issue 26: a float Bullet beside a float64 handoff crashed at start).
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/own_bullet -B ${WORK_DIR}/own_bullet -G Ninja
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${extra}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring own_bullet against the installed package failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/own_bullet RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building own_bullet failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/own_bullet/own_bullet RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "own bullet ok")
  message(FATAL_ERROR "own_bullet failed (${rc}):\n${out}\n${err}")
endif()

# The example game (examples/game): its own Bullet world, level, crates and four characters, run
# from the project root as a user runs it; it checks its own figures and exits non-zero naming a
# failed one. It links the single-precision Bullet, as games do: not built against a
# -DHANDOFF_BULLET_DOUBLE=ON handoff.
if(BULLET_DOUBLE)
  message("examples/game: skipped (handoff is built against double-precision Bullet)")
  return()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/game -B ${WORK_DIR}/game -G Ninja
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                        -DCMAKE_COMPILE_WARNING_AS_ERROR=ON ${extra}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring examples/game against the installed package failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/game RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building examples/game failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env HANDOFF_IMPORT_WORKER=${worker} ${WORK_DIR}/game/game
                WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "game ok")
  message(FATAL_ERROR "examples/game failed (${rc}):\n${err}")
endif()
