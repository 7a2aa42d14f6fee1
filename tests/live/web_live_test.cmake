# CTest web.live: the workbench page in headless Chromium against the real `handoff live`
# (node --test web/test/live.test.mjs). Installs the page's npm packages first when missing or
# stale (npm ci, from web/package-lock.json), as web.viewer does.
# -DHANDOFF=<handoff binary> -DWEB_DIR=<web/>
include(${CMAKE_CURRENT_LIST_DIR}/../support/web_npm.cmake)
execute_process(COMMAND ${CMAKE_COMMAND} -E env HANDOFF_BIN=${HANDOFF}
                        ${NODE} --test ${WEB_DIR}/test/live.test.mjs
                WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the workbench's browser test failed (${rc}); screenshots in ${WEB_DIR}/test/out/")
endif()
