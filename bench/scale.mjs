// The scale run: N actors (default 1,000,000) in local mode on one machine. Creates them, lets them
// sleep, then reports disk per actor, the server's resident memory, and the latency of waking
// random ones.
//
// Creation goes through the raw HTTP gateway protocol (POST /gateway/counter/action/increment with
// rvt-* query parameters, JSON encoding) from one Node process with many keep-alive sockets: the
// official client costs too much client CPU per call for a million calls on a shared 2-core
// machine. The wake samples use the official client (rivetkit/client), one getCount() at a time,
// and check with startId() (which grows with every actor start in the process) that each measured
// call started its actor, i.e. woke it.
//
// Usage: node bench/scale.mjs [--actors 1000000] [--max-minutes 60] [--concurrency 64]
//                             [--samples 1000] [--build-dir build/release] [--keep-data]
// The counter's sleep timeout is 1 s here, so actors sleep soon after their creation.

import http from "node:http";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "rivetkit/client";
import { cpuMs, diskKiB, machineDetails, rssKiB } from "./lib/proc.mjs";
import { latency, round } from "./lib/stats.mjs";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
};
const N = Number(arg("--actors", process.env.SCALE_ACTORS ?? 1_000_000));
const maxMinutes = Number(arg("--max-minutes", 60));
const concurrency = Number(arg("--concurrency", 64));
const samples = Number(arg("--samples", 1000));
const buildDir = resolve(root, arg("--build-dir", "build/release"));
const serverBin = process.env.RIVETKIT_BENCH_SERVER ?? join(buildDir, "bench/rivetkit_bench_server");
if (!existsSync(serverBin)) {
  console.error(`scale: ${serverBin} not found (make bench-scale builds it)`);
  process.exit(2);
}

const t0 = Date.now();
const log = (m) => console.error(`[scale ${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${m}`);
const machine = machineDetails(root);
const workDir = mkdtempSync(join(tmpdir(), "rivetkit-scale-"));
const dataDir = join(workDir, "data");
mkdirSync(dataDir);

const child = spawn(serverBin, ["--port", "0", "--data-dir", dataDir], {
  detached: true,
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, BENCH_SLEEP_TIMEOUT_MS: "1000", RIVET_LOG_LEVEL: "warn" },
});
let stopped = false;
const stop = () => {
  if (stopped) return;
  stopped = true;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
};
process.on("exit", () => {
  stop();
  if (!process.argv.includes("--keep-data")) rmSync(workDir, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

const endpoint = await new Promise((res, rej) => {
  const t = setTimeout(() => rej(new Error("server did not start")), 30_000);
  child.stdout.on("data", (d) => {
    const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(String(d));
    if (m) {
      clearTimeout(t);
      res(m[1]);
    }
  });
  child.on("exit", (c) => rej(new Error(`server exited (${c})`)));
});
const port = Number(new URL(endpoint).port);
const pid = child.pid;
log(`server pid ${pid} at ${endpoint}, data in ${dataDir}; creating ${N.toLocaleString()} actors, ${concurrency} in flight, at most ${maxMinutes} min`);

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const bodies = { increment: JSON.stringify({ args: [1] }), getCount: JSON.stringify({ args: [] }) };
function call(key, action = "increment", agentToUse = agent) {
  return new Promise((res, rej) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        agent: agentToUse,
        path: `/gateway/counter/action/${action}?rvt-namespace=default&rvt-method=getOrCreate&rvt-runner=default&rvt-key=${key}&rvt-crash-policy=sleep`,
        headers: { "content-type": "application/json", "x-rivet-encoding": "json", "content-length": bodies[action].length },
      },
      (resp) => {
        let data = "";
        resp.on("data", (d) => (data += d));
        resp.on("end", () => (resp.statusCode === 200 ? res(data) : rej(new Error(`${resp.statusCode} ${data.slice(0, 200)}`))));
      },
    );
    req.on("error", rej);
    req.end(bodies[action]);
  });
}

// ---- create ----
const deadline = Date.now() + maxMinutes * 60_000;
let next = 0;
let created = 0;
let errors = 0;
let firstError;
const cpu0 = cpuMs(pid);
const tc = Date.now();
const progress = setInterval(() => {
  const s = (Date.now() - tc) / 1000;
  log(`  ${created.toLocaleString()} created (${Math.round(created / s)}/s), ${errors} errors, RSS ${Math.round(rssKiB(pid) / 1024)} MiB, disk ${Math.round(diskKiB(dataDir) / 1024)} MiB`);
}, 15_000);
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < N && Date.now() < deadline && errors < 1000) {
      const i = next++;
      try {
        await call(`s-${i}`);
        created++;
      } catch (e) {
        errors++;
        firstError ??= String(e?.message ?? e);
      }
    }
  }),
);
clearInterval(progress);
const createS = (Date.now() - tc) / 1000;
const createCpuMs = cpuMs(pid) - cpu0;
log(`created ${created.toLocaleString()} in ${createS.toFixed(0)} s (${Math.round(created / createS)}/s), ${errors} errors${firstError ? ` (first: ${firstError})` : ""}`);
agent.destroy();

