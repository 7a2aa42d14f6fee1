# The tool's option checks (apps/handoff/command.h): each kind of check a command declares is
# enforced on the command line, and a refused value exits non-zero with a message naming the
# option and why, before any work starts.
function(expect_refused why pattern)
  execute_process(COMMAND ${HANDOFF} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT "${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${why}: `handoff ${ARGN}` must fail with \"${pattern}\"; got ${rc}: ${err}${out}")
  endif()
endfunction()

expect_refused("required" "file is required" inspect)
expect_refused("existing file" "scenario: File does not exist: ${DATA}/no_such.json" run ${DATA}/no_such.json)
expect_refused("existing folder" "dir: Directory does not exist" corpus ${DATA}/no_such_dir)
expect_refused("existing folder, the tool's own option" "--data: Directory does not exist" --data ${DATA}/no_such_dir
               inspect x.bvh)
expect_refused("positive number" "--mass: Value -1 not in range 0" build-asset ${DATA}/cmu/01_01.bvh -o unused.json
               --mass -1)
expect_refused("integer range" "--threads: Value 0 not in range 1 to 64" bench crowd --threads 0)
expect_refused("real range" "--minutes: Value 0 not in range 0.05" bench soak --minutes 0)
expect_refused("one of a set" "--engine: foo not in {bullet" demo --engine foo)
expect_refused("excluded pair" "--engine excludes --compare-engines" demo --compare-engines --engine bullet)
expect_refused("a subcommand required" "A subcommand is required" bench)

# An option whose value may be left out shows the value it then takes.
execute_process(COMMAND ${HANDOFF} live --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}" MATCHES "--bench FLOAT=8")
  message(FATAL_ERROR "live --help must show --bench's value when left out (8); got ${rc}: ${out}${err}")
endif()
message("options ok: 10 refused values, 1 optional value")
