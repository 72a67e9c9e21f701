// Starting and stopping the systems the suite compares, each with fresh data dirs and ephemeral
// ports. Every process is started in its own process group and stopped by that id (SIGTERM, then
// SIGKILL after a grace period); stopAll() runs on exit, on signals and on failures.
//
//   floor       rivetkit_bench_floor (minimal HTTP keep-alive + WebSocket echo)
//   local       rivetkit_bench_server in local mode (SQLite in a fresh data dir)
//   engine-cpp  rivetkit_bench_server as an envoy of a fresh rivet-engine
//   official    bench/official/server.ts (rivetkit 2.3.19 on Node 22) on a fresh rivet-engine

import { spawn, execFileSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "rivetkit/client";

const running = new Set();

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/// Three distinct free ports (guard, api-peer, metrics).
async function freePorts(n) {
  const ports = new Set();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

function tail(file, lines = 12) {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/// A started process: output goes to `log`; `onLine` sees stdout lines.
export class Proc {
  constructor(name, cmd, args, { env, cwd, log, onLine }) {
    this.name = name;
    this.log = log;
    this.exited = false;
    this.exitCode = null;
    const out = createWriteStream(log);
    this.child = spawn(cmd, args, { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    this.pid = this.child.pid;
    let buf = "";
    this.child.stdout.on("data", (d) => {
      out.write(d);
      buf += d.toString();
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        onLine?.(line);
      }
    });
    this.child.stderr.on("data", (d) => out.write(d));
    this.done = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        this.exited = true;
        this.exitCode = code ?? signal;
        running.delete(this);
        resolve();
      });
      this.child.on("error", (e) => {
        out.write(`spawn error: ${e.message}\n`);
        this.exited = true;
        this.exitCode = "spawn-error";
        running.delete(this);
        resolve();
      });
    });
    running.add(this);
  }

  signal(sig) {
    if (this.exited || !this.pid) return;
    try {
      process.kill(-this.pid, sig);
    } catch {
      try {
        process.kill(this.pid, sig);
      } catch {}
    }
  }

  async stop(graceMs = 5000) {
    if (this.exited) return;
    this.signal("SIGTERM");
    const t = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.done;
    clearTimeout(t);
  }

  /// The last lines of its log (for skip reasons).
  tail(lines) {
    return tail(this.log, lines);
  }
}

/// Synchronous last resort (process exit): SIGKILL every group still running.
export function killAllNow() {
  for (const p of running) p.signal("SIGKILL");
}

export async function stopAll() {
  await Promise.all([...running].map((p) => p.stop(3000)));
}

async function waitFor(pred, ms, what, proc) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    if (proc?.exited) {
      throw new Error(`${what}: ${proc.name} exited (${proc.exitCode}): ${lastError(proc.tail(8))}`);
    }
    await sleep(100);
  }
  throw new Error(`${what}: not ready after ${Math.round(ms / 1000)} s`);
}

