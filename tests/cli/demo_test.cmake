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

# With the ODE adapter built: `handoff demo --compare-engines` runs the suite on every engine into
# its own folder and writes engines.md with each row's figure per engine side by side. Its exit
# code is Bullet's run's; the other engines' failed rows are findings in the table.
if(ODE)
  set(cmp ${WORK}/demo_compare)
  file(REMOVE_RECURSE ${cmp})
  execute_process(COMMAND ${HANDOFF} demo --compare-engines --no-baselines --out ${cmp}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${cmp}/engines.md)
    message(FATAL_ERROR "handoff demo --compare-engines failed (${rc}):\n${stdout}\n${err}")
  endif()
  foreach(engine bullet ode ode-quick)
    if(NOT EXISTS ${cmp}/${engine}/metrics.json)
      message(FATAL_ERROR "--compare-engines wrote no ${cmp}/${engine}/metrics.json")
    endif()
  endforeach()
  file(READ ${cmp}/engines.md table)
  # The summary names every engine; Bullet passes every scenario; each scenario's rows carry one
  # figure per engine (row, threshold, then three engines' cells).
  if(NOT table MATCHES "\\| bullet \\| 14 / 14 \\|" OR NOT table MATCHES "\\| ode \\| [0-9]+ / 14 \\|"
     OR NOT table MATCHES "## knockback"
     OR NOT table MATCHES "\\| handoff\\.no_pop_first_step \\| <= [^|]+\\|[^|]+ pass \\|[^|]+(pass|FAIL\\*\\*) \\|[^|]+(pass|FAIL\\*\\*) \\|")
    message(FATAL_ERROR "engines.md lacks the engines side by side:\n${table}")
  endif()
  message("--compare-engines ok: ${cmp}/engines.md")
endif()
