# Included by the browser tests' CTest scripts (web.viewer, web.live): finds node and, as
# scripts/setup.sh does, runs npm ci in WEB_DIR when the lock file is newer than the last
# install's record (or nothing is installed). Sets NODE.
find_program(NODE node REQUIRED)
find_program(NPM npm REQUIRED)
if(${WEB_DIR}/package-lock.json IS_NEWER_THAN ${WEB_DIR}/node_modules/.package-lock.json)
  message(STATUS "web: npm ci")
  execute_process(COMMAND ${NPM} ci --no-audit --no-fund WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npm ci in ${WEB_DIR} failed (${rc})")
  endif()
endif()
