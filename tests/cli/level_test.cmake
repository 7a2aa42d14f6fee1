# handoff level on the project's staircase level (tests/data/level/make_stairs.py): the JSON has
# its meshes, triangles and bounds; a file that is not a level exits non-zero naming the file.
execute_process(COMMAND ${HANDOFF} level ${LEVELS}/stairs.gltf --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "level failed (${rc}): ${err}")
endif()
string(JSON meshes GET "${out}" meshes)
string(JSON triangles GET "${out}" triangles)
string(JSON dropped GET "${out}" droppedDegenerate)
string(JSON top GET "${out}" boundsMax 1)
string(JSON stairs GET "${out}" perMesh 1 name)
string(JSON warnings LENGTH "${out}" warnings)
if(NOT meshes EQUAL 3 OR NOT triangles EQUAL 19 OR NOT dropped EQUAL 1 OR NOT stairs STREQUAL "Stairs"
   OR warnings LESS 1)
  message(FATAL_ERROR "unexpected level output: meshes ${meshes} triangles ${triangles} dropped ${dropped} "
                      "mesh 1 '${stairs}' warnings ${warnings}\n${out}")
endif()
if(top LESS 0.5999 OR top GREATER 0.6001)
  message(FATAL_ERROR "unexpected top of the level ${top} (0.6 m)")
endif()
execute_process(COMMAND ${HANDOFF} level ${LEVELS}/make_stairs.py RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "make_stairs.py: not a glTF or GLB file")
  message(FATAL_ERROR "a file that is not glTF must fail naming the file; got ${rc}: ${err}")
endif()
message("level ok: ${meshes} meshes, ${triangles} triangles, top at ${top} m")
