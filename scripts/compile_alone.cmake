# Lists the compile-alone commands of a configured build (scripts/compile_alone.sh): every source
# file that the build compiles only inside a unity batch after another file (the first of a batch
# has nothing before it), with its target's exact command and -fsyntax-only in place of the
# object file. cmake -DBUILD_DIR=... -DOUT=... [-DALL=ON] -P this.
# ALL=ON adds the files the build compiles on their own (a whole tree check, any configuration).
cmake_minimum_required(VERSION 3.25)
file(READ "${BUILD_DIR}/compile_commands.json" json)
string(JSON count LENGTH "${json}")
math(EXPR last "${count} - 1")
set(lines "")
foreach(i RANGE ${last})
  string(JSON command GET "${json}" ${i} command)
  string(JSON file GET "${json}" ${i} file)
  string(JSON directory GET "${json}" ${i} directory)
  # The command ends with `-o OBJECT -c SOURCE` (CMake's compile_commands.json).
  string(REGEX REPLACE " -o [^ ]+ -c [^ ]+$" "" flags "${command}")
  if(flags STREQUAL command)
    message(FATAL_ERROR "unexpected compile command (no trailing -o ... -c ...): ${command}")
  endif()
  set(sources "")
  if(file MATCHES "/Unity/unity_[^/]*\\.cxx$")
    file(STRINGS "${file}" includes REGEX "^#include \"")
    # The first file of a batch is compiled with nothing before it: alone, by the build itself.
    if(NOT ALL)
      list(POP_FRONT includes)
    endif()
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"(.*)\"$" "\\1" source "${line}")
      list(APPEND sources "${source}")
    endforeach()
  elseif(ALL)
    set(sources "${file}")
  endif()
  foreach(source ${sources})
    string(APPEND lines "cd '${directory}' && ${flags} -fsyntax-only '${source}'\n")
  endforeach()
endforeach()
file(WRITE "${OUT}" "${lines}")
