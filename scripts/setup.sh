#!/usr/bin/env bash
# Installs what handoff needs on Debian 12 (run as root). Safe to run twice: when every package
# is already installed it does nothing. Sourced by scripts/demo.sh and scripts/test.sh.
set -euo pipefail

HANDOFF_PACKAGES=(
  g++ cmake ninja-build pkg-config git
  clang libclang-rt-14-dev lld
  libglm-dev nlohmann-json3-dev libcli11-dev libassimp-dev libbullet-dev libode-dev
  libgtest-dev libgmock-dev libbenchmark-dev libtinygltf-dev libcpp-httplib-dev
  libmeshoptimizer-dev libdraco-dev libpugixml-dev zlib1g-dev
  chromium nodejs npm
)
# lld: links the sanitizer build's executables (scripts/test.sh) three times faster than GNU ld.
# libmeshoptimizer-dev: decodes EXT_meshopt_compression glTF buffers, which Assimp 5.2 cannot read.
# libdraco-dev: decodes KHR_draco_mesh_compression glTF primitives (levels and characters exported
# with Draco), which Assimp 5.2 cannot read either.
# libpugixml-dev: parses COLLADA before Assimp to check its counts and index lists (Assimp 5.2
# crashes or allocates without bound on inconsistent ones).
# zlib1g-dev (already pulled in by libassimp-dev): inflates binary FBX's compressed arrays before
# Assimp, which leaks its zlib state on one that does not inflate.

missing=()
for p in "${HANDOFF_PACKAGES[@]}"; do
  # A nodejs build that bundles npm (NodeSource) provides and conflicts with Debian's npm.
  if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y "${missing[@]}"
fi

# The web viewer's npm packages (three.js; playwright-core and gltf-validator for its browser test)
# exactly as web/package-lock.json pins them: `npm ci`, again only when the lock file is newer than
# what the last install recorded (node_modules/.package-lock.json).
web_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../web" && pwd)"
if [[ $web_dir/package-lock.json -nt $web_dir/node_modules/.package-lock.json ]]; then
  echo "setup: npm ci in $web_dir"
  (cd "$web_dir" && npm ci --no-audit --no-fund)
fi
