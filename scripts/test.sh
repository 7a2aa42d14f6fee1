#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs the CTest suite in a normal build (gcc,
# single-precision Bullet) and again in a clang build under AddressSanitizer + UndefinedBehaviorSanitizer
# with double-precision Bullet, then fuzzes every loader from that build.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time and the CPU time its processes used (user + system, from bash's `times`),
# printed at the end (also when a phase fails): what CI spends where. On CI's 2 cores the CPU
# seconds, not the wall seconds, say what a phase costs when phases overlap or the machine is shared.
phase_times=()
phase_name=""
phase_start=$SECONDS
cpu_file=$(mktemp)
children_cpu() { # sets cpu: the finished child processes' user + system seconds so far
  times >"$cpu_file" # in this shell: a subshell's `times` would count only its own children
  cpu=$(awk 'NR == 2 {
    t = 0
    for (i = 1; i <= 2; ++i) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
    printf "%d", t }' "$cpu_file")
}
children_cpu
phase_cpu=$cpu
phase() {
  children_cpu
  if [[ -n $phase_name ]]; then
    phase_times+=("$(printf '%-18s %5d s wall %6d s CPU' "$phase_name" $((SECONDS - phase_start)) \
      $((cpu - phase_cpu)))")
  fi
  phase_name=$1
  phase_start=$SECONDS
  phase_cpu=$cpu
}
report_times() {
  phase ""
  rm -f "$cpu_file"
  echo "== time per phase (total ${SECONDS} s wall, ${cpu} s CPU) =="
  printf '  %s\n' "${phase_times[@]}"
}
trap report_times EXIT
phase "setup"
bash scripts/setup.sh
jobs=$(nproc)

