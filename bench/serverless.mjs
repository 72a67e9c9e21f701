// Serverless starts, rivetkit-cpp against the official rivetkit 2.3.19 runtime, in one run, each
// on its own fresh rivet-engine with a serverless pool pointing at it (envoy-protocol.md §5):
//   cold   a new actor's first action: the engine allocates it and opens POST {url}/start, the
//          runtime connects its envoy on the first start (once per process) and starts the actor
//   warm   an actor that slept (goToSleep) answers its next action: a new /start on the same
//          process, the state loaded from the engine
// The first cold start of each process (which also connects its envoy) is reported on its own.
// Timings come from the official client (bare encoding) on Node 22; only ratios within one run
// mean anything on a shared machine.
//
// Usage: node bench/serverless.mjs [--iterations 20] [--build-dir build/release]
//          [--systems cpp,official] [--out bench/results] [--no-write]

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "rivetkit/client";
import { Proc, freePort, killAllNow, startEngine, stopAll } from "./lib/systems.mjs";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
};
const iterations = Number(arg("--iterations", 20));
const buildDir = resolve(root, arg("--build-dir", "build/release"));
const systems = arg("--systems", "cpp,official").split(",").filter(Boolean);
const POOL = "bench-serverless";

const ctx = {
  root,
  workDir: mkdtempSync(join(tmpdir(), "rivetkit-bench-serverless-")),
  serverBin: process.env.RIVETKIT_BENCH_SERVER ?? join(buildDir, "bench/rivetkit_bench_server"),
  engineBin:
    process.env.RIVET_ENGINE_BIN ?? join(root, "node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine"),
  node: process.execPath,
  run: 0,
};

for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => (killAllNow(), process.exit(130)));
process.on("exit", killAllNow);

async function serverlessPool(endpoint, url) {
  const headers = { authorization: "Bearer dev", "content-type": "application/json" };
  let last = "";
  for (let i = 0; i < 60; i++) {
    try {
      const dcs = await (await fetch(`${endpoint}/datacenters?namespace=default`, { headers })).json();
      const names = (dcs?.datacenters ?? []).map((d) => d.name).filter(Boolean);
      if (names.length > 0) {
        const config = {
          serverless: {
            url,
            headers: {},
            request_lifespan: 3600,
            drain_grace_period: 5,
            metadata_poll_interval: 1000,
            max_runners: 100000,
            min_runners: 0,
            runners_margin: 0,
            slots_per_runner: 1,
          },
          drain_on_version_upgrade: true,
        };
        const res = await fetch(`${endpoint}/runner-configs/${POOL}?namespace=default`, {
          method: "PUT",
          headers,
          body: JSON.stringify({ datacenters: Object.fromEntries(names.map((n) => [n, config])) }),
        });
        if (res.ok) return;
        last = `${res.status} ${(await res.text()).slice(0, 200)}`;
      }
    } catch (e) {
      last = String(e?.message ?? e);
    }
    await sleep(500);
  }
  throw new Error(`serverless pool not created: ${last}`);
}

async function waitHealthy(url, proc) {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (proc.exited) throw new Error(`${proc.name} exited: ${proc.tail(8)}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await sleep(200);
  }
  throw new Error(`${proc.name}: ${url}/health never answered`);
}

async function startSystem(system) {
  const engine = await startEngine(ctx, system);
  const port = await freePort();
  const env = {
    ...process.env,
    RIVET_ENDPOINT: engine.endpoint,
    RIVETKIT_ENGINE_SPAWN: "never",
    RIVETKIT_RUNTIME_MODE: "serverless",
    RIVET_LOG_LEVEL: "warn",
    BENCH_SLEEP_TIMEOUT_MS: "600000",
  };
  let proc;
  if (system === "cpp") {
    const dataDir = join(ctx.workDir, "cpp-data");
    mkdirSync(dataDir, { recursive: true });
    proc = new Proc("rivetkit_bench_server (serverless)", ctx.serverBin, ["--port", String(port), "--data-dir", dataDir], {
      env,
      log: join(ctx.workDir, "cpp.log"),
    });
  } else {
    proc = new Proc("official server.ts (serverless)", ctx.node, [join(root, "bench/official/server.ts")], {
      env: { ...env, RIVET_PORT: String(port), RIVET_RUN_SERVICES: "0", NODE_ENV: "production", RIVET_ENVOY_VERSION: "1" },
      cwd: root,
      log: join(ctx.workDir, "official.log"),
    });
  }
  const url = `http://127.0.0.1:${port}/api/rivet`;
  await waitHealthy(url, proc);
  await serverlessPool(engine.endpoint, url);
  return {
    endpoint: engine.endpoint,
    stop: async () => {
      await proc.stop(10_000);
      await engine.proc.stop(5_000);
    },
  };
}

const timed = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, p50: q(0.5), p99: q(0.99) };
}

async function measure(system) {
  const sys = await startSystem(system);
  const client = createClient({ endpoint: sys.endpoint, poolName: POOL, encoding: "bare" });
  try {
    const first = await timed(() => client.counter.getOrCreate([`first-${Date.now()}`]).getCount());
    const cold = [];
    const warm = [];
    for (let i = 0; i < iterations; i++) {
      const handle = client.counter.getOrCreate([`cold-${i}-${Date.now()}`]);
      cold.push(await timed(() => handle.increment(1)));
      // A wake: the actor sleeps, then the next action starts it again through a new /start.
      let took;
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = await handle.startId();
        await handle.goToSleep();
        await sleep(1_500 * (attempt + 1));
        took = await timed(() => handle.getCount());
        if ((await handle.startId()) !== before) break;  // it did sleep and wake
        took = undefined;
      }
      if (took === undefined) throw new Error(`${system}: the actor never slept`);
      warm.push(took);
    }
    return { first, cold: stats(cold), warm: stats(warm) };
  } finally {
    await client.dispose().catch(() => {});
    await sys.stop();
  }
}

const results = {};
try {
  for (const system of systems) {
    console.error(`[serverless bench] ${system}...`);
    results[system] = await measure(system);
  }
} finally {
  await stopAll();
}

const f = (x) => (x === undefined ? "-" : x.toFixed(1));
const ratio = (a, b) => (a && b ? (b / a).toFixed(2) : "-");
const lines = [
  `# Serverless starts (${new Date().toISOString()}, ${iterations} iterations, bare, ms)`,
  "",
  "| row | rivetkit-cpp p50 | p99 | official p50 | p99 | official / cpp (p50) |",
  "|---|---:|---:|---:|---:|---:|",
];
const c = results.cpp;
const o = results.official;
lines.push(`| first start (envoy connect + actor start) | ${f(c?.first)} | | ${f(o?.first)} | | ${ratio(c?.first, o?.first)} |`);
for (const row of ["cold", "warm"]) {
  lines.push(
    `| ${row} | ${f(c?.[row].p50)} | ${f(c?.[row].p99)} | ${f(o?.[row].p50)} | ${f(o?.[row].p99)} | ${ratio(c?.[row].p50, o?.[row].p50)} |`,
  );
}
const table = lines.join("\n") + "\n";
console.log(table);
if (!process.argv.includes("--no-write")) {
  const out = resolve(root, arg("--out", "bench/results"));
  mkdirSync(out, { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(/:/g, "");
  writeFileSync(join(out, `${stamp}-serverless.md`), table);
}
rmSync(ctx.workDir, { recursive: true, force: true });
