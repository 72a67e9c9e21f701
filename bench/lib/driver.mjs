// The workload driver: one process per (system, run), started by bench/run.mjs. Drives one system
// through the official client (rivetkit/client 2.3.19, default encoding) on Node 22 — or, for the
// floor, through the same Node stack without RivetKit (fetch and the global WebSocket) — and prints
// one JSON line per workload on stdout. Every workload is bounded by an op count and by time.
//
// CPU per op: utime+stime deltas from /proc/PID/stat of each process of the system (`server`, and
// `engine` for engine systems) over the measured part of the workload, divided by completed ops;
// `client` is this process (process.cpuUsage()).
//
// Usage (by run.mjs): node driver.mjs '<json config>'
//   {system, endpoint, pids: {server, engine?}, run, seconds, workloads: [...], quick, memory: {...}}

import { createClient } from "rivetkit/client";
import { execFile } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { cpuMs, loadAvg, rssKiB } from "./proc.mjs";
import { latency, round } from "./stats.mjs";

const cfg = JSON.parse(process.argv[2]);
const { system, endpoint, pids, run, seconds: T } = cfg;
const isFloor = system === "floor";
const isEngine = pids.engine != null;
const PREFIX = `r${run}`;
const now = () => performance.now();

function emit(workload, data) {
  process.stdout.write(JSON.stringify({ workload, system, run, load1: loadAvg(), ...data }) + "\n");
}

function enabled(name) {
  return cfg.workloads.some((w) => name === w || name.startsWith(w + "_") || w === "all");
}

// ---------- metering ----------

function meterStart() {
  const m = { t0: now(), client0: process.cpuUsage(), cpu0: {} };
  for (const [k, pid] of Object.entries(pids)) m.cpu0[k] = cpuMs(pid);
  return m;
}

function meterEnd(m, ops) {
  const wall = (now() - m.t0) / 1000;
  const c = process.cpuUsage(m.client0);
  const cpu = {};
  let total = 0;
  for (const [k, pid] of Object.entries(pids)) {
    const d = cpuMs(pid) - m.cpu0[k];
    cpu[`${k}_cpu_ms_per_op`] = ops > 0 ? round(d / ops, 4) : null;
    total += d;
  }
  cpu.system_cpu_ms_per_op = ops > 0 ? round(total / ops, 4) : null;
  cpu.client_cpu_ms_per_op = ops > 0 ? round((c.user + c.system) / 1000 / ops, 4) : null;
  return { wall_s: round(wall, 3), ...cpu };
}

/// `clients` loops calling op(i) until `seconds` or `maxOps` is spent. Errors are counted; a loop
/// that sees 50 errors stops.
async function closedLoop(clients, op, seconds, maxOps, warmupOps = 0) {
  // Warm-up calls are not measured; a failing one is retried a few times, then the loop below
  // counts the errors.
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      for (let w = 0, failed = 0; w < warmupOps && failed < 3; ) {
        try {
          await op(i);
          w++;
        } catch {
          failed++;
          await sleep(100);
        }
      }
    }),
  );
  const lat = [];
  let ops = 0;
  let errors = 0;
  let firstError;
  const end = now() + seconds * 1000;
  const m = meterStart();
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (now() < end && ops < maxOps) {
        const t = now();
        try {
          await op(i);
          lat.push(now() - t);
          ops++;
        } catch (e) {
          errors++;
          firstError ??= String(e?.message ?? e).slice(0, 200);
          if (errors > 50) return;
          await sleep(20);
        }
      }
    }),
  );
  const meter = meterEnd(m, ops);
  return { clients, ops, errors, first_error: firstError, ops_per_s: round(ops / meter.wall_s, 1), ...latency(lat), ...meter };
}

