// Resident memory of idle actors in local mode: the process's RSS empty, with N awake idle actors,
// and after they sleep; then every actor is woken and checked (its state survived the sleep), and
// the actors sleep again. Numbers and findings: docs/memory.md.
//
// Through the official client, bare encoding; RSS from /proc/<pid>/status (VmRSS). The fixture's
// hook log is switched off (observer `record(false)`): it is test scaffolding, not runtime memory.
// Each actor gets one `increment(i + 1)`; after the wake `getCount()` must return i + 1.
//
// BENCH_ACTOR picks the fixture actor:
//   counter (default)  sleep_timeout 30 s: the burst ends with every actor awake. Phases, from the
//                      end of the burst: "awake" right away (the client's keep-alive connections,
//                      up to `concurrency`, still open); "awake, connections closed" at 7 s (undici
//                      closes idle connections after 4 s; the server trims its heap after those
//                      frees); "asleep" 33 s (every actor slept 30 s after its increment).
//   sleepy             sleep_timeout 1 s: actors sleep during the burst already (churn). "asleep"
//                      at 7 s, after the connections closed.
// The same after the wake of every actor ("woken again", "asleep again").
//
// Usage: node bench/idle_memory.mjs [actors=10000] [concurrency=64] [runs=1]
//   RIVETKIT_SERVER=<path to rivetkit_fixture_server> (default build/release/...)
//   With runs > 1 every run starts a fresh server; the last table is the median of the runs.
// Diagnostics (one run):
//   BENCH_TRACE=1      RSS, heap bytes in use and open descriptors every 500 ms after the burst
//   BENCH_SMAPS=1      after the sleep: resident growth per mapping since the empty process,
//                      glibc heap statistics (observer `heap`), then RSS after an explicit
//                      malloc_trim; BENCH_SMAPS=kill stops there (for heaptrack / strace runs)
//   BENCH_STOP=awake   (counter) stop after "awake, connections closed" (for heaptrack runs)
//   BENCH_MALLOC_INFO=1  with BENCH_SMAPS: glibc's malloc_info XML (per arena)
//   BENCH_PAGEMAP=file   with BENCH_SMAPS: after the explicit trim, write the resident pages of the
//                      anonymous writable mappings to `file` (/proc/<pid>/pagemap; needs root)

import { execSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "rivetkit/client";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const actors = Number(process.argv[2] ?? 10000);
const concurrency = Number(process.argv[3] ?? 64);
const runs = Number(process.argv[4] ?? 1);
const actorType = process.env.BENCH_ACTOR ?? "counter";
const sleepTimeoutMs = { counter: 30_000, sleepy: 1000 }[actorType];
if (sleepTimeoutMs === undefined) throw new Error(`BENCH_ACTOR: counter or sleepy, not ${actorType}`);
// Idle keep-alive connections are closed by the client after 4 s; trimmed by the server within ~1 s.
const connectionsClosedMs = 7000;
const asleepMs = Math.max(sleepTimeoutMs + 3000, connectionsClosedMs);
const serverBin =
  process.env.RIVETKIT_SERVER ?? join(root, "build/release/tests/integration/rivetkit_fixture_server");

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (k) => (k / 1024).toFixed(1);

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

/// Resident KiB per mapping, keyed by address range and name.
function smaps(pid) {
  const out = new Map();
  for (const m of readFileSync(`/proc/${pid}/smaps`, "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const head = m.split("\n")[0];
    const f = head.split(/\s+/);
    const start = f[0].split("-")[0];
    const name = f.slice(5).join(" ") || (f[1].startsWith("rw") ? "[anon rw]" : `[anon ${f[1]}]`);
    out.set(`${start} ${name}`, { rss: Number(/\nRss:\s+(\d+)/.exec(m)?.[1] ?? 0), perm: f[1], name });
  }
  return out;
}

function printSmapsGrowth(before, after) {
  const rows = [];
  for (const [key, a] of after) {
    const b = before.get(key)?.rss ?? 0;
    if (a.rss !== b) rows.push({ key, perm: a.perm, delta: a.rss - b, rss: a.rss });
  }
  for (const [key, b] of before) {
    if (!after.has(key) && b.rss > 0) rows.push({ key, perm: b.perm, delta: -b.rss, rss: 0 });
  }
  rows.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta));
  const sum = (pred) => rows.filter(pred).reduce((s, r) => s + r.delta, 0);
  console.log(`resident growth since empty: ${sum(() => true)} KiB (anonymous ${sum((r) => !r.key.includes("/"))} KiB, file-backed ${sum((r) => r.key.includes("/"))} KiB)`);
  for (const r of rows.slice(0, 15)) console.log(`  ${String(r.delta).padStart(6)} KiB (now ${r.rss}) ${r.perm} ${r.key}`);
}

