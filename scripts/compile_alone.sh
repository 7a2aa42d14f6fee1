#!/usr/bin/env bash
# Every source file compiles on its own (docs/ARCHITECTURE.md, Conventions). A unity build
# (CMAKE_UNITY_BUILD, what scripts/test.sh uses for the tests) compiles a target's files together,
# so a file that uses a sibling's include, using-directive or helper still builds there and fails
# in a user's plain, non-unity build. This compiles each file that a configured build compiles
# only inside a unity batch, after another file, on its own, with its target's exact flags and
# -fsyntax-only (no code generation), in parallel. (The first file of a batch has nothing before
# it: the build compiles it alone.)
#
#   scripts/compile_alone.sh BUILD_DIR [--all]
#
# BUILD_DIR is any configured build (CMAKE_EXPORT_COMPILE_COMMANDS is on); nothing has to be
# built first. --all checks the files the build already compiles alone too. Jobs: $JOBS or nproc.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/compile_alone.sh BUILD_DIR [--all]}
all=OFF
[[ ${2:-} == --all ]] && all=ON
jobs=${JOBS:-$(nproc)}
list=$(mktemp)
failed=$(mktemp)
trap 'rm -f "$list" "$failed"' EXIT
cmake -DBUILD_DIR="$build" -DOUT="$list" -DALL="$all" -P scripts/compile_alone.cmake
echo "compile-alone: $(wc -l <"$list") files, $jobs jobs"
# Each line is one shell command; a failing one prints its diagnostics and its file is recorded.
xargs -d '\n' -P "$jobs" -I{} bash -c 'eval "$1" || echo "${1##* }" | tr -d "\047" >>"$0"' "$failed" {} <"$list"
if [[ -s $failed ]]; then
  echo "compile-alone: these files do not compile on their own:"
  sort "$failed"
  exit 1
fi
echo "compile-alone: every file compiles on its own"
