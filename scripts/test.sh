#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs the CTest suite in a normal build
# and again under AddressSanitizer + UndefinedBehaviorSanitizer, then fuzzes every loader (clang).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

# The normal build is the plain Release configuration a user's build is (-O3, no debug
# information: -g does not change the generated code), with the project's -Werror
# (HANDOFF_WARNINGS_AS_ERRORS; a user's build never gets it). The libraries compile one file at a
# time, as a user's build does (the -O3 warnings, and those a unity batch hides); the tests compile
# in unity batches (CMAKE_UNITY_BUILD: a target's files compiled together, which parses the json,
# glm and gtest headers once per batch instead of once per file; cmake/HandoffModule.cmake lists
# the files that must compile alone). The suite's install.find_package test then installs this
# build and builds and runs examples/consumer against it. The sanitizer build keeps line tables
# only (-g1: stack traces still name file and line; ASan -O1 -g 46.1 s against -g1 27.7 s on the
# json-heavy translation units). Measured cold, the two configurations side by side on the same
# machine: the normal build 392 -> 493 CPU s against the RelWithDebInfo -O2 all-unity build it
# replaces (+26 %, about +50 s on 2 cores), the suite's run the same (52 / 58 CPU s).
# ccache, when installed, serves a rerun's unchanged files from its cache (all three builds);
# HANDOFF_CCACHE=0 compiles everything, as a first run does.
launcher=()
if [[ ${HANDOFF_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

echo "== normal build (plain Release, the consumer against its install) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHANDOFF_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_UNITY_BUILD=ON -DHANDOFF_UNITY_LIBRARIES=OFF "${launcher[@]}"
# A user's plain build compiles every file on its own; the tests, the tool and the benchmarks
# compile here in unity batches, which hide a file that leans on a sibling's include, using or
# helper. Each of those files alone, with its target's flags and -fsyntax-only, before building:
# docs/ARCHITECTURE.md, "The test suite's time".
bash scripts/compile_alone.sh build
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

# Both Bullet precisions (issue 26): the builds above and below use the default, single-precision
# Bullet (a game's); this one links the double-precision (-float64) libraries, Release like the
# normal build, and runs the test suite once more (the browser tests, which do not depend on it,
# and the benchmarks excepted).
echo "== double-precision Bullet build (-DHANDOFF_BULLET_DOUBLE=ON) =="
cmake -S . -B build-double -G Ninja -DCMAKE_BUILD_TYPE=Release -DHANDOFF_WARNINGS_AS_ERRORS=ON \
  -DCMAKE_UNITY_BUILD=ON -DHANDOFF_UNITY_LIBRARIES=OFF -DHANDOFF_BULLET_DOUBLE=ON -DHANDOFF_BUILD_BENCH=OFF
cmake --build build-double -j "$jobs"
ctest --test-dir build-double --output-on-failure -j "$jobs" --timeout 600 -LE web

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DHANDOFF_SANITIZE=ON -DHANDOFF_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON -DHANDOFF_WARNINGS_AS_ERRORS=ON "${launcher[@]}"
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 1200 -LE no_sanitize

# libFuzzer targets (issue 9), one per loader: BVH text, ragdoll asset JSON, scenario JSON, glTF
# levels (issue 26), and the workbench's request handling (issue 27). Built
# with clang and -DHANDOFF_FUZZ=ON (every library instrumented for coverage, ASan and UBSan);
# each runs for a fixed budget from its seed corpus and its past failures
# (tests/fuzz/regressions/<target>/, also replayed by CTest as fuzz.replay.*). Any crash,
# sanitizer report, leak or failed property stops the script; libFuzzer keeps the input as
# build-fuzz/crash-<target>-*: fix the bug and copy the input to tests/fuzz/regressions/<target>/.
echo "== libFuzzer targets (clang, ASan + UBSan + LeakSanitizer) =="
fuzz_seconds=${HANDOFF_FUZZ_SECONDS:-25}
# The apps are configured for the workbench's library (handoff_live, issue 27); only the fuzz
# targets are built.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHANDOFF_FUZZ=ON \
  -DHANDOFF_BUILD_TESTS=OFF -DHANDOFF_BUILD_BENCH=OFF -DHANDOFF_BUILD_APPS=ON -DHANDOFF_WARNINGS_AS_ERRORS=ON \
  "${launcher[@]}"
cmake --build build-fuzz -j "$jobs" --target handoff_fuzz_bvh handoff_fuzz_import handoff_fuzz_asset handoff_fuzz_scenario \
  handoff_fuzz_workbench handoff_fuzz_level
# libFuzzer runs one process: the targets fuzz $jobs at a time, each on a core of its own for its
# whole budget (one after the other, the second core stayed idle for 4 x the budget).
fuzz_one() {
  local target=$1 work=build-fuzz/work-$1
  rm -rf "$work" && mkdir -p "$work"
  local dict=()
  [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="tests/fuzz/$target.dict")
  echo "-- fuzzing $target for ${fuzz_seconds} s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/fuzz/lsan.supp" \
    "build-fuzz/tests/fuzz/handoff_fuzz_$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$target-" "${dict[@]}" \
    "$work" "tests/fuzz/corpus/$target" "tests/fuzz/regressions/$target"
}
targets=(bvh import asset scenario workbench level)
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  round=("${targets[@]:i:jobs}")
  pids=()
  for target in "${round[@]}"; do
    fuzz_one "$target" >"build-fuzz/fuzz-$target.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for k in "${!round[@]}"; do
    wait "${pids[k]}" || failed=1
    cat "build-fuzz/fuzz-${round[k]}.log"
  done
  ((failed == 0)) || { echo "fuzzing failed: see the output above and build-fuzz/crash-*"; exit 1; }
done
