// SQLite per actor (c.db()), rivetkit-cpp against the official rivetkit 2.3.19 runtime, in one
// run: the `sql` actor of bench/server/bench_server.cpp and bench/official/server.ts (a table
// rows(id INTEGER PRIMARY KEY, v TEXT)), in local mode, in engine mode, and the official runtime
// on its own engine. Workloads, timed inside the actor (what the database costs, not the call):
//   insert-each   n single-row INSERTs, each its own SQLite transaction, in one action
//   insert-batch  one transaction of n rows
//   select-each   n point SELECTs by primary key
// and timed from the official client (bare encoding):
//   actions-64    64 actors, each running insert-each of 50 rows at once: rows/s over the wall
//                 time of the slowest, reply after the rows are durable (the action's reply)
// plus, after the 64 actors slept: the runtime process's resident memory growth per actor (its
// RSS before creating them and after their sleep; allocator retention included, so an upper
// bound), and the data directory's size per actor (local mode).
// Only ratios within one run mean anything on a shared machine.
//
// Usage: node bench/sqlite.mjs [--rows 2000] [--build-dir build/release]
//          [--systems local,engine,official] [--out bench/results] [--no-write]

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "rivetkit/client";
import { killAllNow, measureEach } from "./lib/systems.mjs";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
};
const rows = Number(arg("--rows", 2000));
const buildDir = resolve(root, arg("--build-dir", "build/release"));
const systems = arg("--systems", "local,engine,official").split(",").filter(Boolean);
const SIZE = 100; // bytes of each row's text

const ctx = {
  root,
  workDir: mkdtempSync(join(tmpdir(), "rivetkit-bench-sqlite-")),
  serverBin: process.env.RIVETKIT_BENCH_SERVER ?? join(buildDir, "bench/rivetkit_bench_server"),
  engineBin:
    process.env.RIVET_ENGINE_BIN ?? join(root, "node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine"),
  node: process.execPath,
  run: 0,
  sleepTimeoutMs: 30_000,
  engineProbeMs: 60_000,
};

for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => (killAllNow(), process.exit(130)));
process.on("exit", killAllNow);

/// Resident set size of a process in bytes (Linux /proc), or undefined.
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function dirSize(path) {
  let total = 0;
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    total += e.isDirectory() ? dirSize(p) : statSync(p).size;
  }
  return total;
}

async function measure(name, sys) {
  const client = createClient({ endpoint: sys.endpoint, encoding: "bare" });
  const out = { name };
  try {
    const one = client.sql.getOrCreate([`one-${Date.now()}`]);
    await one.count(); // created and migrated
    const each = await one.insertEach(rows, SIZE);
    const batch = await one.insertBatch(rows, SIZE);
    const select = await one.selectEach(rows);
    out.insertEach = (rows / each) * 1000;
    out.insertBatch = (rows / batch) * 1000;
    out.selectEach = (rows / select) * 1000;
    const N = 64;
    const PER = 50;
    const rssBefore = rssOf(sys.pids?.server);
    const handles = Array.from({ length: N }, (_, i) => client.sql.getOrCreate([`many-${i}-${Date.now()}`]));
    await Promise.all(handles.map((h) => h.count()));
    const t0 = performance.now();
    await Promise.all(handles.map((h) => h.insertEach(PER, SIZE)));
    out.actions64 = ((N * PER) / (performance.now() - t0)) * 1000;
    await Promise.all(handles.map((h) => h.goToSleep()));
    await new Promise((r) => setTimeout(r, 1500));
    const rssAfter = rssOf(sys.pids?.server);
    if (rssBefore && rssAfter) out.rssPerSleptActor = Math.max(0, rssAfter - rssBefore) / N;
    if (sys.dataDir) out.diskPerActor = dirSize(sys.dataDir) / (N + 1);
  } finally {
    await client.dispose();
  }
  return out;
}

const results = await measureEach(ctx, systems, "bench-sqlite", measure);

const by = Object.fromEntries(results.map((r) => [r.name, r]));
const fmt = (v) => (v === undefined ? "-" : v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1));
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : "-");
const lines = [];
lines.push(`# SQLite per actor: rivetkit-cpp vs the official runtime`);
lines.push("");
lines.push(`Run ${new Date().toISOString()}; ${rows} rows of ${SIZE} bytes per single-actor workload; bench/sqlite.mjs.`);
lines.push("");
lines.push("| workload (per second) | local | engine | official | engine / official |");
lines.push("|---|---:|---:|---:|---:|");
for (const [key, label] of [
  ["insertEach", "single-row INSERTs, one actor (in the actor)"],
  ["insertBatch", "rows in one transaction, one actor (in the actor)"],
  ["selectEach", "point SELECTs, one actor (in the actor)"],
  ["actions64", "rows, 64 actors x 50 single-row INSERTs (client wall time)"],
]) {
  lines.push(
    `| ${label} | ${fmt(by.local?.[key])} | ${fmt(by.engine?.[key])} | ${fmt(by.official?.[key])} | ${ratio(by.engine?.[key], by.official?.[key])} |`,
  );
}
lines.push(
  `\nRuntime process memory (RSS) growth per actor after 64 actors with 50 rows each slept: local ${fmt(by.local?.rssPerSleptActor)} B, engine ${fmt(by.engine?.rssPerSleptActor)} B, official ${fmt(by.official?.rssPerSleptActor)} B (allocator retention included).`,
);
if (by.local?.diskPerActor) lines.push(`\nLocal mode data directory after every actor slept: ${Math.round(by.local.diskPerActor)} bytes per actor (65 actors).`);
for (const r of results) if (r.error) lines.push(`\n${r.name} failed: ${r.error}`);
const report = lines.join("\n") + "\n";
console.log(report);
if (!process.argv.includes("--no-write")) {
  const dir = resolve(root, arg("--out", "bench/results"));
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(/:/g, "");
  writeFileSync(join(dir, `${stamp}-sqlite.md`), report);
}
rmSync(ctx.workDir, { recursive: true, force: true });
