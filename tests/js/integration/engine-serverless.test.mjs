// Serverless mode (RIVETKIT_RUNTIME_MODE=serverless, src/serverless/) against the real
// rivet-engine 2.3.19, in every encoding: the fixture server listens on a loopback port and the
// engine is given a serverless pool whose URL is the server's /api/rivet. The engine polls the
// metadata, then opens one POST /start per actor allocation; the official client, on the engine's
// endpoint with that pool, reaches the actors as in engine mode. Checked: the framework routes
// (banner, health, metadata), actions and connections with events on actors the engine started
// through /start, a process killed mid-stream (the engine starts its actor again, nothing
// acknowledged lost), an actor that sleeps and is started again by a new /start with its state, and
// bad /start requests answered with RivetKit's errors and a client hanging up a stream after its first
// ping, while the process keeps serving; and, on a
// pool whose requests live 10 s, the engine's GOING_AWAY at the end of a request's lifespan: the
// actor stops, its stream ends, and the next call starts it again through a new /start.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import {
	ENCODING,
	createClient,
	disposeClient,
	startServer,
	suiteTimeout,
	uniqueKey,
	waitFor,
	withTimeout,
} from "../lib/server.mjs";
import { ensureServerlessPool } from "../lib/engine.mjs";
import { suiteEngine, attachEngineOutput, eventually } from "../lib/engine-suite.mjs";

const T = { timeout: 120_000 };
const POOL = "serverless";

