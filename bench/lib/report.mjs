// Turns the suite's JSON lines into the Markdown tables and the SVG picture.

import { median, round, spread } from "./stats.mjs";

export const SYSTEMS = [
  { id: "local", label: "(a) rivetkit-cpp local", short: "a" },
  { id: "engine-cpp", label: "(b) rivetkit-cpp engine", short: "b" },
  { id: "official", label: "(c) official rivetkit on engine", short: "c" },
  { id: "floor", label: "(d) floor", short: "d" },
];

export const LATENCY_ROWS = [
  ["http_read", "HTTP action, 1 client (getCount)"],
  ["http_write", "HTTP action, 1 client (increment)"],
  ["conn_read", "Connection action, 1 client (getCount)"],
  ["conn_write", "Connection action, 1 client (increment)"],
  ["lg_conn_c1", "Connection action, 1 client (getCount), C++ loadgen"],
  ["lg_http_c1", "HTTP action, 1 client (getCount), C++ loadgen"],
  ["payload_1k_http", "Echo 1 KiB, HTTP"],
  ["payload_64k_http", "Echo 64 KiB, HTTP"],
  ["payload_1k_conn", "Echo 1 KiB, connection"],
  ["payload_64k_conn", "Echo 64 KiB, connection"],
  ["fanout_100", "Event fan-out 1 actor → 100 connections (per delivery)"],
  ["create_seq", "Create: getOrCreate(new key).getCount(), sequential"],
  ["wake", "Wake from sleep: getCount() to a sleeping actor"],
  ["a2a_seq", "Actor-to-actor action, 1 caller (echo, timed inside the caller)"],
  ["queue_wait_1", "Queue send-and-wait → run consumer → complete, 1 actor"],
  ["queue_wait_64", "Queue send-and-wait, 64 actors, 1 sender each"],
];

export const THROUGHPUT_ROWS = [
  ["http_c16_distinct", "HTTP, 16 clients, 16 actors"],
  ["http_c16_shared", "HTTP, 16 clients, 1 shared actor"],
  ["http_c64_distinct", "HTTP, 64 clients, 64 actors"],
  ["http_c64_shared", "HTTP, 64 clients, 1 shared actor"],
  ["conn_c16_distinct", "Connection, 16 clients, 16 actors"],
  ["conn_c16_shared", "Connection, 16 clients, 1 shared actor"],
  ["conn_c64_distinct", "Connection, 64 clients, 64 actors"],
  ["conn_c64_shared", "Connection, 64 clients, 1 shared actor"],
  ["lg_conn_c64_distinct", "Connection, 64 conns, 64 actors, getCount, C++ loadgen"],
  ["lg_conn_c64_shared", "Connection, 64 conns, 1 shared actor, getCount, C++ loadgen"],
  ["lg_conn_c64_write", "Connection, 64 conns, 64 actors, increment, C++ loadgen"],
  ["lg_http_c64_distinct", "HTTP, 64 clients, 64 actors, getCount, C++ loadgen"],
  ["fanout_100", "Fan-out deliveries/s (100 connections)"],
  ["create_c16", "Creates/s, 16 in flight"],
  ["durable_held", "Durable writes, replies held for commit (16 conns)"],
  ["durable_unheld", "Durable writes, replies not held (16 conns)"],
  ["a2a_seq", "Actor-to-actor calls/s, 1 caller"],
  ["a2a_c16", "Actor-to-actor calls/s, 16 callers, 16 callees"],
  ["queue_wait_1", "Queue messages/s through a run consumer, 1 actor, 1 sender"],
  ["queue_wait_64", "Queue messages/s through run consumers, 64 actors"],
];

export const CPU_ROWS = [
  ["http_read", "HTTP action, 1 client"],
  ["conn_read", "Connection action, 1 client"],
  ["http_c64_distinct", "HTTP, 64 clients, 64 actors"],
  ["conn_c64_distinct", "Connection, 64 clients, 64 actors"],
  ["conn_c64_shared", "Connection, 64 clients, 1 shared actor"],
  ["lg_conn_c64_distinct", "Connection, 64 conns, 64 actors, C++ loadgen"],
  ["lg_http_c64_distinct", "HTTP, 64 clients, 64 actors, C++ loadgen"],
  ["fanout_100", "Fan-out, per delivery"],
  ["create_c16", "Create, 16 in flight"],
  ["wake", "Wake from sleep"],
  ["a2a_c16", "Actor-to-actor call, 16 callers"],
];

