// The benchmark suite: rivetkit-cpp against the official RivetKit stack, side by side, in one run.
//
//   (a) local       rivetkit-cpp local mode (rivetkit_bench_server, SQLite)
//   (b) engine-cpp  rivetkit-cpp engine mode: the same binary as an envoy of rivet-engine 2.3.19
//   (c) official    rivetkit 2.3.19 (TypeScript, bench/official/server.ts) on rivet-engine 2.3.19
//   (d) floor       rivetkit_bench_floor: a minimal loopback HTTP keep-alive + WebSocket echo
//
// Each run starts every system fresh (new data dirs, new engine, ephemeral ports), drives it with
// bench/lib/driver.mjs (the official client on Node 22) and stops it; the systems' order rotates
// between runs. The results (medians over runs, spread, ratios) are written to bench/results/ as
// Markdown + SVG + raw JSON lines, printed, and copied into bench/README.md.
//
// Usage: node bench/run.mjs [--quick] [--runs N] [--seconds S] [--systems local,engine-cpp,...]
//                           [--only workload,...] [--build-dir build/release] [--no-readme]
//                           [--from results.jsonl]   (re-render the report of an earlier run)
// Env: RIVETKIT_BENCH_SERVER, RIVETKIT_BENCH_FLOOR, RIVET_ENGINE_BIN override the binaries.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { machineDetails } from "./lib/proc.mjs";
import { markdown, svg, SYSTEMS } from "./lib/report.mjs";
import {
  buildNodelayPreload,
  killAllNow,
  startEngineCpp,
  startFloor,
  startLocal,
  startOfficial,
  stopAll,
} from "./lib/systems.mjs";

process.env.RIVET_LOG_LEVEL ??= "error";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const flag = (name) => process.argv.includes(name);

const quick = flag("--quick") || ["1", "true", "yes"].includes(String(process.env.QUICK ?? "").toLowerCase());
const runs = Number(arg("--runs", quick ? 1 : 3));
const seconds = Number(arg("--seconds", quick ? 1 : 5));
const systems = arg("--systems", "local,engine-cpp,official,floor").split(",").filter(Boolean);
const only = arg("--only", "all").split(",").filter(Boolean);
const buildDir = resolve(root, arg("--build-dir", "build/release"));
const resultsDir = resolve(root, arg("--out", "bench/results"));
const from = arg("--from", null);

const ctx = {
  root,
  quick,
  workDir: mkdtempSync(join(tmpdir(), "rivetkit-bench-")),
  serverBin: process.env.RIVETKIT_BENCH_SERVER ?? join(buildDir, "bench/rivetkit_bench_server"),
  floorBin: process.env.RIVETKIT_BENCH_FLOOR ?? join(buildDir, "bench/rivetkit_bench_floor"),
  loadgenBin: process.env.RIVETKIT_BENCH_LOADGEN ?? join(buildDir, "bench/rivetkit_bench_loadgen"),
  engineBin:
    process.env.RIVET_ENGINE_BIN ?? join(root, "node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine"),
  node: process.execPath,
  // Long enough that actors stay awake through a workload; the wake test sleeps them explicitly.
  sleepTimeoutMs: 600_000,
  // How long engine mode gets to serve its first action (actor allocation through the engine).
  engineProbeMs: 60_000,
  run: 0,
};
ctx.nodelayPreload = buildNodelayPreload(root, ctx.workDir);

for (const [what, path, needed] of [
  ["rivetkit_bench_server", ctx.serverBin, systems.some((s) => s === "local" || s === "engine-cpp")],
  ["rivetkit_bench_floor", ctx.floorBin, systems.includes("floor")],
]) {
  if (needed && !from && !existsSync(path)) {
    console.error(`bench: ${what} not found at ${path} (build it: make bench, or pass --build-dir)`);
    process.exit(2);
  }
}

