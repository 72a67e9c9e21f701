// Durable workflows, rivetkit-cpp against the official rivetkit 2.3.19 runtime, in one run: the
// `wf` and `wfLong` actors of bench/server/bench_server.cpp and bench/official/server.ts, in local
// mode, in engine mode, and the official runtime on its own engine. Workloads:
//   steps-1       one actor runs a loop of n iterations with one recorded step each (each step's
//                 record durable before the next): steps/s timed inside the actor
//   steps-64      64 actors each run 50 such steps at once: steps/s over the client's wall time
//                 (send with wait until the last completes)
//   resume-1000   an actor whose workflow recorded 1,000 steps is put to sleep; then one message
//                 to its queue, sent with wait: the wake, the replay of the 1,000 entries and the
//                 answer, client-side ms
//   wake-0        the same for a `wf` actor (a loop with nothing recorded before its wait): the
//                 wake alone, for comparison
//   waiting-N     N `wf` actors (default 1,000), each started and left parked in its workflow's
//                 queue wait until its idle timeout (30 s) puts it to sleep: the runtime
//                 process's resident memory and (local mode) the data directory's size after, per
//                 actor, over a baseline taken before (a waiting workflow should cost only disk)
// Sends go to handles by actor id (a getOrCreate handle resolves the key on every send).
// Only ratios within one run mean anything on a shared machine.
//
// Usage: node bench/workflow.mjs [--steps 1000] [--waiting 1000] [--build-dir build/release]
//          [--systems local,engine,official] [--out bench/results] [--no-write]
//          [--keep] (keep the processes' logs and data)

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "rivetkit/client";
import { diskKiB, rssKiB } from "./lib/proc.mjs";
import { killAllNow, measureEach } from "./lib/systems.mjs";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
};
const steps = Number(arg("--steps", 1000));
const waiting = Number(arg("--waiting", 1000));
const buildDir = resolve(root, arg("--build-dir", "build/release"));
const systems = arg("--systems", "local,engine,official").split(",").filter(Boolean);

const ctx = {
  root,
  workDir: mkdtempSync(join(tmpdir(), "rivetkit-bench-workflow-")),
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

const WAIT = { wait: true, timeout: 120_000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function byId(client, type, key) {
  const id = await client[type].getOrCreate([key]).resolve();
  return client[type].getForId(id);
}

function completed(r, what) {
  if (r?.status !== "completed") throw new Error(`${what}: ${JSON.stringify(r)}`);
  return r.response;
}

async function measure(name, sys) {
  const client = createClient({ endpoint: sys.endpoint, encoding: "bare" });
  const out = { name };
  const stamp = Date.now();
  try {
    const one = await byId(client, "wf", `one-${stamp}`);
    completed(await one.send("runs", { steps: 10 }, WAIT), "warm-up");
    const run = completed(await one.send("runs", { steps }, WAIT), "steps-1");
    out.steps1 = (steps / run.ms) * 1000;

    const N = 64;
    const PER = 50;
    const many = await Promise.all(Array.from({ length: N }, (_, i) => byId(client, "wf", `many-${i}-${stamp}`)));
    await Promise.all(many.map((h) => h.count()));
    const t0 = performance.now();
    const runs = await Promise.all(many.map((h) => h.send("runs", { steps: PER }, WAIT)));
    out.steps64 = ((N * PER) / (performance.now() - t0)) * 1000;
    runs.forEach((r) => completed(r, "steps-64"));

    const long = await byId(client, "wfLong", `long-${stamp}`);
    const deadline = Date.now() + 300_000;
    while ((await long.done()) < 1000) {
      if (Date.now() > deadline) throw new Error("wfLong did not run its 1,000 steps");
      await sleep(200);
    }
    completed(await long.send("go", {}, WAIT), "wfLong serving");
    await long.goToSleep();
    await one.goToSleep();
    await sleep(2000); // both asleep (engines report the stop asynchronously)
    let t = performance.now();
    completed(await long.send("go", {}, WAIT), "resume-1000");
    out.resume1000 = performance.now() - t;
    t = performance.now();
    completed(await one.send("runs", { steps: 0 }, WAIT), "wake-0");
    out.wake0 = performance.now() - t;

    if (waiting > 0) {
      const pid = sys.pids?.server;
      const rss0 = pid ? rssKiB(pid) : undefined;
      const disk0 = sys.dataDir ? diskKiB(sys.dataDir) : undefined;
      const keys = Array.from({ length: waiting }, (_, i) => `wait-${i}-${stamp}`);
      for (let i = 0; i < keys.length; i += 32) {
        // count() starts the actor: its workflow runs to its queue wait and parks there.
        await Promise.all(keys.slice(i, i + 32).map((k) => client.wf.getOrCreate([k]).count()));
      }
      await sleep(ctx.sleepTimeoutMs + 5_000); // every one asleep by its idle timeout
      if (rss0 !== undefined) out.waitingRss = (rssKiB(pid) - rss0) / waiting;
      if (disk0 !== undefined) out.waitingDisk = (diskKiB(sys.dataDir) - disk0) / waiting;
    }
  } finally {
    await client.dispose();
  }
  return out;
}

const results = await measureEach(ctx, systems, "bench-workflow", measure);

const by = Object.fromEntries(results.map((r) => [r.name, r]));
const fmt = (v) => (v === undefined ? "-" : v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1));
const ratio = (a, b) => (a > 0 && b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const lines = [];
lines.push(`# Durable workflows: rivetkit-cpp vs the official runtime`);
lines.push("");
lines.push(`Run ${new Date().toISOString()}; ${steps} steps in the single-actor run; bench/workflow.mjs.`);
lines.push("");
lines.push("| workload | local | engine | official | engine vs official |");
lines.push("|---|---:|---:|---:|---:|");
for (const [key, label, higherBetter] of [
  ["steps1", "steps/s, one actor (in the actor)", true],
  ["steps64", "steps/s, 64 actors x 50 steps (client wall time)", true],
  ["resume1000", "ms to wake and answer with 1,000 recorded entries", false],
  ["wake0", "ms to wake and answer with nothing recorded before the wait", false],
  ["waitingRss", `runtime RSS KiB per actor, ${waiting} actors asleep in a workflow wait`, false],
  ["waitingDisk", `disk KiB per actor, the same (local mode's data directory)`, false],
]) {
  const e = by.engine?.[key];
  const o = by.official?.[key];
  lines.push(
    `| ${label} | ${fmt(by.local?.[key])} | ${fmt(e)} | ${fmt(o)} | ${higherBetter ? ratio(e, o) : ratio(o, e)} |`,
  );
}
lines.push("\nThe last column is how many times better engine mode is (rate / rate, or time / time inverted).");
for (const r of results) if (r.error) lines.push(`\n${r.name} failed: ${r.error}`);
const report = lines.join("\n") + "\n";
console.log(report);
if (!process.argv.includes("--no-write")) {
  const dir = resolve(root, arg("--out", "bench/results"));
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(/:/g, "");
  writeFileSync(join(dir, `${stamp}-workflow.md`), report);
}
if (process.argv.includes("--keep")) console.error(`[bench-workflow] logs and data kept in ${ctx.workDir}`);
else rmSync(ctx.workDir, { recursive: true, force: true });