/// records: the JSON lines of every driver; skips: {system: reason}.
export function aggregate(records) {
  const by = new Map(); // `${system}|${workload}` -> [records]
  for (const r of records) {
    const k = `${r.system}|${r.workload}`;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r);
  }
  return {
    get(system, workload) {
      return by.get(`${system}|${workload}`) ?? [];
    },
    /// Median over runs of one field, with [min, max] and the run count.
    stat(system, workload, field) {
      const rs = (by.get(`${system}|${workload}`) ?? []).filter((r) => !r.error && (r.ops ?? 1) > 0);
      const vals = rs.map((r) => r[field]).filter((v) => Number.isFinite(v));
      return { value: median(vals), range: spread(vals), runs: vals.length };
    },
  };
}

function fmt(x) {
  if (x == null || !Number.isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString("en-US");
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  if (a >= 0.01) return x.toFixed(3);
  return x.toPrecision(2);
}

let totalRuns = 1;

/// " ±x%" (half the min–max range over runs, relative to the median), and "[k/n runs]" when some
/// runs have no value.
function pctSpread(s) {
  let out = "";
  if (s.range && s.runs >= 2 && s.value) {
    const half = (s.range[1] - s.range[0]) / 2;
    out += ` ±${Math.round((half / Math.abs(s.value)) * 100)}%`;
  }
  if (s.runs > 0 && s.runs < totalRuns) out += ` [${s.runs}/${totalRuns} runs]`;
  return out;
}

function ratio(x) {
  if (x == null || !Number.isFinite(x)) return "–";
  if (x >= 100) return `${Math.round(x)}×`;
  if (x >= 10) return `${x.toFixed(1)}×`;
  return `${x.toFixed(2)}×`;
}

/// The cell of a system that has no number: skipped, failed or not applicable.
function emptyCell(agg, ctx, system, workload) {
  if (ctx.skips[system]) return "skipped¹";
  const failed = agg.get(system, workload).find((r) => r.error) ?? ctx.failures[`${system}|${workload}`];
  if (failed) return "failed²";
  if (system === "floor") return "n/a";
  return "–";
}

export function markdown(records, ctx) {
  const agg = aggregate(records);
  totalRuns = ctx.runs ?? 1;
  const systems = SYSTEMS.filter((s) => ctx.systems.includes(s.id));
  const has = (id) => ctx.systems.includes(id);
  const out = [];
  const head = (cols) => {
    out.push(`| ${cols.join(" | ")} |`);
    out.push(`| ${cols.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`);
  };

  // Latency.
  out.push(`### Latency: p50 / p99 ms (client side; median over runs, ±: spread of the p50 over runs)`);
  out.push("");
  const ratioCols = [];
  if (has("local") && has("official")) ratioCols.push(["a vs c", "local", "official", "better"]);
  if (has("local") && has("floor")) ratioCols.push(["a vs floor", "local", "floor", "cost"]);
  if (has("engine-cpp") && has("official")) ratioCols.push(["b vs c", "engine-cpp", "official", "better"]);
  head(["workload", ...systems.map((s) => s.label), ...ratioCols.map((c) => c[0])]);
  for (const [w, title] of LATENCY_ROWS) {
    const cells = systems.map((s) => {
      const p50 = agg.stat(s.id, w, "p50_ms");
      const p99 = agg.stat(s.id, w, "p99_ms");
      if (p50.value == null) return emptyCell(agg, ctx, s.id, w);
      return `${fmt(p50.value)} / ${fmt(p99.value)}${pctSpread(p50)}`;
    });
    const ratios = ratioCols.map(([, a, b, kind]) => {
      const x = agg.stat(a, w, "p50_ms").value;
      const y = agg.stat(b, w, "p50_ms").value;
      if (x == null || y == null || x === 0) return "–";
      return ratio(kind === "better" ? y / x : x / y);
    });
    out.push(`| ${title} | ${[...cells, ...ratios].join(" | ")} |`);
  }
  out.push("");

  // Throughput.
  out.push(`### Throughput: operations/s (median over runs, ±: spread over runs)`);
  out.push("");
  head(["workload", ...systems.map((s) => s.label), ...ratioCols.map((c) => c[0])]);
  for (const [w, title] of THROUGHPUT_ROWS) {
    const cells = systems.map((s) => {
      const v = agg.stat(s.id, w, "ops_per_s");
      if (v.value == null) return emptyCell(agg, ctx, s.id, w);
      return `${fmt(v.value)}${pctSpread(v)}`;
    });
    const ratios = ratioCols.map(([, a, b, kind]) => {
      const x = agg.stat(a, w, "ops_per_s").value;
      const y = agg.stat(b, w, "ops_per_s").value;
      if (!x || !y) return "–";
      return ratio(kind === "better" ? x / y : y / x);
    });
    out.push(`| ${title} | ${[...cells, ...ratios].join(" | ")} |`);
  }
  out.push("");
  for (const s of systems) {
    const held = agg.stat(s.id, "durable_held", "ops_per_s").value;
    const unheld = agg.stat(s.id, "durable_unheld", "ops_per_s").value;
    if (held && unheld && s.id === "official") {
      out.push(`- Durable writes, ${s.label}: this runtime never holds a reply for the save (it saves state on a 1 s throttle), so both rows run the same code (${Math.round((held / unheld) * 100)}%: noise).`);
    } else if (held && unheld) {
      out.push(`- Durable writes, ${s.label}: replies held for commit reach ${Math.round((held / unheld) * 100)}% of the not-held rate (fsync on every commit batch).`);
    }
  }
  out.push("");

  // CPU.
  out.push(`### CPU time per operation, ms (from /proc: every process of the system; runtime process alone in brackets)`);
  out.push("");
  const cpuRatio = has("engine-cpp") && has("official");
  head(["workload", ...systems.map((s) => s.label), "client (Node)", ...(cpuRatio ? ["b runtime ÷ c runtime"] : [])]);
  for (const [w, title] of CPU_ROWS) {
    const cells = systems.map((s) => {
      const total = agg.stat(s.id, w, "system_cpu_ms_per_op");
      if (total.value == null) return emptyCell(agg, ctx, s.id, w);
      const server = agg.stat(s.id, w, "server_cpu_ms_per_op");
      const engine = agg.stat(s.id, w, "engine_cpu_ms_per_op");
      return engine.value != null ? `${fmt(total.value)} (${fmt(server.value)})` : fmt(total.value);
    });
    const clientCpu = agg.stat(has("local") ? "local" : systems[0]?.id, w, "client_cpu_ms_per_op").value;
    const extra = [];
    if (cpuRatio) {
      const b = agg.stat("engine-cpp", w, "server_cpu_ms_per_op").value;
      const c = agg.stat("official", w, "server_cpu_ms_per_op").value;
      extra.push(b != null && c ? `${fmt(b / c)}` : "–");
    }
    out.push(`| ${title} | ${[...cells, fmt(clientCpu), ...extra].join(" | ")} |`);
  }
  out.push("");
  out.push("CPU is sampled from /proc/PID/stat (10 ms ticks) over the measured part of each workload and includes");
  out.push("each process's idle background work. The client column is the client driving (a): Node, or the C++");
  out.push("load generator in its rows.");
  out.push("");

  // Memory.
  const memSystems = systems.filter((s) => s.id !== "floor");
  const memLabels = [...new Set(records.filter((r) => r.workload.startsWith("memory_")).map((r) => r.workload))];
  memLabels.sort((x, y) => (x === "memory_asleep") - (y === "memory_asleep") || parseInt(x.split("_")[2]) - parseInt(y.split("_")[2]));
  if (memLabels.length > 0) {
    out.push(`### Resident memory with idle actors (RSS from /proc; KiB per actor above the process's RSS before the actors)`);
    out.push("");
    head(["state", ...memSystems.map((s) => s.label)]);
    for (const label of memLabels) {
      const title =
        label === "memory_asleep" ? "after every actor went to sleep" : `${label.split("_")[2]} awake idle actors (target)`;
      const cells = memSystems.map((s) => {
        const actors = agg.stat(s.id, label, "actors").value;
        const per = agg.stat(s.id, label, "server_kib_per_actor").value;
        const rss = agg.stat(s.id, label, "server_rss_kib").value;
        if (rss == null) return emptyCell(agg, ctx, s.id, label);
        const eng = agg.stat(s.id, label, "engine_kib_per_actor").value;
        const engRss = agg.stat(s.id, label, "engine_rss_kib").value;
        let cell = `${Math.round(actors).toLocaleString("en-US")} actors: runtime ${fmt(rss / 1024)} MiB (${fmt(per)} KiB/actor)`;
        if (engRss != null) cell += `; engine ${fmt(engRss / 1024)} MiB (${fmt(eng)} KiB/actor)`;
        return cell;
      });
      out.push(`| ${title} | ${cells.join(" | ")} |`);
    }
    out.push("");
    out.push("Each actor's persisted state is `{count}` (one small integer). Engine systems create");
    out.push("actors with a bounded time budget per step, so their rows show how many were reached.");
    out.push("");
  }

  out.push(...targets(agg, ctx));

  // Footnotes.
  const notes = [];
  for (const [s, reason] of Object.entries(ctx.skips)) {
    notes.push(`¹ ${SYSTEMS.find((x) => x.id === s)?.label ?? s} skipped: ${reason}`);
  }
  const fails = records.filter((r) => r.error);
  for (const f of fails) notes.push(`² ${f.system} ${f.workload}: ${String(f.error).split("\n")[0].slice(0, 240)}`);
  for (const [k, v] of Object.entries(ctx.failures)) notes.push(`² ${k}: ${v}`);
  const wakes = records.filter((r) => r.workload === "wake" && r.woke != null && r.woke < r.actors);
  for (const w of wakes) notes.push(`- ${w.system} run ${w.run}: ${w.woke} of ${w.actors} measured wake calls found the actor asleep.`);
  if (notes.length) {
    out.push(...notes.map((n) => `${n}  `));
    out.push("");
  }
  return out.join("\n");
}

/// The targets (goals, not assertions), checked against this run's medians.
function targets(agg, ctx) {
  const v = (sys, w, f) => agg.stat(sys, w, f).value;
  const rows = [];
  const add = (target, measured, ok) => {
    const skipped = Object.keys(ctx.skips).find((id) => target.startsWith(`(${SYSTEMS.find((x) => x.id === id)?.short})`));
    if (measured === "–" && skipped) measured = "skipped¹";
    rows.push(`| ${target} | ${measured} | ${ok == null ? "n/a" : ok ? "yes" : "no"} |`);
  };
  const better = (w) => {
    const a = v("local", w, "p50_ms");
    const c = v("official", w, "p50_ms");
    return a && c ? c / a : null;
  };
  for (const [w, what] of [
    ["http_read", "HTTP action"],
    ["conn_read", "connection action"],
  ]) {
    const r = better(w);
    add(`(a) p50 of a ${what} ≥ 30× lower than (c)`, r == null ? "–" : `${fmt(r)}×`, r == null ? null : r >= 30);
  }
  for (const [w, what] of [
    ["http_read", "HTTP action, Node client"],
    ["conn_read", "connection action, Node client"],
    ["lg_http_c1", "HTTP action, C++ loadgen"],
    ["lg_conn_c1", "connection action, C++ loadgen"],
  ]) {
    const a = v("local", w, "p50_ms");
    const f = v("floor", w, "p50_ms");
    const r = a && f ? a / f : null;
    add(`(a) p50 within 2× of the floor (${what})`, r == null ? "–" : `${fmt(r)}× the floor`, r == null ? null : r <= 2);
  }
  const lg = v("local", "lg_conn_c64_distinct", "ops_per_s");
  add("(a) ≥ 20,000 connection actions/s (C++ loadgen, 64 conns)", lg == null ? "–" : `${fmt(lg)}/s`, lg == null ? null : lg >= 20_000);
  for (const [w, what] of [
    ["create_seq", "create"],
    ["wake", "wake"],
  ]) {
    const r = better(w);
    add(`(a) ${what} ≥ 50× faster than (c) (p50)`, r == null ? "–" : `${fmt(r)}×`, r == null ? null : r >= 50);
  }
  for (const w of ["http_read", "conn_read"]) {
    const b = v("engine-cpp", w, "server_cpu_ms_per_op");
    const c = v("official", w, "server_cpu_ms_per_op");
    const r = b != null && c ? b / c : null;
    add(`(b) runtime CPU per ${w === "http_read" ? "HTTP" : "connection"} action ≤ 1/5 of (c)'s runtime`, r == null ? "–" : `${fmt(r)} of (c)`, r == null ? null : r <= 0.2);
    const bl = v("engine-cpp", w, "p50_ms");
    const cl = v("official", w, "p50_ms");
    add(`(b) ${w === "http_read" ? "HTTP" : "connection"} action p50 no worse than (c)`, bl == null || cl == null ? "–" : `${fmt(bl)} vs ${fmt(cl)} ms`, bl == null || cl == null ? null : bl <= cl);
  }
  const mem = v("local", "memory_awake_10000", "server_kib_per_actor") ?? v("local", "memory_awake_1000", "server_kib_per_actor");
  add("(a) awake idle actor < 4 KiB above its state", mem == null ? "–" : `${fmt(mem)} KiB/actor`, mem == null ? null : mem < 4);
  const wake = v("local", "wake", "p50_ms");
  add("(a) wake < 1 ms (p50, Node client)", wake == null ? "–" : `${fmt(wake)} ms`, wake == null ? null : wake < 1);
  const held = v("local", "durable_held", "ops_per_s");
  const unheld = v("local", "durable_unheld", "ops_per_s");
  add("(a) durable-reply throughput ≥ 50% of the not-held rate", held && unheld ? `${Math.round((held / unheld) * 100)}%` : "–", held && unheld ? held / unheld >= 0.5 : null);
  return [
    "### Targets of the issue (goals, not assertions), against this run",
    "",
    "| target | measured | met |",
    "| --- | ---: | :---: |",
    ...rows,
    "",
  ];
}

/// Horizontal bars of the p50 latency of each workload, one bar per system, on a log scale.
export function svg(records, ctx) {
  const agg = aggregate(records);
  const systems = SYSTEMS.filter((s) => ctx.systems.includes(s.id));
  const colors = { local: "#1b7f3b", "engine-cpp": "#58a55c", official: "#d9534f", floor: "#888888" };
  const rows = LATENCY_ROWS.filter(([w]) => systems.some((s) => agg.stat(s.id, w, "p50_ms").value != null));
  const vals = rows.flatMap(([w]) => systems.map((s) => agg.stat(s.id, w, "p50_ms").value)).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...vals, 0.01))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...vals, 1))));
  const W = 980;
  const labelW = 360;
  const plotW = W - labelW - 90;
  const barH = 11;
  const groupH = systems.length * (barH + 2) + 12;
  const top = 58;
  const H = top + rows.length * groupH + 40;
  const x = (v) => labelW + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`);
  o.push(`<rect width="100%" height="100%" fill="white"/>`);
  o.push(`<text x="10" y="18" font-size="14" font-weight="bold">${esc(ctx.title)}</text>`);
  o.push(`<text x="10" y="34" fill="#444">p50 latency, ms, log scale (shorter is faster). ${esc(ctx.subtitle)}</text>`);
  systems.forEach((s, i) => {
    const lx = 10 + i * 240;
    o.push(`<rect x="${lx}" y="42" width="10" height="10" fill="${colors[s.id]}"/>`);
    o.push(`<text x="${lx + 14}" y="51">${esc(s.label)}${ctx.skips[s.id] ? " (skipped)" : ""}</text>`);
  });
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    const gx = x(d);
    o.push(`<line x1="${gx}" y1="${top - 2}" x2="${gx}" y2="${H - 30}" stroke="#ddd"/>`);
    o.push(`<text x="${gx}" y="${H - 16}" text-anchor="middle" fill="#444">${d >= 1 ? Math.round(d) : Number(d.toPrecision(1))}</text>`);
  }
  rows.forEach(([w, title], r) => {
    const gy = top + r * groupH;
    o.push(`<text x="${labelW - 8}" y="${gy + groupH / 2}" text-anchor="end">${esc(title)}</text>`);
    systems.forEach((s, i) => {
      const v = agg.stat(s.id, w, "p50_ms").value;
      const y = gy + 4 + i * (barH + 2);
      if (v == null || v <= 0) {
        o.push(`<text x="${labelW + 4}" y="${y + barH - 2}" fill="#999">${ctx.skips[s.id] ? "skipped" : "n/a"}</text>`);
        return;
      }
      o.push(`<rect x="${labelW}" y="${y}" width="${Math.max(1, x(v) - labelW)}" height="${barH}" fill="${colors[s.id]}"/>`);
      o.push(`<text x="${x(v) + 4}" y="${y + barH - 2}">${fmt(v)}</text>`);
    });
  });
  o.push(`</svg>`);
  return o.join("\n");
}

export { round };