/// Writes the resident pages of the anonymous writable mappings (heap arenas, stacks), one hex
/// address a line, for attributing them to live allocations of a heaptrack run (docs/memory.md).
function writePagemap(pid, file) {
  const fd = openSync(`/proc/${pid}/pagemap`, "r");
  const buf = Buffer.alloc(8 * 512);
  const lines = [];
  for (const line of readFileSync(`/proc/${pid}/maps`, "utf8").trim().split("\n")) {
    const f = line.split(/\s+/);
    if (!f[1].startsWith("rw") || (f[5] && f[5] !== "[heap]")) continue;
    const [lo, hi] = f[0].split("-").map((x) => parseInt(x, 16));
    for (let page = lo; page < hi; page += 4096 * 512) {
      const n = Math.min(512, (hi - page) / 4096);
      readSync(fd, buf, 0, n * 8, (page / 4096) * 8);
      for (let i = 0; i < n; i++) {
        if (buf.readBigUInt64LE(i * 8) & (1n << 63n)) lines.push((page + i * 4096).toString(16));
      }
    }
  }
  closeSync(fd);
  writeFileSync(file, lines.join("\n") + "\n");
  console.log(`${lines.length} resident anonymous pages written to ${file}`);
}

/// BENCH_PAGEMAP: writes the resident pages, then runs BENCH_INSPECT if set (e.g. a heap walker:
/// BENCH_INSPECT="python3 heapwalk.py {pid} pages.txt"; docs/memory.md).
function inspect(pid) {
  writePagemap(pid, process.env.BENCH_PAGEMAP);
  if (process.env.BENCH_INSPECT) {
    console.log(execSync(process.env.BENCH_INSPECT.replaceAll("{pid}", String(pid)), { encoding: "utf8" }));
  }
}