async function withTimeout(p, ms, what) {
  let t;
  try {
    return await Promise.race([p, new Promise((_, rej) => (t = setTimeout(() => rej(new Error(`timeout: ${what}`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}

/// Runs fn(i) for i in [0, n) with `concurrency` in flight; stops at `deadline` (ms, performance
/// clock). Returns how many completed and failed.
async function pool(n, concurrency, fn, deadline = Infinity) {
  let next = 0;
  let done = 0;
  let failed = 0;
  let firstError;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n && now() < deadline) {
        const i = next++;
        try {
          await fn(i);
          done++;
        } catch (e) {
          failed++;
          firstError ??= String(e?.message ?? e).slice(0, 200);
          if (failed > 200) return;
        }
      }
    }),
  );
  return { done, failed, first_error: firstError };
}

// ---------- the floor's transport ----------

/// A WebSocket whose request() resolves with the next message (the floor echoes in order).
class EchoSocket {
  static async open(url) {
    const s = new EchoSocket();
    s.ws = new WebSocket(url);
    s.ws.binaryType = "arraybuffer";
    s.waiters = [];
    s.onMessage = null;
    s.ws.onmessage = (ev) => {
      if (s.onMessage) s.onMessage(ev.data);
      else s.waiters.shift()?.(ev.data);
    };
    await withTimeout(new Promise((res, rej) => ((s.ws.onopen = res), (s.ws.onerror = rej))), 10_000, "ws open");
    return s;
  }
  request(data) {
    return new Promise((res) => {
      this.waiters.push(res);
      this.ws.send(data);
    });
  }
  close() {
    try {
      this.ws.close();
    } catch {}
  }
}

const floorBody = new Uint8Array(32);
const wsUrl = endpoint.replace(/^http/, "ws");
const floorHttp = (body = floorBody) => fetch(`${endpoint}/`, { method: "POST", body }).then((r) => r.arrayBuffer());

// ---------- RivetKit helpers ----------

const client = isFloor ? null : createClient({ endpoint });

/// Creates (or wakes) the actors behind `handles`, a few at a time; a failure is retried twice.
let setupRetries = 0;
async function ensure(handles, concurrency = isEngine ? 16 : 32, op = (h) => h.getCount()) {
  const r = await pool(handles.length, concurrency, async (i) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op(handles[i]);
      } catch (e) {
        if (attempt >= 3) throw e;
        setupRetries++;
      }
    }
  });
  if (r.failed > 0) throw new Error(`setup: ${r.failed} actors failed: ${r.first_error}`);
}

/// Opens one connection per handle, `batch` at a time; a first call (`probe`) proves each is open.
async function connectAll(handles, probe = (c) => c.getCount(), batch = 16) {
  const conns = [];
  for (let i = 0; i < handles.length; i += batch) {
    const b = handles.slice(i, i + batch).map((h) => h.connect());
    conns.push(...b);
    await withTimeout(Promise.all(b.map(probe)), 60_000, "connect");
  }
  return conns;
}

const disposeAll = (conns) => Promise.allSettled(conns.map((c) => c.dispose()));

async function actorInfo(ids) {
  const res = await fetch(`${endpoint}/actors?namespace=default&actor_ids=${ids.map(encodeURIComponent).join(",")}`);
  const j = await res.json();
  return j.actors ?? [];
}

/// Waits until every actor in `ids` is asleep. Engines report it (sleep_ts); local mode does not,
/// so there a fixed pause is used and the wake counter checks it afterwards.
async function waitAsleep(ids, ms) {
  if (!isEngine) {
    await sleep(Math.min(ms, 1000));
    return ids.length;
  }
  const end = now() + ms;
  let asleep = 0;
  while (now() < end) {
    asleep = 0;
    for (let i = 0; i < ids.length; i += 32) {
      const infos = await actorInfo(ids.slice(i, i + 32)).catch(() => []);
      asleep += infos.filter((a) => a && a.sleep_ts != null && a.connectable_ts == null).length;
    }
    if (asleep >= ids.length) break;
    await sleep(200);
  }
  await sleep(300);
  return asleep;
}

// ---------- workloads ----------

/// Runs one workload; a failure is reported under its name and the suite goes on.
async function attempt(name, fn) {
  try {
    await fn();
  } catch (e) {
    emit(name, { error: String(e?.message ?? e).slice(0, 400) });
  }
}

const TPUT_MAX = 1_000_000;

async function actionLatency() {
  if (isFloor) {
    if (enabled("http_read") || enabled("http_write")) {
      const r = await closedLoop(1, () => floorHttp(), T, 50_000, 20);
      emit("http_read", r);
      emit("http_write", r);
    }
    if (enabled("conn_read") || enabled("conn_write")) {
      const s = await EchoSocket.open(`${wsUrl}/`);
      const r = await closedLoop(1, () => s.request(floorBody), T, 100_000, 50);
      s.close();
      emit("conn_read", r);
      emit("conn_write", r);
    }
    return;
  }
  const h = client.counter.getOrCreate([`${PREFIX}-lat`]);
  await ensure([h]);
  if (enabled("http_read")) emit("http_read", await closedLoop(1, () => h.getCount(), T, 50_000, 20));
  if (enabled("http_write")) emit("http_write", await closedLoop(1, () => h.increment(1), T, 50_000, 20));
  if (enabled("conn_read") || enabled("conn_write")) {
    const [conn] = await connectAll([h]);
    if (enabled("conn_read")) emit("conn_read", await closedLoop(1, () => conn.getCount(), T, 100_000, 50));
    if (enabled("conn_write")) emit("conn_write", await closedLoop(1, () => conn.increment(1), T, 100_000, 50));
    await disposeAll([conn]);
  }
}

async function throughput() {
  const shapes = [];
  for (const c of [16, 64]) for (const shape of ["distinct", "shared"]) shapes.push([c, shape]);
  if (isFloor) {
    for (const [c, shape] of shapes) {
      if (enabled(`http_c${c}_${shape}`)) emit(`http_c${c}_${shape}`, await closedLoop(c, () => floorHttp(), T, TPUT_MAX, 2));
    }
    for (const [c, shape] of shapes) {
      if (!enabled(`conn_c${c}_${shape}`)) continue;
      const socks = await Promise.all(Array.from({ length: c }, () => EchoSocket.open(`${wsUrl}/`)));
      emit(`conn_c${c}_${shape}`, await closedLoop(c, (i) => socks[i].request(floorBody), T, TPUT_MAX, 2));
      socks.forEach((s) => s.close());
    }
    return;
  }
  // The distinct actors are shared by the HTTP and connection workloads (created once).
  const distinct = Array.from({ length: 64 }, (_, i) => client.counter.getOrCreate([`${PREFIX}-d-${i}`]));
  const shared = client.counter.getOrCreate([`${PREFIX}-shared`]);
  const need = shapes.some(([c, s]) => enabled(`http_c${c}_${s}`) || enabled(`conn_c${c}_${s}`));
  if (!need) return;
  await ensure([...distinct, shared]);
  for (const [c, shape] of shapes) {
    const name = `http_c${c}_${shape}`;
    if (!enabled(name)) continue;
    const hs = shape === "shared" ? Array(c).fill(shared) : distinct.slice(0, c);
    await attempt(name, async () => emit(name, await closedLoop(c, (i) => hs[i].increment(1), T, TPUT_MAX, 1)));
  }
  for (const [c, shape] of shapes) {
    const name = `conn_c${c}_${shape}`;
    if (!enabled(name)) continue;
    const hs = shape === "shared" ? Array(c).fill(shared) : distinct.slice(0, c);
    await attempt(name, async () => {
      const conns = await connectAll(hs);
      try {
        emit(name, await closedLoop(c, (i) => conns[i].increment(1), T, TPUT_MAX, 1));
      } finally {
        await disposeAll(conns);
      }
    });
  }
}

/// The C++ load generator (bench/loadgen) on the same actors as the Node throughput workloads
/// (keys `${PREFIX}-d-<i>` and `${PREFIX}-shared`, so nothing new is created): where Node is the
/// bottleneck, it shows what the server itself sustains. Its own CPU is the client column.
async function loadgen() {
  if (!cfg.loadgenBin) return;
  const runs = [
    ["lg_conn_c1", ["--mode", "conn", "--connections", "1", "--key-prefix", `${PREFIX}-d`]],
    ["lg_http_c1", ["--mode", "http", "--connections", "1", "--key-prefix", `${PREFIX}-d`]],
    ["lg_conn_c64_distinct", ["--mode", "conn", "--connections", "64", "--key-prefix", `${PREFIX}-d`]],
    ["lg_conn_c64_shared", ["--mode", "conn", "--connections", "64", "--actors", "shared", "--key-prefix", PREFIX]],
    ["lg_http_c64_distinct", ["--mode", "http", "--connections", "64", "--key-prefix", `${PREFIX}-d`]],
    ["lg_conn_c64_write", ["--mode", "conn", "--connections", "64", "--action", "increment", "--key-prefix", `${PREFIX}-d`]],
  ];
  if (!isFloor && runs.some(([n]) => enabled(n))) {
    // the actors exist already when the throughput workloads ran; otherwise create them here
    await ensure([...Array.from({ length: 64 }, (_, i) => client.counter.getOrCreate([`${PREFIX}-d-${i}`])), client.counter.getOrCreate([`${PREFIX}-shared`])]);
  }
  for (const [name, args] of runs) {
    if (!enabled(name)) continue;
    await attempt(name, async () => {
      const m = meterStart();
      const out = await new Promise((res, rej) =>
        execFile(
          cfg.loadgenBin,
          ["--url", endpoint, "--seconds", String(T), ...args, ...(isFloor ? ["--raw", "1"] : [])],
          { timeout: (T + 120) * 1000 },
          (err, stdout, stderr) => (err ? rej(new Error(`${err.message} ${stderr}`.slice(0, 300))) : res(stdout)),
        ),
      );
      const r = JSON.parse(out.trim().split("\n").pop());
      const meter = meterEnd(m, r.ops);
      emit(name, { ...meter, ...r, loadgen: true });
    });
  }
}

async function fanout() {
  if (!enabled("fanout")) return;
  const N = 100;
  const rounds = cfg.quick ? 10 : 50;
  let expected = 0;
  let received = 0;
  let lastAt = 0;
  let perEvent = [];
  let done = null;
  const onStamp = (t) => {
    const at = now();
    perEvent.push(at - t);
    received++;
    lastAt = at;
    if (received === expected) done?.();
  };
  let send;
  let cleanup;
  const tc = now();
  if (isFloor) {
    const subs = [];
    for (let i = 0; i < N; i++) {
      const s = await EchoSocket.open(`${wsUrl}/sub`);
      s.onMessage = (d) => onStamp(Number(d));
      subs.push(s);
    }
    const pub = await EchoSocket.open(`${wsUrl}/pub`);
    send = (t) => pub.request(String(t));
    cleanup = () => [...subs, pub].forEach((s) => s.close());
  } else {
    const key = [`${PREFIX}-fan`];
    const handles = Array.from({ length: N }, () => client.counter.getOrCreate(key));
    await ensure([handles[0]]);
    const conns = await connectAll(handles);
    for (const c of conns) c.on("stamp", onStamp);
    // one call per connection after subscribing, so the subscription is registered server-side
    await Promise.all(conns.map((c) => c.getCount()));
    const [sender] = await connectAll([client.counter.getOrCreate(key)]);
    send = (t) => sender.stamp(t);
    cleanup = () => disposeAll([...conns, sender]);
  }
  const connectAllMs = now() - tc;
  const all = [];
  const toLast = [];
  let missed = 0;
  let r = 0;
  const m = meterStart();
  const end = now() + T * 3 * 1000;
  for (; r < rounds && now() < end; r++) {
    received = 0;
    expected = N;
    perEvent = [];
    const finished = new Promise((res) => (done = res));
    const t0 = now();
    await send(t0);
    try {
      await withTimeout(finished, 5000, "fanout round");
      toLast.push(lastAt - t0);
    } catch {
      missed += N - received;
    }
    all.push(...perEvent);
    done = null;
    await sleep(10);
  }
  const meter = meterEnd(m, r * N);
  const ev = latency(all);
  emit("fanout_100", {
    subscribers: N,
    rounds: r,
    missed,
    connect_all_ms: round(connectAllMs, 1),
    ...ev,
    last_delivery_p50_ms: latency(toLast).p50_ms,
    last_delivery_p99_ms: latency(toLast).p99_ms,
    ops_per_s: round((r * N - missed) / meter.wall_s, 1),
    ...meter,
  });
  await cleanup();
}

async function payload() {
  for (const [size, tag] of [
    [1024, "1k"],
    [65536, "64k"],
  ]) {
    const body = "x".repeat(size);
    const mb = (r) => round((r.ops * size * 2) / r.wall_s / 1e6, 2);
    const maxOps = size > 1024 ? 5_000 : 50_000;
    if (isFloor) {
      if (enabled(`payload_${tag}_http`)) {
        const r = await closedLoop(1, () => floorHttp(body), T, maxOps, 5);
        emit(`payload_${tag}_http`, { bytes: size, mb_per_s: mb(r), ...r });
      }
      if (enabled(`payload_${tag}_conn`)) {
        const s = await EchoSocket.open(`${wsUrl}/`);
        const r = await closedLoop(1, () => s.request(body), T, maxOps, 5);
        s.close();
        emit(`payload_${tag}_conn`, { bytes: size, mb_per_s: mb(r), ...r });
      }
      continue;
    }
    if (!enabled(`payload_${tag}_http`) && !enabled(`payload_${tag}_conn`)) continue;
    const h = client.echo.getOrCreate([`${PREFIX}-echo-${tag}`]);
    await ensure([h], 1, (x) => x.echo(1));
    const check = async (call) => {
      const out = await call(body);
      if (typeof out !== "string" || out.length !== size) throw new Error(`echo returned ${typeof out} of ${out?.length}`);
    };
    if (enabled(`payload_${tag}_http`)) {
      await check((b) => h.echo(b));
      const r = await closedLoop(1, () => h.echo(body), T, maxOps, 5);
      emit(`payload_${tag}_http`, { bytes: size, mb_per_s: mb(r), ...r });
    }
    if (enabled(`payload_${tag}_conn`)) {
      const [conn] = await connectAll([h], (c) => c.echo(1));
      await check((b) => conn.echo(b));
      const r = await closedLoop(1, () => conn.echo(body), T, maxOps, 5);
      emit(`payload_${tag}_conn`, { bytes: size, mb_per_s: mb(r), ...r });
      await disposeAll([conn]);
    }
  }
}

async function durable() {
  if (isFloor) return;
  // 16 connections on 16 distinct actors, increment: replies held until the state change is
  // durable (counter, the default) vs released at once (counterUnheld, durable_replies = false).
  for (const [name, actor] of [
    ["durable_held", "counter"],
    ["durable_unheld", "counterUnheld"],
  ]) {
    if (!enabled(name)) continue;
    // counter reuses the throughput workloads' distinct actors (no extra creations)
    const hs = Array.from({ length: 16 }, (_, i) => client[actor].getOrCreate([`${PREFIX}-d-${i}`]));
    await ensure(hs);
    const conns = await connectAll(hs);
    emit(name, await closedLoop(16, (i) => conns[i].increment(1), T, TPUT_MAX, 1));
    await disposeAll(conns);
  }
}

async function creates() {
  if (isFloor) return;
  if (enabled("create_seq")) {
    let k = 0;
    const r = await closedLoop(1, () => client.counter.getOrCreate([`${PREFIX}-cs-${k++}`]).getCount(), T, cfg.quick ? 500 : 5000);
    emit("create_seq", r);
  }
  if (enabled("create_c16")) {
    let k = 0;
    const r = await closedLoop(16, () => client.counter.getOrCreate([`${PREFIX}-cc-${k++}`]).getCount(), T, 50_000);
    emit("create_c16", r);
  }
}

async function wake() {
  if (isFloor || !enabled("wake")) return;
  // The measured call is getCount() (read-only): the time is the wake itself. startId() changes on
  // every start of an actor, so comparing it before and after tells whether the call woke it.
  const K = isEngine ? (cfg.quick ? 5 : 20) : cfg.quick ? 200 : 1000;
  const handles = Array.from({ length: K }, (_, i) => client.counter.getOrCreate([`${PREFIX}-wake-${i}`]));
  const conc = isEngine ? 4 : 16;
  await ensure(handles, isEngine ? 4 : 16, (h) => h.increment(1));
  const ids = isEngine ? await Promise.all(handles.map((h) => h.resolve())) : [];
  const before = [];
  await pool(K, conc, async (i) => (before[i] = await handles[i].startId()));
  const warm = [];
  for (const h of handles.slice(0, Math.min(K, 50))) {
    const t = now();
    await h.getCount();
    warm.push(now() - t);
  }
  await pool(K, conc, (i) => handles[i].goToSleep());
  const asleep = isEngine ? await waitAsleep(ids, 60_000) : (await waitAsleep([], 1000), null);
  const lat = [];
  let errors = 0;
  const m = meterStart();
  const deadline = now() + Math.max(T * 5, 10) * 1000;
  let tried = 0;
  for (const h of handles) {
    if (now() > deadline) break;
    tried++;
    const t = now();
    try {
      await h.getCount();
      lat.push(now() - t);
    } catch {
      errors++;
    }
  }
  const meter = meterEnd(m, lat.length);
  let woke = 0;
  await pool(tried, conc, async (i) => {
    if ((await handles[i].startId()) !== before[i]) woke++;
  });
  emit("wake", { actors: tried, asleep_before: asleep, woke, errors, ...latency(lat), warm_p50_ms: latency(warm).p50_ms, ...meter });
}

async function memory() {
  if (isFloor || !enabled("memory")) return;
  const targets = cfg.memory.targets;
  const conc = isEngine ? 6 : 32;
  const perTargetMs = (isEngine ? cfg.memory.engine_seconds : cfg.memory.local_seconds) * 1000;
  await sleep(1000);
  const base = { server: rssKiB(pids.server), engine: rssKiB(pids.engine) };
  let created = 0;
  let errors = 0;
  const handles = [];
  const h = (i) => (handles[i] ??= client.counter.getOrCreate([`${PREFIX}-mem-${i}`]));
  const sample = (label, actors, extra = {}) => {
    const server = rssKiB(pids.server);
    const engine = rssKiB(pids.engine);
    emit(label, {
      actors,
      server_rss_kib: server,
      engine_rss_kib: Number.isFinite(engine) ? engine : null,
      server_base_kib: base.server,
      engine_base_kib: Number.isFinite(base.engine) ? base.engine : null,
      server_kib_per_actor: actors > 0 ? round((server - base.server) / actors, 3) : null,
      engine_kib_per_actor: actors > 0 && Number.isFinite(engine) ? round((engine - base.engine) / actors, 3) : null,
      ...extra,
    });
  };
  for (const target of targets) {
    const t0 = now();
    const m = meterStart();
    const r = await pool(target - created, conc, async (j) => {
      await h(created + j).increment(1);
    }, now() + perTargetMs);
    const startCount = created;
    created += r.done + r.failed;
    errors += r.failed;
    const meter = meterEnd(m, r.done);
    await sleep(2000);
    sample(`memory_awake_${target}`, created - errors, {
      target,
      reached: created - errors >= target,
      errors,
      creates_per_s: round(r.done / ((now() - t0 - 2000) / 1000), 1),
      ...meter,
    });
    if (created - startCount < target - startCount) break; // ran out of time: no bigger target
  }
  // Every created actor goes to sleep; then the resident memory is read again.
  const t0 = now();
  const s = await pool(created, conc, (i) => h(i).goToSleep(), now() + perTargetMs);
  await sleep(isEngine ? 5000 : 3000);
  sample("memory_asleep", created - errors, { slept: s.done, sleep_errors: s.failed, sleep_calls_s: round((now() - t0) / 1000, 1) });
}

/// Actor-to-actor calls: a `caller` actor makes BATCH sequential calls of `echo(i)` to its own
/// `echo` actor through c.client() and times each one itself, so the latency is the call between
/// the two actors (the client's round trip to the caller is not in it). a2a_seq: one caller;
/// a2a_c16: 16 callers, each with its own callee. Calls/s counts the inner calls.
async function actorCalls() {
  if (isFloor) return;
  const BATCH = 20;
  for (const [name, callers] of [
    ["a2a_seq", 1],
    ["a2a_c16", 16],
  ]) {
    if (!enabled(name)) continue;
    const hs = Array.from({ length: callers }, (_, i) => client.caller.getOrCreate([`${PREFIX}-a2a-${callers}-${i}`]));
    const callee = (i) => `${PREFIX}-a2a-echo-${callers}-${i}`;
    // Warm-up: every caller and its callee exist and have answered once.
    for (const [i, h] of hs.entries()) await withTimeout(h.callEcho(callee(i), 2), 60_000, `${name} warm-up`);
    const lat = [];
    let calls = 0;
    let errors = 0;
    let firstError;
    const maxCalls = cfg.quick ? 20_000 : 200_000;
    const end = now() + T * 1000;
    const m = meterStart();
    await Promise.all(
      hs.map(async (h, i) => {
        while (now() < end && calls < maxCalls) {
          try {
            const inner = await h.callEcho(callee(i), BATCH);
            for (const d of inner) lat.push(d);
            calls += inner.length;
          } catch (e) {
            errors++;
            firstError ??= String(e?.message ?? e).slice(0, 200);
            if (errors > 50) return;
            await sleep(20);
          }
        }
      }),
    );
    const meter = meterEnd(m, calls);
    emit(name, { clients: callers, ops: calls, errors, first_error: firstError, ops_per_s: round(calls / meter.wall_s, 1), ...latency(lat), ...meter });
  }
}

/// Queues: a `worker` actor's `run` loop takes each message of its queue `jobs` as completable and
/// completes it with its body; the client sends with {wait: true}, so one send is the whole round
/// trip: the message made durable, taken by the consumer, completed, the response back.
/// queue_wait_1: one sender on one actor (latency); queue_wait_64: 64 actors, one sender each
/// (messages/s through the consumers).
async function queues() {
  if (isFloor) return;
  for (const [name, actors] of [
    ["queue_wait_1", 1],
    ["queue_wait_64", 64],
  ]) {
    if (!enabled(name)) continue;
    // Handles by actor id: a getOrCreate handle's send resolves the key through the engine on
    // every call (measured: ~30 ms, serialized), which would time the engine's key lookup instead.
    const created = Array.from({ length: actors }, (_, i) => client.worker.getOrCreate([`${PREFIX}-queue-${actors}-${i}`]));
    const ids = [];
    await pool(actors, isEngine ? 16 : 32, async (i) => {
      ids[i] = await withTimeout(created[i].resolve(), 60_000, `${name} create`);
    });
    const hs = ids.map((id) => client.worker.getForId(id));
    const sendAndWait = async (h, n) => {
      const r = await h.send("jobs", { n }, { wait: true, timeout: 30_000 });
      if (r?.status !== "completed" || r.response?.n !== n) throw new Error(`send answered ${JSON.stringify(r)}`);
    };
    await pool(actors, isEngine ? 16 : 32, (i) => withTimeout(sendAndWait(hs[i], -1), 60_000, `${name} warm-up`));
    let seq = 0;
    const r = await closedLoop(actors, (i) => sendAndWait(hs[i], seq++), T, cfg.quick ? 20_000 : 200_000, 5);
    emit(name, r);
  }
}

const steps = [actionLatency, throughput, loadgen, fanout, payload, durable, creates, wake, actorCalls, queues, memory];
for (const step of steps) {
  try {
    await step();
  } catch (e) {
    emit(`${step.name}_failed`, { error: String(e?.stack ?? e).slice(0, 600) });
  }
}
emit("driver_done", { setup_retries: setupRetries });
await client?.dispose().catch(() => {});
process.exit(0);
