#!/usr/bin/env bash
# Installs the Debian 12 packages the C++ build needs, only those missing; with --browser also
# Chromium, for the browser test of examples/react-counter (make test), not for make run.
# Never installs an unversioned libboost-*-dev: on Debian 12 that is 1.74 and conflicts with
# libboost1.81-dev (cpp-guide §1.1).
set -euo pipefail

packages=(
  g++-12 cmake ninja-build pkg-config
  libboost1.81-dev libssl-dev libsqlite3-dev
  libspdlog-dev libfmt-dev libcli11-dev libexpected-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev python3
)
if [ "${1:-}" = "--browser" ]; then
  packages=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "install-deps: missing packages (${missing[*]}) and not root; install them with apt" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
