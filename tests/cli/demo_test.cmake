# The README's main command end to end: `handoff demo --out DIR` writes the report, metrics and a
# replay per scenario and prints a progress line per scenario; `handoff run` of a malformed
# scenario fails naming the field; `handoff export` writes a replay. (Threshold rows and the
# report's figures are checked in tests/runner/demo_suite_test.cpp on the same code path.)
set(out ${WORK}/demo_cli)
file(REMOVE_RECURSE ${out})
execute_process(COMMAND ${HANDOFF} demo --out ${out} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
message("${stdout}")
# Exit 0 when every scenario passes, 1 when a threshold fails (the report says which).
if(NOT (rc EQUAL 0 OR rc EQUAL 1) OR NOT stdout MATCHES "\\[14/14\\] knockback")
  message(FATAL_ERROR "handoff demo failed (${rc}):\n${stdout}\n${err}")
endif()
foreach(name run_handoff jump_handoff spin_handoff punch_handoff teleport_handoff death_down_steps
             knockdown_getup_supine knockdown_getup_prone powered_hit_reaction arm_break walk_limb_lag
             prop_hit_death ledge_landing knockback)
  if(NOT EXISTS ${out}/${name}.glb)
    message(FATAL_ERROR "no replay ${out}/${name}.glb")
  endif()
endforeach()
file(READ ${out}/metrics.json metrics)
string(JSON passed GET "${metrics}" summary scenariosPassed)
if(NOT stdout MATCHES "${passed} of 14 scenarios passed")
  message(FATAL_ERROR "the printed summary disagrees with metrics.json (${passed} passed)")
endif()
file(READ ${out}/report.html html)
if(NOT html MATCHES "<svg class=\"plot\"" OR NOT html MATCHES "id=\"metrics\"")
  message(FATAL_ERROR "report.html has no plots or no embedded metrics")
endif()

file(WRITE ${out}/bad.json "{\"character\": {\"file\": \"${DATA}/deepmimic/humanoid3d_run.bvh\"}, \"events\": [{\"time\": \"0.5\", \"type\": \"ragdoll\"}], \"endTime\": 1}")
execute_process(COMMAND ${HANDOFF} run ${out}/bad.json --out ${out}/bad RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${stdout}${err}" MATCHES "events\\[0\\]\\.time: expected a number")
  message(FATAL_ERROR "a string time must fail naming events[0].time; got ${rc}:\n${stdout}\n${err}")
endif()
file(WRITE ${out}/badclip.json "{\"character\": {\"file\": \"${DATA}/deepmimic/humanoid3d_run.bvh\"}, \"clip\": {\"name\": \"humanoid3d_rn\"}, \"endTime\": 1}")
execute_process(COMMAND ${HANDOFF} run ${out}/badclip.json --out ${out}/badclip RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${stdout}${err}" MATCHES "clip\\.name: no clip named 'humanoid3d_rn'")
  message(FATAL_ERROR "an unknown clip must fail naming clip.name; got ${rc}:\n${stdout}\n${err}")
endif()

execute_process(COMMAND ${HANDOFF} export ${SCENARIOS}/jump_handoff.json -o ${out}/jump.glb
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${out}/jump.glb OR NOT stdout MATCHES "211 frames at 60 Hz")
  message(FATAL_ERROR "export failed (${rc}):\n${stdout}\n${err}")
endif()
message("demo, run and export ok")