/// The most useful line of a log tail: the last one that mentions an error, else the last one.
function lastError(text) {
  const lines = text.split("\n").filter((l) => l.trim());
  const err = [...lines].reverse().find((l) => /error|fail|unavailable|panic/i.test(l));
  return (err ?? lines.at(-1) ?? "no output")
    .replace(/\x1b\[[0-9;]*m/g, "")
    .replace(/^\S*\d{4}-\d\d-\d\dT[\d:.]+Z?\s+(error|warn|info)?\s*/i, "")
    .trim()
    .slice(0, 300);
}

function waitListening(proc, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${proc.name}: no "listening on" line in ${ms / 1000} s`)), ms);
    proc.onListening = (url) => {
      clearTimeout(t);
      resolve(url);
    };
    proc.done.then(() => {
      clearTimeout(t);
      reject(new Error(`${proc.name} exited (${proc.exitCode}): ${lastError(proc.tail(8))}`));
    });
  });
}

function listeningProc(name, cmd, args, opts) {
  let proc;
  proc = new Proc(name, cmd, args, {
    ...opts,
    onLine: (line) => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(line);
      if (m) proc.onListening?.(m[1]);
    },
  });
  return proc;
}

/// Calls counter.getCount() through `endpoint` until it answers (the system serves actors).
async function probe(endpoint, ms, procs) {
  const client = createClient({ endpoint });
  try {
    const end = Date.now() + ms;
    let last = "";
    while (Date.now() < end) {
      for (const p of procs) {
        if (p.exited) throw new Error(`${p.name} exited (${p.exitCode}): ${lastError(p.tail(8))}`);
      }
      try {
        const h = client.counter.getOrCreate(["bench-probe"]);
        await Promise.race([h.getCount(), sleep(15_000).then(() => Promise.reject(new Error("probe timed out")))]);
        return;
      } catch (e) {
        last = String(e?.message ?? e);
        await sleep(300);
      }
    }
    throw new Error(`actors not reachable within ${Math.round(ms / 1000)} s: ${last.slice(0, 200)}`);
  } finally {
    await client.dispose().catch(() => {});
  }
}

export async function startFloor(ctx) {
  const p = listeningProc("floor", ctx.floorBin, ["--port", "0", "--max-seconds", "7200"], {
    env: process.env,
    log: join(ctx.workDir, `floor-run${ctx.run}.log`),
  });
  const endpoint = await waitListening(p, 10_000);
  return { endpoint, pids: { server: p.pid }, procs: [p], stop: () => p.stop() };
}

function cppEnv(ctx, extra = {}) {
  return {
    ...process.env,
    RIVET_LOG_LEVEL: process.env.RIVETKIT_BENCH_LOG_LEVEL ?? "warn",
    RIVETKIT_MAX_INCOMING_MESSAGE_SIZE: "1048576",
    RIVETKIT_MAX_OUTGOING_MESSAGE_SIZE: "1048576",
    BENCH_SLEEP_TIMEOUT_MS: String(ctx.sleepTimeoutMs),
    ...extra,
  };
}

export async function startLocal(ctx, extraEnv = {}) {
  const dataDir = join(ctx.workDir, `local-run${ctx.run}-data`);
  mkdirSync(dataDir, { recursive: true });
  const env = cppEnv(ctx, extraEnv);
  delete env.RIVET_ENDPOINT;
  delete env.RIVET_ENGINE;
  const p = listeningProc("rivetkit_bench_server", ctx.serverBin, ["--port", "0", "--data-dir", dataDir], {
    env,
    log: join(ctx.workDir, `local-run${ctx.run}.log`),
  });
  const endpoint = await waitListening(p, 20_000);
  await probe(endpoint, 20_000, [p]);
  return { endpoint, dataDir, pids: { server: p.pid }, procs: [p], stop: () => p.stop(20_000) };
}

/// A fresh rivet-engine (configured as ../shared/reference/peer-bench: guard tcp_nodelay, workflow
/// load shedding off, file-system storage in a fresh dir, telemetry off).
export async function startEngine(ctx, tag) {
  const dir = join(ctx.workDir, `${tag}-run${ctx.run}-engine`);
  mkdirSync(join(dir, "db"), { recursive: true });
  const [guard, peer, metrics] = await freePorts(3);
  const config = {
    guard: { host: "127.0.0.1", port: guard, tcp_nodelay: true },
    api_peer: { host: "127.0.0.1", port: peer },
    metrics: { host: "127.0.0.1", port: metrics },
    file_system: { path: join(dir, "db") },
    telemetry: { enabled: false },
    // worker_cpu_max is the core count (millicores) the shedding curve is scaled to; 1,000 cores
    // keeps the measured ratio near 0, i.e. no load shedding (see the reference BASELINE.md).
    runtime: { worker_cpu_max: 1_000_000 },
    topology: {
      datacenter_label: 1,
      datacenters: {
        default: {
          datacenter_label: 1,
          is_leader: true,
          public_url: `http://127.0.0.1:${guard}`,
          peer_url: `http://127.0.0.1:${peer}`,
        },
      },
    },
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2));
  const p = new Proc("rivet-engine", ctx.engineBin, ["start", "--config", join(dir, "config.json")], {
    env: { ...process.env, RUST_LOG: process.env.ENGINE_RUST_LOG ?? "warn" },
    log: join(ctx.workDir, `${tag}-run${ctx.run}-engine.log`),
  });
  const endpoint = `http://127.0.0.1:${guard}`;
  await waitFor(
    async () => {
      try {
        return (await fetch(`${endpoint}/health`)).ok;
      } catch {
        return false;
      }
    },
    90_000,
    "engine /health",
    p,
  );
  return { endpoint, proc: p, dataDir: dir };
}

/// Creates the runner config of pool `default` (every datacenter a normal pool), as the official
/// runtime does for itself at start; harmless when the envoy creates it too. Bounded retries.
async function ensurePool(endpoint) {
  const headers = { authorization: "Bearer dev", "content-type": "application/json" };
  let last = "";
  for (let i = 0; i < 40; i++) {
    try {
      const dcs = await (await fetch(`${endpoint}/datacenters?namespace=default`, { headers })).json();
      const names = (dcs?.datacenters ?? []).map((d) => d.name).filter(Boolean);
      if (names.length > 0) {
        const datacenters = Object.fromEntries(names.map((n) => [n, { normal: {}, drain_on_version_upgrade: true }]));
        const res = await fetch(`${endpoint}/runner-configs/default?namespace=default`, {
          method: "PUT",
          headers,
          body: JSON.stringify({ datacenters }),
        });
        if (res.ok) return null;
        last = `${res.status} ${(await res.text()).slice(0, 200)}`;
      }
    } catch (e) {
      last = String(e?.message ?? e);
    }
    await sleep(500);
  }
  return last || "no datacenter";
}

