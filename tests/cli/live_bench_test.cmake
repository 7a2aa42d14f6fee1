# handoff live --bench on the DeepMimic run for 2 s (ragdoll at 1.0 s, a chest hit at 1.1 s, a knee
# retune at the end): it plays every frame and reports the server time per frame (thread CPU and
# wall clock), the start-up and the re-simulation. Speeds are reported, not asserted.
execute_process(COMMAND ${HANDOFF} --data ${DATA} live --bench 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "live --bench failed (${rc}): ${err}\n${out}")
endif()
foreach(line "deepmimic/humanoid3d_run.bvh, 120 frames at 60 Hz" "open \\(import, build, session start, rig\\): [0-9.]+ ms"
             "thread CPU \\[ms\\]: mean [0-9.]+ +median [0-9.]+ +p95 [0-9.]+ +max [0-9.]+"
             "wall clock \\[ms\\]: mean [0-9.]+" "tune \\(knee limit\\) and re-simulate to 0.62 s: [0-9.]+ ms")
  if(NOT out MATCHES "${line}")
    message(FATAL_ERROR "live --bench output lacks '${line}':\n${out}")
  endif()
endforeach()
message("${out}")