describe(`serverless mode [${ENCODING}]`, { timeout: suiteTimeout(420_000) }, () => {
	let engine;
	let server;
	let client;
	const base = () => `${server.endpoint}/api/rivet`;
	const wrap = (fn) => async () => {
		try {
			await fn();
		} catch (err) {
			throw attachEngineOutput(err, { servers: server ? [{ name: "serverless", server }] : [], engine });
		}
	};

	before(async () => {
		engine = await suiteEngine();
		server = await startServer({
			env: {
				RIVET_ENDPOINT: engine.endpoint,
				RIVETKIT_ENGINE_SPAWN: "never",
				RIVETKIT_RUNTIME_MODE: "serverless",
			},
		});
		await ensureServerlessPool(engine.endpoint, POOL, base());
		client = createClient({ endpoint: engine.endpoint, poolName: POOL });
	});

	after(async () => {
		if (client) await disposeClient(client);
		if (server) await server.dispose();
	});

	it("serves the banner, its health and the metadata the engine polls", T, wrap(async () => {
		const banner = await fetch(base());
		assert.equal(banner.status, 200);
		assert.match(await banner.text(), /RivetKit server/);
		const health = await fetch(`${base()}/health`);
		assert.equal(health.status, 200);
		assert.deepEqual(await health.json(), { runtime: "rivetkit", status: "ok", version: "2.3.19" });
		const metadata = await (await fetch(`${base()}/metadata`)).json();
		assert.equal(metadata.runtime, "rivetkit");
		assert.equal(metadata.version, "2.3.19");
		assert.equal(metadata.envoyProtocolVersion, 8);
		assert.deepEqual(metadata.envoy, { kind: { serverless: {} }, version: 1 });
		assert.deepEqual(metadata.actorNames.counter, { metadata: {} });
		assert.equal((await fetch(`${base()}/nothing`)).status, 404);
	}));

	it("an actor the engine starts through /start answers actions", T, wrap(async () => {
		const counter = client.counter.getOrCreate([uniqueKey("sl")]);
		assert.equal(await withTimeout(counter.increment(2), 90_000, "the first action"), 2);
		assert.equal(await counter.increment(3), 5);
		assert.equal(await counter.getCount(), 5);
		const metrics = await (await fetch(`${base()}/metrics`)).text();
		assert.match(metrics, /^rivetkit_serverless_starts_total [1-9]/m, "started through /start");
		assert.match(metrics, /^rivetkit_actors [1-9]/m, "running here");
		// The process's own metrics too (docs/operations.md, Metrics).
		assert.match(metrics, /^rivetkit_actions_total\{actor="counter",action="increment"\} [1-9]/m);
		assert.match(metrics, /^rivetkit_actors_awake\{actor="counter"\} [1-9]/m);
	}));

	it("connections get their events", T, wrap(async () => {
		const handle = client.counter.getOrCreate([uniqueKey("sl-conn")]);
		const conn = handle.connect();
		try {
			const got = new Promise((resolve) => conn.on("newCount", (n) => resolve(n)));
			assert.equal(await withTimeout(conn.increment(7), 90_000, "the action over the connection"), 7);
			assert.equal(await withTimeout(got, 15_000, "the event"), 7);
		} finally {
			await withTimeout(conn.dispose(), 15_000, "dispose");
		}
	}));

	it("an actor that slept is started again by a new /start, with its state", T, wrap(async () => {
		const sleepy = client.sleepy.getOrCreate([uniqueKey("sl-sleep")]);
		assert.equal(await withTimeout(sleepy.increment(4), 90_000, "the first action"), 4);
		const first = await sleepy.getLifecycle();
		// It sleeps after 1 s idle: the generation ends, its /start stream ends with `stopping`.
		await waitFor(
			async () => {
				const now = await sleepy.getLifecycle();
				return now.sleeps > first.sleeps;
			},
			{ timeout: 60_000, interval: 1_500, what: "the actor to sleep and wake" },
		);
		const after = await sleepy.getLifecycle();
		assert.equal(after.count, 4, "the state survived the sleep");
		assert.ok(after.wakes > first.wakes, "woken by a new start");
		assert.ok(after.generation > first.generation, "a new generation");
	}));

	it("a process killed mid-stream: the engine starts the actor again, nothing acknowledged lost", T, wrap(async () => {
		const counter = client.counter.getOrCreate([uniqueKey("sl-kill")]);
		assert.equal(await withTimeout(counter.increment(3), 90_000, "the first action"), 3);
		// SIGKILL: its /start streams end without `stopping`, so the engine treats the actor as
		// lost and starts it again through a new /start (here: the same URL, a new process).
		await server.restart({ hard: true, samePort: true });
		const count = await eventually(() => counter.getCount(), {
			accept: (n) => n === 3,
			timeout: 90_000,
			what: "the actor started again with its state",
		});
		assert.equal(count, 3);
		assert.equal(await counter.increment(1), 4);
	}));

	it("bad /start requests get RivetKit's errors and the process keeps serving", T, wrap(async () => {
		const start = (headers, body = "", signal = undefined) =>
			fetch(`${base()}/start`, { method: "POST", headers, body, signal });
		const none = await start({});
		assert.equal(none.status, 400);
		assert.equal((await none.json()).code, "invalid");
		const good = {
			"x-rivet-endpoint": `${engine.endpoint}/`,
			"x-rivet-pool-name": POOL,
			"x-rivet-namespace-name": "default",
		};
		const elsewhere = await start({ ...good, "x-rivet-endpoint": "http://10.255.255.1:6420" });
		assert.equal(elsewhere.status, 400);
		assert.equal((await elsewhere.json()).code, "endpoint_mismatch");
		const namespace = await start({ ...good, "x-rivet-namespace-name": "other" });
		assert.equal(namespace.status, 400);
		assert.equal((await namespace.json()).code, "namespace_mismatch");
		const garbage = await start(good, "not a start command");
		assert.equal(garbage.status, 400);
		assert.equal((await garbage.json()).group, "request");
		// A well-formed start (envoy-protocol.md §5's layout) of an actor type nobody registered,
		// with an id of the engine's form (§4.9: 19 bytes of version 1, 30 base36 digits, least
		// significant first) that the engine never issued.
		const engineId = () => {
			const bytes = [1, ...crypto.getRandomValues(new Uint8Array(18))];
			let digits = "";
			for (let i = 0; i < 30; i++) {
				let rem = 0;
				for (let b = bytes.length - 1; b >= 0; b--) {
					const v = rem * 256 + bytes[b];
					bytes[b] = Math.floor(v / 36);
					rem = v % 36;
				}
				digits += rem.toString(36);
			}
			return digits;
		};
		const startOf = (type, id = engineId()) =>
			Buffer.concat([
				Buffer.from("08000101", "hex"),
				Buffer.from([id.length]),
				Buffer.from(id),
				Buffer.from("01000000" + "0000000000000000" + "00", "hex"),
				Buffer.from([type.length]),
				Buffer.from(type),
				Buffer.from("00" + "2e145c36a2010000" + "000000", "hex"),
			]);
		// An id the engine would refuse (version 4): refused here before the envoy says anything
		// about it (the engine answers a KV request naming it by closing the envoy's connection).
		const badId = await start(good, startOf("counter", "0123456789abcdefghijklmnopqrst"));
		assert.equal(badId.status, 400);
		const badIdError = await badId.json();
		assert.equal(badIdError.code, "invalid");
		assert.match(badIdError.message, /not an engine actor id/);
		const unknown = startOf("nope");
		const nobody = await start(good, unknown);
		assert.equal(nobody.status, 400);
		assert.equal((await nobody.json()).code, "unknown_name");
		// A well-formed start of a registered type whose client reads the first ping, then hangs up:
		// the request ends, the cached envoy and the other actors are untouched.
		const known = startOf("counter");
		const hangUp = new AbortController();
		const early = await start(good, known, hangUp.signal);
		assert.equal(early.status, 200);
		assert.match(early.headers.get("content-type"), /text\/event-stream/);
		const reader = early.body.getReader();
		const first = await withTimeout(reader.read(), 30_000, "the first ping of the stream");
		assert.match(new TextDecoder().decode(first.value), /event: ping/);
		hangUp.abort();
		await reader.cancel().catch(() => {});
		const big = await start(good, "x".repeat((1 << 20) + 1));
		assert.equal(big.status, 413);
		assert.equal((await big.json()).code, "incoming_too_long");
		assert.equal((await fetch(`${base()}/health`)).status, 200);
		assert.equal(await client.counter.getOrCreate([uniqueKey("sl-after")]).increment(1), 1);
	}));
});

