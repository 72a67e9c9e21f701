// Prometheus metrics: RIVETKIT_METRICS_PORT serves GET /metrics (and /health) on a port of its
// own in both modes; local mode also answers /metrics on its main port, with the actors asleep.
// Every check is a difference between two scrapes around what the test did, so other work in
// the same process cannot make it pass or fail.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, MODE, suiteTimeout, uniqueKey, useServer, waitFor, withTimeout } from "../lib/server.mjs";

const T = { timeout: 60_000 };

/** The metrics URL the server printed ("metrics on http://HOST:PORT/metrics"). */
function metricsUrl(server) {
	const m = server.output(100_000).match(/metrics on (http:\/\/[^\s]+\/metrics)/);
	assert.ok(m, "the server printed its metrics address");
	return m[1];
}

/** Parses the text format into {series: Map("name{labels}" -> number), text}. */
function parse(text) {
	const series = new Map();
	for (const line of text.split("\n")) {
		if (line === "" || line.startsWith("#")) continue;
		const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/);
		assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
		const value = m[2] === "+Inf" ? Infinity : Number(m[2]);
		assert.ok(!Number.isNaN(value), `a number in ${JSON.stringify(line)}`);
		series.set(m[1], value);
	}
	return series;
}

async function scrape(url) {
	const res = await withTimeout(fetch(url), 10_000, `GET ${url}`);
	assert.equal(res.status, 200);
	assert.match(res.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
	const text = await res.text();
	return { text, series: parse(text) };
}

const get = (s, key) => s.series.get(key) ?? 0;

describe("metrics", { timeout: suiteTimeout(180_000) }, () => {
	const env = useServer(undefined, { serverEnv: { RIVETKIT_METRICS_PORT: "0" } });

	it("counts actions, errors and their durations by actor and action", T, env.wrap(async () => {
		const url = metricsUrl(env.server);
		const handle = env.client.counter.getOrCreate([uniqueKey("metrics")]);
		await handle.increment(1); // the actor exists and runs before the first scrape
		const before = await scrape(url);
		await handle.increment(2);
		await handle.increment(3);
		await assert.rejects(handle.fail(), (e) => e instanceof ActorError && e.code === "my_code");
		await assert.rejects(handle.noSuchAction(), (e) => e instanceof ActorError && e.code === "action_not_found");
		const after = await scrape(url);

		const inc = '{actor="counter",action="increment"}';
		assert.ok(get(after, `rivetkit_actions_total${inc}`) - get(before, `rivetkit_actions_total${inc}`) >= 2);
		const fail = '{actor="counter",action="fail"}';
		assert.ok(get(after, `rivetkit_actions_total${fail}`) - get(before, `rivetkit_actions_total${fail}`) >= 1);
		const userErr = 'rivetkit_action_errors_total{actor="counter",action="fail",code="user.my_code"}';
		assert.ok(get(after, userErr) - get(before, userErr) >= 1, `${userErr} grew`);
		const missing = 'rivetkit_action_errors_total{actor="counter",action="",code="actor.action_not_found"}';
		assert.ok(get(after, missing) - get(before, missing) >= 1, `${missing} grew`);
		assert.ok(!after.text.includes("noSuchAction"), "a client's action name never becomes a label");

		const count = `rivetkit_action_duration_seconds_count${inc}`;
		assert.ok(get(after, count) - get(before, count) >= 2);
		assert.ok(get(after, `rivetkit_action_duration_seconds_sum${inc}`) > 0);
		// Buckets are cumulative and the +Inf bucket is the count.
		const buckets = [...after.series.entries()].filter(([k]) =>
			k.startsWith('rivetkit_action_duration_seconds_bucket{actor="counter",action="increment",le='),
		);
		assert.ok(buckets.length >= 10, `buckets: ${buckets.length}`);
		for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i][1] >= buckets[i - 1][1], "cumulative");
		assert.equal(buckets.at(-1)[0], 'rivetkit_action_duration_seconds_bucket{actor="counter",action="increment",le="+Inf"}');
		assert.equal(buckets.at(-1)[1], get(after, count));
	}));

	it("tracks awake actors and open connections", T, env.wrap(async () => {
		const url = metricsUrl(env.server);
		const before = await scrape(url);
		const conn = env.client.counter.getOrCreate([uniqueKey("conn")]).connect();
		try {
			await withTimeout(conn.increment(1), 20_000, "an action over the connection");
			const open = await scrape(url);
			assert.ok(get(open, 'rivetkit_connections{actor="counter"}') >= 1);
			assert.ok(get(open, 'rivetkit_actors_awake{actor="counter"}') >= 1);
			const opened = 'rivetkit_connections_opened_total{actor="counter"}';
			assert.ok(get(open, opened) - get(before, opened) >= 1);
		} finally {
			await withTimeout(conn.dispose(), 10_000, "conn.dispose()").catch(() => {});
		}
		await waitFor(async () => get(await scrape(url), 'rivetkit_connections{actor="counter"}') <= get(before, 'rivetkit_connections{actor="counter"}'), {
			timeout: 20_000,
			what: "the connections gauge to fall back once the connection closed",
		});
	}));

	it("records commits and bytes on the wire", T, env.wrap(async () => {
		const url = metricsUrl(env.server);
		const before = await scrape(url);
		const handle = env.client.counter.getOrCreate([uniqueKey("bytes")]);
		for (let i = 0; i < 3; i++) await handle.increment(1);
		const after = await scrape(url);
		const sum = (s, prefix) => [...s.series.entries()].filter(([k]) => k.startsWith(prefix)).reduce((a, [, v]) => a + v, 0);
		assert.ok(sum(after, "rivetkit_network_bytes_received_total") > sum(before, "rivetkit_network_bytes_received_total"));
		assert.ok(sum(after, "rivetkit_network_bytes_sent_total") > sum(before, "rivetkit_network_bytes_sent_total"));
		// A state change is durable before its reply: local mode's group commit, engine mode's KV write.
		const commits = MODE === "engine" ? "rivetkit_engine_kv_write_duration_seconds_count" : "rivetkit_storage_commit_duration_seconds_count";
		assert.ok(get(after, commits) - get(before, commits) >= 1, `${commits} grew`);
		if (MODE !== "engine") {
			const batches = "rivetkit_storage_commit_batch_size_count";
			assert.ok(get(after, batches) - get(before, batches) >= 1);
		}
	}));

	it("counts sleeps; local mode reports the actors asleep", T, env.wrap(async () => {
		const url = metricsUrl(env.server);
		const before = await scrape(url);
		const handle = env.client.sleepy.getOrCreate([uniqueKey("sleep")]);
		await handle.increment(1);
		await handle.goToSleep();
		const stops = 'rivetkit_actor_stops_total{actor="sleepy",reason="sleep"}';
		await waitFor(async () => get(await scrape(url), stops) > get(before, stops), {
			timeout: 30_000,
			what: "the sleep to be counted",
		});
		if (MODE !== "engine") {
			const main = await scrape(`${env.endpoint}/metrics`);
			assert.ok(get(main, 'rivetkit_actors_asleep{actor="sleepy"}') >= 1);
			assert.ok(main.series.has('rivetkit_actions_total{actor="sleepy",action="increment"}'));
		}
		const starts = 'rivetkit_actor_starts_total{actor="sleepy"}';
		const mid = await scrape(url);
		await handle.getCount(); // wakes it
		assert.ok(get(await scrape(url), starts) > get(mid, starts), "the wake counts as a start");
	}));

	it("the metrics port answers /health and nothing else", T, env.wrap(async () => {
		const base = metricsUrl(env.server).replace(/\/metrics$/, "");
		const health = await fetch(`${base}/health`);
		assert.equal(health.status, 200);
		assert.equal((await health.json()).mode, MODE === "engine" ? "engine" : "local");
		const other = await fetch(`${base}/actors`);
		assert.equal(other.status, 404);
		await other.text();
	}));
});
