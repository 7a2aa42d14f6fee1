# CTest web.viewer: writes the demo replays, installs the viewer's npm packages when missing or
# stale (npm ci, from web/package-lock.json), then runs the browser test (node --test web/test/viewer.test.mjs).
# -DDEMO=<handoff_replay_demo> -DWEB_DIR=<web/> -DWORK_DIR=<scratch folder>
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/replays)
execute_process(COMMAND ${DEMO} ${WORK_DIR}/replays RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "handoff_replay_demo failed (${rc})")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/../support/web_npm.cmake)

execute_process(COMMAND ${CMAKE_COMMAND} -E env HANDOFF_REPLAY_DIR=${WORK_DIR}/replays
                        ${NODE} --test ${WEB_DIR}/test/viewer.test.mjs
                WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the viewer's browser test failed (${rc}); screenshots in ${WEB_DIR}/test/out/")
endif()