// ---- let them sleep ----
// Sleep timeout 1 s; wait until the RSS stops moving (bounded).
let rssPrev = rssKiB(pid);
for (let i = 0; i < 30; i++) {
  await sleep(2000);
  const r = rssKiB(pid);
  if (i >= 2 && Math.abs(r - rssPrev) < 1024) break;
  rssPrev = r;
}
const rssAsleep = rssKiB(pid);
const disk = diskKiB(dataDir);
log(`asleep: RSS ${Math.round(rssAsleep / 1024)} MiB, disk ${Math.round(disk / 1024)} MiB (${round((disk * 1024) / created, 0)} B/actor)`);

// ---- wake random ones ----
const client = createClient({ endpoint });
// Every start after this one gets a larger startId.
const startMark = await client.counter.getOrCreate(["scale-mark"]).startId();
const lat = [];
let wakeErrors = 0;
let woke = 0;
// Two disjoint random sets: one woken through the official client, one through raw HTTP.
const picked = new Set();
while (picked.size < Math.min(2 * samples, created)) picked.add(Math.floor(Math.random() * created));
const all = [...picked];
const keys = all.slice(0, Math.ceil(all.length / 2));
const rawKeys = all.slice(keys.length);
const wakeDeadline = Date.now() + 5 * 60_000;
for (const i of keys) {
  if (Date.now() > wakeDeadline) break;
  const h = client.counter.getOrCreate([`s-${i}`]);
  const t = performance.now();
  try {
    await h.getCount();
    lat.push(performance.now() - t);
    if ((await h.startId()) > startMark) woke++;
  } catch {
    wakeErrors++;
  }
}
const w = latency(lat);
// Raw HTTP (one keep-alive socket, JSON): the same wake with almost no client cost.
const rawAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const rawLat = [];
let rawWoke = 0;
for (const i of rawKeys) {
  if (Date.now() > wakeDeadline) break;
  const t = performance.now();
  try {
    await call(`s-${i}`, "getCount", rawAgent);
    rawLat.push(performance.now() - t);
    if ((await client.counter.getOrCreate([`s-${i}`]).startId()) > startMark) rawWoke++;
  } catch {
    wakeErrors++;
  }
}
rawAgent.destroy();
const rw = latency(rawLat);
const rssAfterWakes = rssKiB(pid);
log(`wake random: official client p50 ${w.p50_ms} ms, p99 ${w.p99_ms} ms over ${w.n} (${woke} were asleep); raw HTTP p50 ${rw.p50_ms} ms, p99 ${rw.p99_ms} ms over ${rw.n} (${rawWoke} were asleep)`);
await client.dispose().catch(() => {});

// ---- report ----
const md = [
  `## Scale run: ${created.toLocaleString()} actors in local mode (target ${N.toLocaleString()})`,
  "",
  `${machine.date} · ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.os}, kernel ${machine.kernel} · load at start ${machine.load_at_start} · commit ${machine.git_commit} · rivetkit_bench_server, default durability (RIVETKIT_SYNC=full), counter sleep timeout 1 s`,
  "",
  "| metric | value |",
  "| --- | ---: |",
  `| actors created | ${created.toLocaleString()} (${errors} errors) |`,
  `| create rate (raw HTTP gateway calls, ${concurrency} in flight, one Node process) | ${Math.round(created / createS).toLocaleString()}/s over ${createS.toFixed(0)} s |`,
  `| server CPU per create | ${round(createCpuMs / Math.max(1, created), 3)} ms |`,
  `| disk (data dir, SQLite incl. WAL) | ${round(disk / 1024, 1)} MiB = **${round((disk * 1024) / Math.max(1, created), 0)} bytes per actor** |`,
  `| resident memory, every actor asleep | **${round(rssAsleep / 1024, 1)} MiB** (${round((rssAsleep * 1024) / Math.max(1, created), 1)} bytes per actor, process total) |`,
  `| wake a random sleeping actor: getCount() through the official client (HTTP), sequential | p50 ${w.p50_ms} ms, **p99 ${w.p99_ms} ms**, max ${w.max_ms} ms (${w.n} samples, ${woke} confirmed wakes) |`,
  `| the same through raw HTTP (one keep-alive socket, JSON) | p50 ${rw.p50_ms} ms, **p99 ${rw.p99_ms} ms**, max ${rw.max_ms} ms (${rw.n} samples, ${rawWoke} confirmed wakes; ${wakeErrors} errors in both) |`,
  `| resident memory after the wakes | ${round(rssAfterWakes / 1024, 1)} MiB |`,
  "",
].join("\n");
const stamp = new Date().toISOString().replace(/[:]/g, "").replace(/\..*/, "");
const out = join(root, "bench/results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, `${stamp}-scale.md`), md);
writeFileSync(join(out, "latest-scale.md"), md);
const readme = join(root, "bench/README.md");
if (!process.argv.includes("--no-readme") && existsSync(readme)) {
  const text = readFileSync(readme, "utf8");
  const a = text.indexOf("<!-- bench:scale:start -->");
  const b = text.indexOf("<!-- bench:scale:end -->");
  if (a >= 0 && b > a) writeFileSync(readme, `${text.slice(0, a + 26)}\n${md}\n${text.slice(b)}`);
}
console.log("\n" + md);
log(`results: bench/results/${stamp}-scale.md, latest-scale.md`);
stop();
process.exit(0);