export async function startEngineCpp(ctx) {
  const engine = await startEngine(ctx, "engine-cpp");
  const poolError = await ensurePool(engine.endpoint);
  if (poolError) console.error(`[bench] engine-cpp: runner config not created (${poolError}); the envoy may create it`);
  const dataDir = join(ctx.workDir, `engine-cpp-run${ctx.run}-data`);
  mkdirSync(dataDir, { recursive: true });
  const p = new Proc("rivetkit_bench_server (engine mode)", ctx.serverBin, ["--port", "0", "--data-dir", dataDir], {
    env: cppEnv(ctx, {
      RIVET_ENDPOINT: engine.endpoint,
      RIVET_NAMESPACE: "default",
      RIVET_POOL: "default",
      RIVETKIT_ENGINE_SPAWN: "never",
    }),
    log: join(ctx.workDir, `engine-cpp-run${ctx.run}.log`),
  });
  // The data is thrown away: short grace periods, then SIGKILL.
  const stop = async () => {
    await p.stop(10_000);
    await engine.proc.stop(5_000);
  };
  try {
    await probe(engine.endpoint, ctx.engineProbeMs, [p, engine.proc]);
  } catch (e) {
    await stop();
    throw e;
  }
  return { endpoint: engine.endpoint, pids: { server: p.pid, engine: engine.proc.pid }, procs: [p, engine.proc], stop };
}

export async function startOfficial(ctx) {
  const engine = await startEngine(ctx, "official");
  const env = {
    ...process.env,
    RIVET_ENDPOINT: engine.endpoint,
    RIVETKIT_ENGINE_SPAWN: "never",
    RIVET_RUN_SERVICES: "0",
    NODE_ENV: "production",
    RIVET_ENVOY_VERSION: "1",
    RIVET_LOG_LEVEL: "warn",
    BENCH_SLEEP_TIMEOUT_MS: String(ctx.sleepTimeoutMs),
  };
  if (ctx.nodelayPreload) env.LD_PRELOAD = ctx.nodelayPreload;
  let ready = false;
  const p = new Proc("official server.ts", ctx.node, [join(ctx.root, "bench/official/server.ts")], {
    env,
    cwd: ctx.root,
    log: join(ctx.workDir, `official-run${ctx.run}.log`),
    onLine: (l) => {
      if (l.startsWith("READY")) ready = true;
    },
  });
  const stop = async () => {
    await p.stop(3_000);
    await engine.proc.stop(5_000);
  };
  try {
    await waitFor(async () => ready, 60_000, "official server READY", p);
    await probe(engine.endpoint, 60_000, [p, engine.proc]);
  } catch (e) {
    await stop();
    throw e;
  }
  return { endpoint: engine.endpoint, pids: { server: p.pid, engine: engine.proc.pid }, procs: [p, engine.proc], stop };
}

/// Builds the TCP_NODELAY preload shim for the official runtime's envoy socket (rivetkit 2.3.19
/// does not set TCP_NODELAY itself; see the reference BASELINE.md). Null when there is no cc.
export function buildNodelayPreload(root, outDir) {
  const out = join(outDir, "nodelay_preload.so");
  if (existsSync(out)) return out;
  try {
    execFileSync("cc", ["-O2", "-shared", "-fPIC", "-o", out, join(root, "bench/official/nodelay_preload.c"), "-ldl"], {
      stdio: "ignore",
    });
    return out;
  } catch {
    return null;
  }
}

/// Runs `measure(name, sys)` on each of `systems` ("local", "engine", "official"), one at a time,
/// each started fresh and stopped after; a system that fails is reported as `{name, error}`.
/// Stops everything at the end. For the single-file benchmarks (sqlite.mjs, workflow.mjs).
export async function measureEach(ctx, systems, tag, measure) {
  const results = [];
  for (const name of systems) {
    ctx.run += 1;
    const start = name === "local" ? startLocal : name === "engine" ? startEngineCpp : startOfficial;
    let sys;
    try {
      sys = await start(ctx);
      results.push(await measure(name, sys));
      console.error(`[${tag}] ${name}: ${JSON.stringify(results.at(-1))}`);
    } catch (e) {
      console.error(`[${tag}] ${name} failed: ${e?.stack ?? e}`);
      results.push({ name, error: String(e?.message ?? e) });
    } finally {
      if (sys) await sys.stop();
    }
  }
  await stopAll();
  return results;
}
