# handoff corpus --quick --json on the real-file corpus (issue 31; ../shared/data/corpus, not in a
# user's clone): every rig imported, mapped, built and validated against rigs.tsv, every clip handed
# off once as a full ragdoll and once powered with the scenario runner's checks. Holds what the
# import/mapping side guarantees: at least 95 % of the rigs right, every handoff run to its end, no
# non-finite figure. The per-row pass rates are printed (a measurement; bench/results/corpus.md).
# With a levels.tsv, every level loads and holds what its row states (cmd_corpus_levels.cpp).
execute_process(COMMAND ${HANDOFF} --data ${DATA} corpus ${CORPUS} --quick --json RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE progress)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "handoff corpus failed (${rc}):\n${progress}")
endif()
string(JSON rigsRight GET "${out}" rigs right)
string(JSON rigsCount GET "${out}" rigs count)
string(JSON runs GET "${out}" clips runs)
string(JSON completed GET "${out}" clips completed)
string(JSON nonFinite GET "${out}" clips nonFinite)
message(STATUS "rigs right ${rigsRight} of ${rigsCount}; handoffs ${completed} of ${runs} ran to the end, "
               "${nonFinite} with a non-finite value")
string(JSON rowCount LENGTH "${out}" clips rows)
math(EXPR last "${rowCount} - 1")
foreach(i RANGE ${last})
  string(JSON row MEMBER "${out}" clips rows ${i})
  string(JSON passed GET "${out}" clips rows ${row} passed)
  string(JSON ran GET "${out}" clips rows ${row} ran)
  string(JSON median GET "${out}" clips rows ${row} median)
  string(JSON maximum GET "${out}" clips rows ${row} max)
  message(STATUS "  ${row}: ${passed}/${ran} (median ${median}, max ${maximum})")
endforeach()
math(EXPR rigsNeeded "(${rigsCount} * 95 + 99) / 100")
if(rigsRight LESS rigsNeeded)
  message(FATAL_ERROR "only ${rigsRight} of ${rigsCount} corpus rigs map right (95 % is ${rigsNeeded}):\n${progress}")
endif()
if(NOT completed EQUAL runs OR NOT nonFinite EQUAL 0 OR runs EQUAL 0)
  message(FATAL_ERROR "${completed} of ${runs} corpus handoffs ran to the end, ${nonFinite} with a non-finite "
                      "value:\n${progress}")
endif()
string(JSON levelsCount ERROR_VARIABLE noLevels GET "${out}" levels count)
if(NOT noLevels)
  string(JSON levelsRight GET "${out}" levels right)
  message(STATUS "levels right ${levelsRight} of ${levelsCount}")
  if(NOT levelsRight EQUAL levelsCount)
    message(FATAL_ERROR "only ${levelsRight} of ${levelsCount} corpus levels load as levels.tsv states:\n${progress}")
  endif()
endif()

# The same clips with every character capsule only while animated (issue 29,
# CharacterSettings::capsuleOnlyWhileAnimated): its handoffs start from bodies out of the
# simulation and must fail exactly the rows the kinematic bodies fail, handoff by handoff (on
# the whole corpus, --times 4: every row's rate, median and max identical, 256 of 256 handoffs).
execute_process(COMMAND ${HANDOFF} --data ${DATA} corpus ${CORPUS} --quick --clips-only --capsule-only --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE capsule ERROR_VARIABLE progress)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "handoff corpus --capsule-only failed (${rc}):\n${progress}")
endif()
string(JSON handoffCount LENGTH "${out}" clips handoffs)
string(JSON capsuleCount LENGTH "${capsule}" clips handoffs)
if(NOT handoffCount EQUAL capsuleCount OR handoffCount EQUAL 0)
  message(FATAL_ERROR "capsule only: ${capsuleCount} handoffs against ${handoffCount}")
endif()
math(EXPR last "${handoffCount} - 1")
set(differ 0)
foreach(i RANGE ${last})
  string(JSON a GET "${out}" clips handoffs ${i} failed)
  string(JSON b GET "${capsule}" clips handoffs ${i} failed)
  string(JSON file GET "${out}" clips handoffs ${i} file)
  string(JSON time GET "${out}" clips handoffs ${i} time)
  string(JSON mode GET "${out}" clips handoffs ${i} mode)
  string(JSON equal EQUAL "${a}" "${b}")
  if(NOT equal)
    math(EXPR differ "${differ} + 1")
    message(STATUS "capsule only differs: ${file} at ${time} s (${mode}):\n  kinematic ${a}\n  capsule only ${b}")
  endif()
endforeach()
message(STATUS "capsule only: ${handoffCount} handoffs, ${differ} whose failed rows differ from the kinematic run's")
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "capsule only changed the rows of ${differ} corpus handoffs")
endif()
