#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs `handoff demo` on the built-in default
# character and clips. Output goes to ./out/demo (override with HANDOFF_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The README's plain configure (Release); only the tool is built. The same folder as
# scripts/test.sh's, so either script reuses the other's objects.
cmake -S . -B build -G Ninja
cmake --build build --target handoff_cli
./build/apps/handoff/handoff demo --out "${HANDOFF_OUT:-out/demo}"
