# handoff bench crowd on a tiny scene (1 pile of 2 ragdolls, 20 steps, 1 and 2 threads): the JSON
# has the documented fields with the scene's figures and the hash is the same at both thread counts;
# --calibrate adds the plain Bullet pile of the same layout (2 ragdolls of 16 capsules, all awake
# after 20 steps of falling).
execute_process(COMMAND ${HANDOFF} --data ${DATA} bench crowd --steps 20 --piles 1 --per-pile 2 --json --calibrate
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench crowd failed (${rc}): ${err}\n${out}")
endif()
foreach(key bodies steps_per_second ms_per_step ns_per_body_step active_bodies_end hash)
  string(JSON value ERROR_VARIABLE missing GET "${out}" ${key})
  if(missing)
    message(FATAL_ERROR "bench crowd --json lacks ${key}: ${out}")
  endif()
endforeach()
string(JSON bodies GET "${out}" bodies)
string(JSON runs LENGTH "${out}" runs)
string(JSON identical GET "${out}" hash_identical_across_threads)
string(JSON h1 GET "${out}" runs 0 hash)
string(JSON h2 GET "${out}" runs 1 hash)
if(NOT bodies EQUAL 26 OR NOT runs EQUAL 2 OR NOT identical OR NOT h1 STREQUAL h2)
  message(FATAL_ERROR "unexpected bench output: bodies ${bodies} runs ${runs} hashes ${h1} ${h2}\n${out}")
endif()
string(JSON cbodies GET "${out}" bullet_calibration bodies)
string(JSON cactive GET "${out}" bullet_calibration active_bodies_end)
string(JSON cns GET "${out}" bullet_calibration ns_per_body_step)
string(JSON ratio GET "${out}" runs 1 calibrated_ratio_to_reference)
if(NOT cbodies EQUAL 32 OR NOT cactive EQUAL 32 OR NOT cns GREATER 0 OR NOT ratio GREATER 0)
  message(FATAL_ERROR "unexpected calibration: bodies ${cbodies} awake ${cactive} ns ${cns} ratio ${ratio}\n${out}")
endif()
# On ODE (when built), both solvers: two piles are two spaces, stepped on two threads at once; the
# hash must not depend on the threads (ODE's process-wide random seed is taken under a lock) and
# must differ from Bullet's (another engine ran).
if(ODE)
  foreach(engine ode ode-quick)
    execute_process(COMMAND ${HANDOFF} --data ${DATA} bench crowd --engine ${engine} --steps 40 --piles 2
                            --per-pile 2 --json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bench crowd --engine ${engine} failed (${rc}): ${err}\n${out}")
    endif()
    string(JSON named GET "${out}" engine)
    string(JSON obodies GET "${out}" bodies)
    string(JSON identical GET "${out}" hash_identical_across_threads)
    string(JSON o1 GET "${out}" runs 0 hash)
    string(JSON o2 GET "${out}" runs 1 hash)
    string(JSON ns GET "${out}" runs 0 ns_per_body_step)
    if(NOT named STREQUAL engine OR NOT obodies EQUAL 52 OR NOT identical OR NOT o1 STREQUAL o2 OR o1 STREQUAL h1
       OR NOT ns GREATER 0)
      message(FATAL_ERROR "unexpected bench --engine ${engine}: engine ${named} bodies ${obodies} hashes ${o1} ${o2}\n${out}")
    endif()
    message("bench crowd --engine ${engine} ok: ${obodies} bodies, hash ${o1} at 1 and 2 threads, ${ns} ns/body-step")
  endforeach()
endif()
message("bench crowd ok: ${bodies} bodies, hash ${h1} at 1 and 2 threads")