describe(`serverless mode, request lifespan [${ENCODING}]`, { timeout: suiteTimeout(300_000) }, () => {
	const LIFESPAN_POOL = "serverless-lifespan";
	let engine;
	let server;
	let client;
	const base = () => `${server.endpoint}/api/rivet`;
	const starts = async () => {
		const text = await (await fetch(`${base()}/metrics`)).text();
		return Number(/^rivetkit_serverless_starts_total (\d+)/m.exec(text)?.[1] ?? NaN);
	};

	before(async () => {
		engine = await suiteEngine();
		server = await startServer({
			env: {
				RIVET_ENDPOINT: engine.endpoint,
				RIVETKIT_ENGINE_SPAWN: "never",
				RIVETKIT_RUNTIME_MODE: "serverless",
			},
		});
		await ensureServerlessPool(engine.endpoint, LIFESPAN_POOL, base(), { requestLifespan: 10, drainGrace: 3 });
		client = createClient({ endpoint: engine.endpoint, poolName: LIFESPAN_POOL });
	});

	after(async () => {
		if (client) await disposeClient(client);
		if (server) await server.dispose();
	});

	it("at the end of its request's lifespan the actor moves to a new start, with its state", T, async () => {
		try {
			const counter = client.counter.getOrCreate([uniqueKey("sl-lifespan")]);
			assert.equal(await withTimeout(counter.increment(5), 90_000, "the first action"), 5);
			const first = await starts();
			assert.ok(first >= 1);
			// Calls keep it awake; the lifespan (10 s, GOING_AWAY 3 s before) ends its generation.
			await waitFor(
				async () => {
					assert.equal(await counter.getCount(), 5, "the state moves with it");
					return (await starts()) > first;
				},
				{ timeout: 60_000, interval: 1_000, what: "a new /start after the lifespan" },
			);
			assert.equal(await counter.increment(1), 6);
		} catch (err) {
			throw attachEngineOutput(err, { servers: server ? [{ name: "serverless", server }] : [], engine });
		}
	});
});