// Stop whatever is still running, whatever happens.
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  await stopAll();
  if (!flag("--keep-work")) rmSync(ctx.workDir, { recursive: true, force: true });
}
process.on("exit", () => killAllNow());
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, async () => {
    console.error(`bench: ${sig}, stopping every process started`);
    await cleanup();
    process.exit(130);
  });
}
process.on("uncaughtException", async (e) => {
  console.error("bench: uncaught", e);
  await cleanup();
  process.exit(1);
});

const starters = { floor: startFloor, local: startLocal, "engine-cpp": startEngineCpp, official: startOfficial };
const records = [];
const skips = {};
const failures = {};
const driverTimeoutS = quick ? 240 : 2400;
const t0 = Date.now();
let runsUsed = runs;
let secondsUsed = seconds;
let quickUsed = quick;

function log(msg) {
  console.error(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}`);
}

async function drive(system, sys, run) {
  const config = {
    system,
    endpoint: sys.endpoint,
    pids: sys.pids,
    run,
    seconds,
    quick,
    workloads: only,
    loadgenBin: existsSync(ctx.loadgenBin) ? ctx.loadgenBin : null,
    memory: {
      targets: [1000, 10000],
      local_seconds: quick ? 45 : 300,
      engine_seconds: quick ? 5 : 90,
    },
  };
  const child = spawn(ctx.node, [join(root, "bench/lib/driver.mjs"), JSON.stringify(config)], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: process.env,
  });
  let buf = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        const rec = JSON.parse(line);
        records.push(rec);
        const summary =
          rec.error != null
            ? `error: ${String(rec.error).split("\n")[0].slice(0, 160)}`
            : rec.p50_ms != null
              ? `p50 ${rec.p50_ms} ms p99 ${rec.p99_ms} ms ${rec.ops_per_s ?? ""} ops/s n=${rec.n}`
              : rec.server_rss_kib != null
                ? `${rec.actors} actors, RSS ${Math.round(rec.server_rss_kib / 1024)} MiB, ${rec.server_kib_per_actor} KiB/actor`
                : "";
        log(`  ${system} ${rec.workload} ${summary}`);
      } catch {
        stderr += line + "\n";
      }
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => {
    log(`  ${system}: driver hit its ${driverTimeoutS} s limit; stopping it`);
    failures[`${system}|driver`] = `driver stopped after ${driverTimeoutS} s`;
    child.kill("SIGKILL");
  }, driverTimeoutS * 1000);
  await new Promise((res) => child.on("exit", res));
  clearTimeout(timer);
  if (stderr.trim()) {
    writeFileSync(join(ctx.workDir, `driver-${system}-run${run}.log`), stderr);
    const lines = stderr.trim().split("\n").filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l));
    if (lines.length) log(`  ${system} driver stderr: ${lines.slice(-3).join(" | ").slice(0, 400)}`);
  }
}

let machine = machineDetails(root);
if (from) {
  // Re-renders the report of an earlier run from its .jsonl (first line: metadata).
  const [meta, ...rest] = readFileSync(from, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  machine = meta.machine;
  Object.assign(skips, meta.skips);
  Object.assign(failures, meta.failures);
  records.push(...rest);
  systems.splice(0, systems.length, ...meta.systems);
  runsUsed = meta.runs;
  secondsUsed = meta.seconds;
  quickUsed = meta.mode === "quick";
} else {
log(`${quick ? "quick" : "full"} suite: ${runs} run(s), ${seconds} s per timed workload, systems ${systems.join(", ")}`);
log(`work dir ${ctx.workDir}; nodelay preload ${ctx.nodelayPreload ?? "unavailable (no cc)"}`);
try {
  for (let run = 1; run <= runs; run++) {
    ctx.run = run;
    const order = systems.slice((run - 1) % systems.length).concat(systems.slice(0, (run - 1) % systems.length));
    for (const system of order) {
      if (skips[system]) continue;
      log(`run ${run}/${runs}: starting ${system}`);
      let sys;
      try {
        sys = await starters[system](ctx);
      } catch (e) {
        const reason = String(e?.message ?? e).replace(/\s+/g, " ").slice(0, 400);
        log(`run ${run}: ${system} skipped: ${reason}`);
        // A system that cannot start is skipped for the rest of the suite.
        skips[system] = reason;
        await stopAll();
        continue;
      }
      try {
        await drive(system, sys, run);
      } finally {
        log(`run ${run}: stopping ${system}`);
        await sys.stop();
      }
    }
  }
} finally {
  await cleanup();
}
}
await cleanup();

// ---------- report ----------
const wallS = from ? null : Math.round((Date.now() - t0) / 1000);
const stamp = new Date().toISOString().replace(/[:]/g, "").replace(/\..*/, "");
const mode = quickUsed ? "quick" : "full";
const runCount = runsUsed;
const header = [
  `## rivetkit-cpp vs the official RivetKit stack (${mode}: ${runCount} run${runCount > 1 ? "s" : ""}, ${secondsUsed} s per timed workload)`,
  "",
  `${machine.date} · ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, ${machine.os}, kernel ${machine.kernel} (${machine.virtualization}) ·`,
  `load at start ${machine.load_at_start} · Node ${machine.node}, rivetkit ${machine.rivetkit}, rivet-engine ${machine.engine}, ${machine.compiler ?? "g++"} · commit ${machine.git_commit}${wallS != null ? ` · suite wall time ${wallS} s` : ""}`,
  "",
  "Systems: (a) rivetkit-cpp local mode; (b) rivetkit-cpp engine mode on rivet-engine; (c) the official rivetkit",
  "TypeScript runtime on the same engine config (guard tcp_nodelay, workflow load shedding off, TCP_NODELAY on the",
  "runtime's envoy socket); (d) the floor, a minimal loopback HTTP keep-alive + WebSocket echo server. One Node 22",
  "client process per system drives every workload with the official `rivetkit/client` (the floor: fetch and",
  "WebSocket). Ratios: *a vs c* and *b vs c* = how many times better than (c) (p50: c ÷ a; ops/s: a ÷ c);",
  "*a vs floor* = how many times the floor's cost (p50: a ÷ floor; ops/s: floor ÷ a), 1.00× = at the floor.",
  "",
].join("\n");
const tables = markdown(records, { systems, skips, failures, runs: runCount });
const md = `${header}\n${tables}\n![p50 latency](latest.svg)\n`;
const picture = svg(records, {
  systems,
  skips,
  title: `rivetkit-cpp vs official RivetKit: p50 latency (${mode}, ${runCount} run${runCount > 1 ? "s" : ""})`,
  subtitle: `${machine.cores} cores, ${machine.date.slice(0, 10)}`,
});

mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `${stamp}-${mode}.md`), md.replace("latest.svg", `${stamp}-${mode}.svg`));
writeFileSync(join(resultsDir, `${stamp}-${mode}.svg`), picture);
writeFileSync(
  join(resultsDir, `${stamp}-${mode}.jsonl`),
  [JSON.stringify({ machine, mode, runs: runCount, seconds: secondsUsed, systems, skips, failures, wall_s: wallS }), ...records.map((r) => JSON.stringify(r))].join("\n") + "\n",
);
writeFileSync(join(resultsDir, "latest.md"), md);
writeFileSync(join(resultsDir, "latest.svg"), picture);

// bench/README.md shows the latest table between two markers.
const readme = join(root, "bench/README.md");
if (!flag("--no-readme") && existsSync(readme)) {
  const text = readFileSync(readme, "utf8");
  const start = "<!-- bench:latest:start -->";
  const end = "<!-- bench:latest:end -->";
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a >= 0 && b > a) {
    const body = md.replace("](latest.svg)", "](results/latest.svg)");
    writeFileSync(readme, `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`);
  }
}

console.log("\n" + md);
log(`results: ${join(resultsDir, `${stamp}-${mode}.md`)} (+ .svg, .jsonl), latest.md, latest.svg`);
process.exit(0);
