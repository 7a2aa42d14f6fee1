#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs the CTest suite in a normal build
# and again under AddressSanitizer + UndefinedBehaviorSanitizer, then fuzzes every loader (clang).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

# Debug information is what the two C++ builds spend most of their time on (measured on the
# json-heavy translation units: -O2 -g 21.6 s, -g0 14.7 s; ASan -O1 -g 46.1 s,
# -g1 27.7 s). The suite's normal build therefore compiles without it (-g does not change the
# generated code: results and hashes are the same as a RelWithDebInfo build's) and the sanitizer
# build keeps line tables only (-g1: stack traces still name file and line). Both are unity
# builds (CMAKE_UNITY_BUILD: a target's files compiled together, which parses the json, glm and
# gtest headers once per batch instead of once per file; cmake/HandoffModule.cmake lists the
# files that must compile alone). Measured cold on 2 cores: normal 294 -> 182 s, ASan 545 ->
# 362 s.
echo "== normal build =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DHANDOFF_SANITIZE=ON -DHANDOFF_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 1200 -LE no_sanitize

# libFuzzer targets (issue 9), one per loader: BVH text, ragdoll asset JSON, scenario JSON. Built
# with clang and -DHANDOFF_FUZZ=ON (every library instrumented for coverage, ASan and UBSan);
# each runs for a fixed budget from its seed corpus and its past failures
# (tests/fuzz/regressions/<target>/, also replayed by CTest as fuzz.replay.*). Any crash,
# sanitizer report, leak or failed property stops the script; libFuzzer keeps the input as
# build-fuzz/crash-<target>-*: fix the bug and copy the input to tests/fuzz/regressions/<target>/.
echo "== libFuzzer targets (clang, ASan + UBSan + LeakSanitizer) =="
fuzz_seconds=${HANDOFF_FUZZ_SECONDS:-25}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHANDOFF_FUZZ=ON \
  -DHANDOFF_BUILD_TESTS=OFF -DHANDOFF_BUILD_BENCH=OFF -DHANDOFF_BUILD_APPS=OFF
cmake --build build-fuzz -j "$jobs" --target handoff_fuzz_bvh handoff_fuzz_import handoff_fuzz_asset handoff_fuzz_scenario
for target in bvh import asset scenario; do
  work=build-fuzz/work-$target
  rm -rf "$work" && mkdir -p "$work"
  dict=()
  [[ -f tests/fuzz/$target.dict ]] && dict=(-dict="tests/fuzz/$target.dict")
  echo "-- fuzzing $target for ${fuzz_seconds} s"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/fuzz/lsan.supp" \
    "build-fuzz/tests/fuzz/handoff_fuzz_$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crash-$target-" "${dict[@]}" \
    "$work" "tests/fuzz/corpus/$target" "tests/fuzz/regressions/$target"
done
