# CTest web.viewer: writes the demo replays, installs the viewer's npm packages when missing or
# stale (npm ci, from web/package-lock.json), then runs the browser test (node --test web/test/viewer.test.mjs).
# -DDEMO=<handoff_replay_demo> -DWEB_DIR=<web/> -DWORK_DIR=<scratch folder>
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/replays)
execute_process(COMMAND ${DEMO} ${WORK_DIR}/replays RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "handoff_replay_demo failed (${rc})")
endif()

find_program(NODE node REQUIRED)
find_program(NPM npm REQUIRED)
# As scripts/setup.sh: npm ci when the lock file is newer than the last install's record (or
# nothing is installed).
if(${WEB_DIR}/package-lock.json IS_NEWER_THAN ${WEB_DIR}/node_modules/.package-lock.json)
  message(STATUS "web: npm ci")
  execute_process(COMMAND ${NPM} ci --no-audit --no-fund WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npm ci in ${WEB_DIR} failed (${rc})")
  endif()
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env HANDOFF_REPLAY_DIR=${WORK_DIR}/replays
                        ${NODE} --test ${WEB_DIR}/test/viewer.test.mjs
                WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the viewer's browser test failed (${rc}); screenshots in ${WEB_DIR}/test/out/")
endif()
