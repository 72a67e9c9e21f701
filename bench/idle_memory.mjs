// Resident memory of idle actors in local mode: the process's RSS empty, with N awake idle actors,
// and after they sleep; then every actor is woken and checked (its state survived the sleep).
//
// Uses the fixture's `sleepy` actor (sleep_timeout 1 s) through the official client, bare
// encoding. RSS comes from /proc/<pid>/status (VmRSS).
//
// Usage: node bench/idle_memory.mjs [actors=10000] [concurrency=64]
//   RIVETKIT_SERVER=<path to rivetkit_fixture_server> (default build/release/...)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "rivetkit/client";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const actors = Number(process.argv[2] ?? 10000);
const concurrency = Number(process.argv[3] ?? 64);
const serverBin =
  process.env.RIVETKIT_SERVER ?? join(root, "build/release/tests/integration/rivetkit_fixture_server");

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function pool(n, fn) {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  });
  await Promise.all(workers);
}

const dataDir = mkdtempSync(join(tmpdir(), "rivetkit-mem-"));
const child = spawn(serverBin, ["--port", "0", "--data-dir", dataDir], {
  stdio: ["ignore", "pipe", process.env.BENCH_SMAPS ? "inherit" : "ignore"],
  env: { ...process.env, RIVETKIT_SYNC: process.env.RIVETKIT_SYNC ?? "full" },
});
const endpoint = await new Promise((resolve, reject) => {
  child.stdout.on("data", (d) => {
    const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(d.toString());
    if (m) resolve(m[1]);
  });
  child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
});

try {
  const client = createClient({ endpoint, encoding: "bare" });
  // Warm the process (first request, thread pools) so "empty" is a fair baseline.
  await client.observer.getOrCreate(["warm"]).events();
  await sleep(300);
  const empty = rssKiB(child.pid);
  if (process.env.BENCH_SMAPS) {
    console.log("EMPTY heap", JSON.stringify(await client.observer.getOrCreate(["warm"]).heap(true)));
  }

  const t0 = performance.now();
  await pool(actors, async (i) => {
    const n = await client.sleepy.getOrCreate([`mem-${i}`]).increment(i + 1);
    if (n !== i + 1) throw new Error(`actor ${i}: count ${n}`);
  });
  const createSeconds = (performance.now() - t0) / 1000;
  const awake = rssKiB(child.pid);

  // sleep_timeout is 1 s; give the sleeps time to complete and be saved.
  await sleep(4000);
  const asleep = rssKiB(child.pid);
  if (process.env.BENCH_SMAPS) {
    console.log(readFileSync(`/proc/${child.pid}/smaps_rollup`, "utf8"));
    // The biggest mappings by resident size.
    const maps = readFileSync(`/proc/${child.pid}/smaps`, "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
    const rows = maps.map((m) => ({ head: m.split("\n")[0], rss: Number(/\nRss:\s+(\d+)/.exec(m)?.[1] ?? 0) }));
    rows.sort((a, b) => b.rss - a.rss);
    for (const r of rows.slice(0, 12)) console.log(r.rss, "kB", r.head);
    console.log("heap", JSON.stringify(await client.observer.getOrCreate(["warm"]).heap(false)));
    console.log("heap after trim", JSON.stringify(await client.observer.getOrCreate(["warm"]).heap(true)), rssKiB(child.pid));
    if (process.env.BENCH_SMAPS === "kill") {
      child.kill("SIGKILL");
      process.exit(0);
    }
  }

  const t1 = performance.now();
  let wrong = 0;
  await pool(actors, async (i) => {
    const c = await client.sleepy.getOrCreate([`mem-${i}`]).getCount();
    if (c !== i + 1) wrong++;
  });
  const wakeSeconds = (performance.now() - t1) / 1000;
  const woken = rssKiB(child.pid);
  await sleep(4000);
  const asleepAgain = rssKiB(child.pid);

  const mib = (k) => (k / 1024).toFixed(1);
  console.log(`\n### Idle actor memory, local mode (${actors} actors, ${concurrency} concurrent clients)\n`);
  console.log("| phase | RSS MiB | above empty MiB | per actor KiB |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const [name, v] of [["empty", empty], [`${actors} awake idle`, awake], ["after they sleep", asleep], [`${actors} woken again`, woken], ["asleep again", asleepAgain]]) {
    console.log(`| ${name} | ${mib(v)} | ${mib(v - empty)} | ${((v - empty) / actors).toFixed(2)} |`);
  }
  console.log(`\ncreate+increment: ${(actors / createSeconds).toFixed(0)} actors/s; wake+read: ${(actors / wakeSeconds).toFixed(0)} actors/s; wrong state after wake: ${wrong}`);
  await client.dispose();
  if (wrong > 0) process.exitCode = 1;
} finally {
  child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(process.exitCode ?? 0);
