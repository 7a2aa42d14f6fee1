#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs `handoff demo` on the built-in default
# character and clips. Output goes to ./out/demo (override with HANDOFF_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build --target handoff_cli
./build/apps/handoff/handoff demo --out "${HANDOFF_OUT:-out/demo}"
