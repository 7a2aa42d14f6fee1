# handoff build-asset then validate on a real skeleton; a broken asset fails validation with a
# message naming the field and a non-zero exit.
set(out ${WORK}/asset_cli)
file(MAKE_DIRECTORY ${out})
execute_process(COMMAND ${HANDOFF} build-asset ${DATA}/deepmimic/humanoid3d_run.bvh --mass 75 -o ${out}/dm.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "13 bodies, 12 joints, 75.000 kg")
  message(FATAL_ERROR "build-asset failed (${rc}):\n${stdout}\n${err}")
endif()
execute_process(COMMAND ${HANDOFF} validate ${out}/dm.json --skeleton ${DATA}/deepmimic/humanoid3d_run.bvh
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "ok")
  message(FATAL_ERROR "validate of a fresh asset failed (${rc}):\n${stdout}\n${err}")
endif()
file(READ ${out}/dm.json text)
string(JSON text SET "${text}" bodies 0 mass "-1")
file(WRITE ${out}/broken.json "${text}")
execute_process(COMMAND ${HANDOFF} validate ${out}/broken.json RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${stdout}${err}" MATCHES "bodies\\[0\\]\\.mass")
  message(FATAL_ERROR "a negative mass must fail naming bodies[0].mass; got ${rc}:\n${stdout}\n${err}")
endif()
# Issue 27: structure is checked without --skeleton (before: "ok", exit 0).
foreach(case "bodies;3;parent;999;has parent body 999" "bodies;3;parent;3;has parent body 3"
        "bodies;1;mass;1e308;mass 1e\\+308 kg is not in" "joints;0;stiffness;1e308;stiffness 1e\\+308")
  list(GET case 0 list)
  list(GET case 1 index)
  list(GET case 2 field)
  list(GET case 3 value)
  list(GET case 4 expected)
  file(READ ${out}/dm.json text)
  string(JSON text SET "${text}" ${list} ${index} ${field} "${value}")
  file(WRITE ${out}/broken_structure.json "${text}")
  execute_process(COMMAND ${HANDOFF} validate ${out}/broken_structure.json RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                  ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT "${stdout}${err}" MATCHES "${expected}")
    message(FATAL_ERROR "${list}[${index}].${field} = ${value} must fail validation with '${expected}'; got ${rc}:\n${stdout}\n${err}")
  endif()
endforeach()
message("build-asset and validate ok")
