# A program that uses handoff's core without any adapter links no engine: BINARY's symbols (nm)
# name none of Bullet's classes (bt*), ODE's functions (dWorld*, dBody*, dJoint*, dGeom*,
# dSpace*) or handoff's adapter factories (createBulletWorld, createOdeWorld). Statically linked,
# anything of an engine the program pulled in would be in the binary.
#
#   cmake -DBINARY=build/tests/handoff_example_own_engine -P no_engine_symbols_check.cmake
#   cmake -DBINARY=<a binary with Bullet> -DEXPECT_ENGINE=ON -P no_engine_symbols_check.cmake   (self-test)
cmake_policy(VERSION 3.20)
if(NOT BINARY)
  message(FATAL_ERROR "BINARY not given")
endif()
find_program(NM nm REQUIRED)
execute_process(COMMAND ${NM} -C ${BINARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm ${BINARY} failed (${rc})")
endif()
string(REGEX MATCHALL
       "[ \n](btRigidBody|btDiscreteDynamicsWorld|btCollisionWorld|dWorldCreate|dBodyCreate|dJointCreate[A-Za-z]*|dGeom[A-Za-z]*|dSpaceCollide|handoff::createBulletWorld|handoff::createOdeWorld)[^\n]*"
       found "${symbols}")
list(LENGTH found count)
if(EXPECT_ENGINE)
  if(count EQUAL 0)
    message(FATAL_ERROR "self-test: ${BINARY} should hold engine symbols and none were found")
  endif()
  message(STATUS "self-test: ${count} engine symbols found in ${BINARY}, as expected")
  return()
endif()
if(NOT count EQUAL 0)
  list(SUBLIST found 0 5 first)
  message(FATAL_ERROR "${BINARY} links an engine (${count} symbols), e.g.:\n${first}")
endif()
string(LENGTH "${symbols}" size)
message(STATUS "${BINARY}: no engine symbol (${size} bytes of nm output scanned)")
