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
