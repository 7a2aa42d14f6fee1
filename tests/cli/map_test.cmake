# handoff map writes the humanoid map of a file; a slot edited by hand is used by build-asset --map
# (the report says "user" and the asset maps the slot to the edited bone); a map naming a bone the
# skeleton lacks fails with the JSON path and the bone; a character out of human scale (the 5 m
# Knight) is refused with the --unit-scale that fixes it, and builds with it.
set(out ${WORK}/map_cli)
file(REMOVE_RECURSE ${out})
file(MAKE_DIRECTORY ${out})
set(rig ${DATA}/rigs/blender_metarig.glb)

execute_process(COMMAND ${HANDOFF} map ${rig} RESULT_VARIABLE rc OUTPUT_VARIABLE map ERROR_VARIABLE err)
string(JSON version ERROR_VARIABLE bad GET "${map}" version)
if(NOT rc EQUAL 0 OR bad OR NOT version EQUAL 1 OR NOT err MATCHES "humanoid map")
  message(FATAL_ERROR "handoff map failed (${rc}, ${bad}):\n${map}\n${err}")
endif()
string(JSON automatic GET "${map}" slots lower_spine)
if(NOT automatic STREQUAL "spine.002")
  message(FATAL_ERROR "the metarig's lower spine maps to '${automatic}', expected spine.002")
endif()

# The automatic map, then the map with lower_spine moved to spine.001 by hand.
execute_process(COMMAND ${HANDOFF} build-asset ${rig} -o ${out}/auto.json RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "lower_spine +spine\\.002 +structure")
  message(FATAL_ERROR "build-asset without a map failed (${rc}):\n${stdout}\n${err}")
endif()
string(JSON map SET "${map}" slots lower_spine "\"spine.001\"")
file(WRITE ${out}/map.json "${map}")
execute_process(COMMAND ${HANDOFF} build-asset ${rig} --map ${out}/map.json -o ${out}/edited.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "lower_spine +spine\\.001 +user +1\\.00")
  message(FATAL_ERROR "build-asset --map did not use the edited slot (${rc}):\n${stdout}\n${err}")
endif()
file(READ ${out}/auto.json auto)
file(READ ${out}/edited.json edited)
string(JSON autoJoint GET "${auto}" map lower_spine)
string(JSON editedJoint GET "${edited}" map lower_spine)
string(JSON pelvisJoint GET "${edited}" map pelvis)
math(EXPR afterPelvis "${pelvisJoint} + 1")
if(autoJoint EQUAL editedJoint OR NOT editedJoint EQUAL afterPelvis)
  message(FATAL_ERROR "the edited asset maps lower_spine to joint ${editedJoint} (automatic: ${autoJoint}, "
                      "spine.001 is the joint after the pelvis ${pelvisJoint})")
endif()

# A bone the skeleton does not have: the JSON path and the bone are named, nothing is written.
string(JSON broken SET "${map}" slots head "\"Skull\"")
file(WRITE ${out}/broken_map.json "${broken}")
execute_process(COMMAND ${HANDOFF} build-asset ${rig} --map ${out}/broken_map.json -o ${out}/broken.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "broken_map\\.json: slots\\.head: .*'Skull'" OR EXISTS ${out}/broken.json)
  message(FATAL_ERROR "a map naming a missing bone must fail naming slots.head and 'Skull' (${rc}):\n${stdout}\n${err}")
endif()

# The Knight (hip 2.13 m in the metres glTF declares): refused with the fix, built with it.
set(knight ${DATA}/rigs/quaternius_KnightCharacter.glb)
execute_process(COMMAND ${HANDOFF} build-asset ${knight} -o ${out}/knight.json RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR EXISTS ${out}/knight.json OR NOT err MATCHES "--unit-scale ([0-9.]+)")
  message(FATAL_ERROR "the 5 m Knight must be refused with the --unit-scale that fixes it (${rc}):\n${stdout}\n${err}")
endif()
set(fix ${CMAKE_MATCH_1})
execute_process(COMMAND ${HANDOFF} build-asset ${knight} --unit-scale ${fix} -o ${out}/knight.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "hip height 0\\.95")
  message(FATAL_ERROR "the Knight with --unit-scale ${fix} must build at a 0.95 m hip (${rc}):\n${stdout}\n${err}")
endif()
execute_process(COMMAND ${HANDOFF} validate ${out}/knight.json RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "ok")
  message(FATAL_ERROR "the scaled Knight must validate (${rc}):\n${stdout}\n${err}")
endif()
message("handoff map, build-asset --map and --unit-scale ok (Knight fixed with --unit-scale ${fix})")