# The normal build starts as a user's: the README's plain configure, build and install, as they are
# (issue 26), in this clean build folder: Release (-O3), the libraries, the import worker and the
# tool, each file compiled on its own. CI's stricter policy comes from the environment, not from an
# option: CXXFLAGS makes every warning an error (GCC 12's -Wrestrict false positive inside
# libstdc++, GCC bug 105651, stays a warning, as HANDOFF_WARNINGS_AS_ERRORS keeps it), and
# CMAKE_<LANG>_COMPILER_LAUNCHER puts ccache in front of the compiler when it is installed (a
# rerun's unchanged files come from its cache; HANDOFF_CCACHE=0 compiles everything, as a first
# run does). The installed tool must then run.
# The same folder then turns the tests and benchmarks on: the libraries' and the tool's compile
# commands do not change, so their objects are reused; the tests compile in unity batches
# (CMAKE_UNITY_BUILD: a target's files compiled together, which parses the json, glm and gtest
# headers once per batch instead of once per file; cmake/HandoffModule.cmake lists the files that
# must compile alone), each of their files also checked alone (scripts/compile_alone.sh). The
# suite's install.find_package test installs this build and builds and runs examples/consumer,
# tests/install/own_bullet and examples/game against it. The sanitizer build keeps line tables
# only (-g1: stack traces still name file and line; ASan -O1 -g 46.1 s against -g1 27.7 s on the
# json-heavy translation units).
launcher=()
if [[ ${HANDOFF_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
fi

echo "== plain build (README: configure, build, install; then the tool runs from the install) =="
phase "plain build"
rm -rf build/CMakeCache.txt build/CMakeFiles/CMakeConfigureLog.yaml build/plain-install
CXXFLAGS="-Werror -Wno-error=restrict" cmake -S . -B build -G Ninja
cmake --build build
cmake --install build --prefix build/plain-install
HANDOFF_DATA= build/plain-install/bin/handoff --version
build/plain-install/bin/handoff inspect build/plain-install/share/handoff/data/cmu/01_01.bvh >/dev/null

echo "== normal build (the same folder with the tests and benchmarks: gcc, single-precision Bullet) =="
phase "compile-alone"
cmake -S . -B build -DHANDOFF_BUILD_TESTS=ON -DHANDOFF_BUILD_BENCH=ON -DCMAKE_UNITY_BUILD=ON \
  -DHANDOFF_UNITY_LIBRARIES=OFF
# A user's plain build with the tests on compiles every file on its own; the tests and the
# benchmarks compile here in unity batches, which hide a file that leans on a sibling's include,
# using or helper. Each of those files alone, with its target's flags and -fsyntax-only, before
# building: docs/ARCHITECTURE.md, "The test suite's time".
bash scripts/compile_alone.sh build
phase "normal build"
cmake --build build -j "$jobs"
phase "normal suite"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

# One more build does the rest: clang, AddressSanitizer + UndefinedBehaviorSanitizer, the
# double-precision Bullet (-float64) libraries, and libFuzzer's coverage instrumentation on every
# library, so the same build runs the test suite under the sanitizers in the other Bullet precision
# and fuzzes every loader (issue 26: both precisions; issue 9: fuzzing). Three builds (a normal
# Release build of each precision, a gcc sanitizer build, a clang fuzz build) became two: about
# 10 minutes of CI. The normal build keeps gcc, the one users' Debian builds use; this one gets
# clang's warnings. -O1 -g1 (stack traces still name file and line). The pits' statistics (32
# seeded piles each) run in the normal build; here every test runs with the sanitizer build's
# member counts (tests/support/ensemble.h), the invariants checked every step. Each GoogleTest
# binary runs as 4 shards (HANDOFF_TEST_SHARDS, cmake/HandoffModule.cmake) instead of a process per
# test: under ASan a process costs 0.5-0.8 s to start and end, most of a short test's time.
# Unity batches of 16 files instead of CMake's 8: a file's templates (json, GoogleTest, glm) are
# instantiated, optimized and instrumented once per batch, and the runner tests' two batches
# compiled as one in 60 CPU s against 73 (clang, ASan + UBSan, -O1). Not in the normal build: its
# compile-alone check then checks the file a batch fewer no longer compiles first, alone.
# LLVM's linker: an ASan test executable links in 0.7 s of CPU against GNU ld's 2.3 s (5.8 s wall).
# The tests' own code at -O0 (HANDOFF_TEST_OPTIMIZE; the libraries keep -O1): clang -O1 spends most
# of a test batch's time in its inliner (the asset tests' batch 47 s at -O1, 13 s at -O0); the 29
# test batches compile in 122 CPU s against 387, and the suite runs about 64 CPU s longer (unoptimized
# test code, and the unoptimized copies of the templates it shares with the libraries).
lld=()
command -v ld.lld >/dev/null && lld=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
echo "== sanitizer build (clang, ASan + UBSan, double-precision Bullet, libFuzzer targets) =="
phase "sanitizer build"
CC=clang CXX=clang++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DCMAKE_C_FLAGS_DEBUG="-g1 -O1" -DHANDOFF_SANITIZE=ON \
  -DHANDOFF_FUZZ=ON -DHANDOFF_BULLET_DOUBLE=ON -DHANDOFF_BUILD_TESTS=ON -DHANDOFF_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
  -DHANDOFF_WARNINGS_AS_ERRORS=ON -DHANDOFF_TEST_SHARDS=4 -DHANDOFF_TEST_OPTIMIZE=-O0 "${lld[@]}" "${launcher[@]}"
cmake --build build-san -j "$jobs"
phase "sanitizer suite"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-san --output-on-failure -j "$jobs" --timeout 1200 -LE no_sanitize

# libFuzzer targets (issue 9), one per loader: BVH text, Assimp import, ragdoll asset JSON,
# scenario JSON, glTF levels (issue 26), and the workbench's request handling (issue 27), built
# above with the sanitizers; each runs for a fixed budget from its seed corpus and its past failures
# (tests/fuzz/regressions/<target>/, also replayed by CTest as fuzz.replay.*). Any crash,
# sanitizer report, leak or failed property stops the script; libFuzzer keeps the input as
# build-san/crash-<target>-*: fix the bug and copy the input to tests/fuzz/regressions/<target>/.
echo "== libFuzzer targets (ASan + UBSan + LeakSanitizer) =="
phase "fuzzing"
fuzz_seconds=${HANDOFF_FUZZ_SECONDS:-25}
# libFuzzer runs one process: the targets fuzz $jobs at a time, each on a core of its own for its
# whole budget (one after the other, the second core stayed idle for 4 x the budget).
fuzz_one() {
  local target=$1 work=build-san/work-$1
  rm -rf "$work" && mkdir -p "$work"
  local dict=()
  [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="tests/fuzz/$target.dict")
  echo "-- fuzzing $target for ${fuzz_seconds} s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/fuzz/lsan.supp" \
    "build-san/tests/fuzz/handoff_fuzz_$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-san/crash-$target-" "${dict[@]}" \
    "$work" "tests/fuzz/corpus/$target" "tests/fuzz/regressions/$target"
}
targets=(bvh import asset scenario workbench level)
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  round=("${targets[@]:i:jobs}")
  pids=()
  for target in "${round[@]}"; do
    fuzz_one "$target" >"build-san/fuzz-$target.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for k in "${!round[@]}"; do
    wait "${pids[k]}" || failed=1
    cat "build-san/fuzz-${round[k]}.log"
  done
  ((failed == 0)) || { echo "fuzzing failed: see the output above and build-san/crash-*"; exit 1; }
done