async function run() {
  const dataDir = mkdtempSync(join(tmpdir(), "rivetkit-mem-"));
  const child = spawn(serverBin, ["--port", "0", "--data-dir", dataDir], {
    stdio: ["ignore", "pipe", process.env.BENCH_SMAPS ? "inherit" : "ignore"],
    env: { ...process.env, RIVETKIT_SYNC: process.env.RIVETKIT_SYNC ?? "full" },
  });
  child.stdout.resume();
  const endpoint = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(d.toString());
      if (m) resolve(m[1]);
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
  });

  const client = createClient({ endpoint, encoding: "bare" });
  try {
    // Warm the process (first request, thread pools) so "empty" is a fair baseline.
    const obs = client.observer.getOrCreate(["warm"]);
    await obs.events();
    await obs.record(false);
    await sleep(300);
    const r = { empty: rssKiB(child.pid) };
    const emptySmaps = process.env.BENCH_SMAPS ? smaps(child.pid) : null;
    if (process.env.BENCH_SMAPS) {
      console.log("empty: heap", JSON.stringify(await obs.heap(false)));
      if (process.env.BENCH_PAGEMAP) inspect(child.pid);
    }

    const handle = (i) => client[actorType].getOrCreate([`mem-${i}`]);
    const t0 = performance.now();
    await pool(actors, async (i) => {
      const n = await handle(i).increment(i + 1);
      if (n !== i + 1) throw new Error(`actor ${i}: count ${n}`);
    });
    const burstEnd = performance.now();
    r.createRate = actors / ((burstEnd - t0) / 1000);
    r.awake = rssKiB(child.pid);

    const sinceBurst = () => performance.now() - burstEnd;
    const until = async (start, ms) => {
      while (performance.now() - start < ms) {
        await sleep(Math.min(500, ms - (performance.now() - start)));
        if (process.env.BENCH_TRACE) {
          const h = await obs.heap(false);
          const t = Math.round(performance.now() - start);
          console.log(`t=${t} ms rss=${rssKiB(child.pid)} KiB inUse=${h.inUse} fds=${fdCount(child.pid)}`);
        }
      }
    };
    if (asleepMs > connectionsClosedMs) {
      await until(burstEnd, connectionsClosedMs);
      r.awakeClosed = rssKiB(child.pid);
      // The first actors were created `burst` seconds before the end of the burst.
      if (sinceBurst() + (burstEnd - t0) >= sleepTimeoutMs) r.awakeClosedNote = "some actors already asleep";
      if (process.env.BENCH_STOP === "awake") {
        // For heaptrack: what the awake idle actors hold (the recording ends at the kill).
        console.log(`awake, connections closed: RSS ${r.awakeClosed} KiB, heap`, JSON.stringify(await obs.heap(false)));
        child.kill("SIGKILL");
        process.exit(0);
      }
    }
    await until(burstEnd, asleepMs);
    r.asleep = rssKiB(child.pid);
    r.fdsAsleep = fdCount(child.pid);
    if (process.env.BENCH_SMAPS) {
      printSmapsGrowth(emptySmaps, smaps(child.pid));
      console.log("asleep: heap", JSON.stringify(await obs.heap(false)));
      if (process.env.BENCH_MALLOC_INFO) console.log(await obs.mallocInfo());
      console.log("asleep: heap after malloc_trim", JSON.stringify(await obs.heap(true)), "RSS", rssKiB(child.pid), "KiB");
      if (process.env.BENCH_PAGEMAP) inspect(child.pid);
      if (process.env.BENCH_SMAPS === "kill") {
        child.kill("SIGKILL");
        process.exit(0);
      }
    }

    const t1 = performance.now();
    let wrong = 0;
    await pool(actors, async (i) => {
      const c = await handle(i).getCount();
      if (c !== i + 1) wrong++;
    });
    const wakeEnd = performance.now();
    r.wakeRate = actors / ((wakeEnd - t1) / 1000);
    r.wrong = wrong;
    r.woken = rssKiB(child.pid);
    await until(wakeEnd, asleepMs);
    r.asleepAgain = rssKiB(child.pid);
    return r;
  } finally {
    await client.dispose().catch(() => {});
    child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function table(title, r) {
  console.log(`\n### ${title}\n`);
  console.log("| phase | RSS MiB | above empty MiB | per actor KiB |");
  console.log("| --- | ---: | ---: | ---: |");
  const s = (ms) => `${ms / 1000} s`;
  const phases = [
    ["empty", r.empty],
    [actorType === "counter" ? `${actors} awake idle, connections open` : "end of the burst (most asleep)", r.awake],
    ...(r.awakeClosed !== undefined ? [[`${actors} awake idle, connections closed (${s(connectionsClosedMs)})`, r.awakeClosed]] : []),
    [`asleep, connections closed (${s(asleepMs)})`, r.asleep],
    [`${actors} woken again`, r.woken],
    [`asleep again (${s(asleepMs)})`, r.asleepAgain],
  ];
  for (const [name, v] of phases) {
    console.log(`| ${name} | ${mib(v)} | ${mib(v - r.empty)} | ${((v - r.empty) / actors).toFixed(2)} |`);
  }
  console.log(`\ncreate+increment: ${r.createRate.toFixed(0)} actors/s; wake+read: ${r.wakeRate.toFixed(0)} actors/s; wrong state after wake: ${r.wrong}`);
  if (r.awakeClosedNote) console.log(`note: ${r.awakeClosedNote} at ${s(connectionsClosedMs)}`);
}

const results = [];
for (let i = 0; i < runs; i++) {
  const r = await run();
  results.push(r);
  table(`Idle actor memory, local mode (${actors} \`${actorType}\` actors, ${concurrency} concurrent clients)${runs > 1 ? `, run ${i + 1}` : ""}`, r);
  console.log(`open descriptors when asleep: ${r.fdsAsleep}`);
}
if (runs > 1) {
  const median = (k) => {
    const v = results.map((r) => r[k]).sort((a, b) => a - b);
    return v[Math.floor(v.length / 2)];
  };
  const m = {};
  for (const k of Object.keys(results[0])) if (typeof results[0][k] === "number") m[k] = median(k);
  m.wrong = results.reduce((s, r) => s + r.wrong, 0);
  table(`Median of ${runs} runs, per row (${actors} \`${actorType}\` actors, ${concurrency} concurrent clients; wrong = sum)`, m);
}
if (results.some((r) => r.wrong > 0)) process.exitCode = 1;
process.exit(process.exitCode ?? 0);
