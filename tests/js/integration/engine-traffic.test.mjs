// Engine mode, traffic: the fixture server runs as an envoy of a real rivet-engine 2.3.19
// (lib/engine-suite.mjs: one engine per file, pool "default", RIVETKIT_ENGINE_SPAWN=never) and
// the official client talks to the ENGINE's endpoint; the engine's gateway tunnels actions,
// connections, events, raw requests and raw WebSockets to the C++ actors.
// Fixture actors: counter (increment/getCount/echo/fail/big/whisper, onRequest, onWebSocket),
// guarded (connection params), withInput.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, ActorError, suiteTimeout, uniqueKey, withTimeout, waitFor } from "../lib/server.mjs";
import { useEngine } from "../lib/engine-suite.mjs";
import { isActorError, disposeConn, trackWs } from "../lib/lifecycle.mjs";

const T = { timeout: 60_000 };

async function json(res) {
	const text = await res.text();
	try {
		return JSON.parse(text);
	} catch {
		assert.fail(`response is not JSON (status ${res.status}): ${text.slice(0, 500)}`);
	}
}

describe(`engine mode: actions, connections, raw traffic [${ENCODING}]`, { timeout: suiteTimeout(390_000) }, () => {
	const env = useEngine();
	const conns = [];
	const sockets = [];
	const connect = (handle, ...args) => {
		const c = handle.connect(...args);
		conns.push(c);
		return c;
	};
	after(async () => {
		for (const c of conns) await disposeConn(c);
		for (const s of sockets) s.close();
	});
	const openWs = async (handle, path = "ws") => {
		const s = trackWs(await withTimeout(handle.webSocket(path), 15_000, `handle.webSocket(${JSON.stringify(path)})`));
		sockets.push(s);
		return s;
	};

	it("actions: increment/getCount through the gateway; same key -> same actor, other key -> other actor", T, env.wrap(async () => {
		const key = uniqueKey("act");
		const h = env.client.counter.getOrCreate([key]);
		assert.equal(await h.increment(5), 5);
		assert.equal(await h.increment(2), 7);
		assert.equal(await h.getCount(), 7);
		const id = await h.resolve();
		assert.equal(typeof id, "string");
		assert.ok(id.length > 0);
		assert.equal(await env.client.counter.getOrCreate([key]).getCount(), 7, "a second handle on the key");
		assert.equal(await env.client.counter.getForId(id).getCount(), 7, "getForId");
		assert.equal(await env.client.counter.get([key]).getCount(), 7, "get");
		const other = env.client.counter.getOrCreate([uniqueKey("act-other")]);
		assert.equal(await other.increment(1), 1);
		assert.notEqual(await other.resolve(), id);
		assert.equal(await h.getCount(), 7);
	}));

	it("actions: arguments and results round-trip (echo), a 100 kB result (big)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("echo")]);
		const args = [1, -2.5, "héllo ✓", true, null, [1, [2, "x"]], { a: 1, nested: { b: [false] } }];
		assert.deepStrictEqual(await h.echo(...args), args);
		assert.deepStrictEqual(await h.echo(), []);
		const big = await h.big(100_000);
		assert.equal(typeof big, "string");
		assert.equal(big.length, 100_000);
		assert.ok(/^x+$/.test(big));
	}));

	it("actions: a user error comes back as ActorError user/my_code with metadata; unknown action -> action_not_found", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("err")]);
		await assert.rejects(h.fail(), (err) => {
			isActorError(err, "user", "my_code");
			assert.equal(err.message, "this action always fails");
			assert.deepStrictEqual(err.metadata, { a: 1 });
			return true;
		});
		await assert.rejects(h.action({ name: "noSuchAction", args: [] }), (err) => isActorError(err, "actor", "action_not_found"));
		assert.equal(await h.increment(1), 1, "still usable");
	}));

	it("actions: create with input (withInput); create on an existing key fails; get on a missing key -> not_found", T, env.wrap(async () => {
		const key = uniqueKey("in");
		const input = { name: "engine", list: [1, 2, 3], nested: { ok: true } };
		const h = await env.client.withInput.create([key], { input });
		assert.deepStrictEqual(await h.getInput(), input);
		const id = await h.resolve();
		assert.deepStrictEqual(await env.client.withInput.getForId(id).getInput(), input);
		// The engine decides a duplicate create, never the runtime: actor.duplicate_key, or (seen on
		// a loaded machine) actor.destroyed_during_creation when its create op misses the workflow's
		// completion message and finds the conflicting new actor already destroyed.
		await assert.rejects(
			withTimeout(env.client.withInput.create([key], { input: { other: 1 } }), 20_000, "create on an existing key"),
			(err) => {
				assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
				assert.ok(
					["actor.duplicate_key", "actor.destroyed_during_creation"].includes(`${err.group}.${err.code}`),
					`create on an existing key: ${err.group}.${err.code}: ${err.message}`,
				);
				return true;
			},
		);
		assert.deepStrictEqual(await env.client.withInput.getOrCreate([key]).getInput(), input, "the existing actor kept its input");
		assert.equal(await env.client.withInput.getOrCreate([key]).resolve(), id, "and its id");
		await assert.rejects(
			withTimeout(env.client.counter.get([uniqueKey("missing")]).getCount(), 20_000, "get([missing key])"),
			(err) => isActorError(err, "actor", "not_found"),
		);
	}));

	it("connections: actions over the connection, events to every subscriber, whisper to the caller only", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("conn")]);
		const a = connect(h);
		const b = connect(h);
		const seenA = [];
		const seenB = [];
		const whispersA = [];
		const whispersB = [];
		a.on("newCount", (n) => seenA.push(n));
		b.on("newCount", (n) => seenB.push(n));
		a.on("whisper", (m) => whispersA.push(m));
		b.on("whisper", (m) => whispersB.push(m));
		await withTimeout(Promise.all([a.ready, b.ready]), 15_000, "both connections ready");
		assert.equal(a.connStatus, "connected");
		assert.equal(a.actorId, await h.resolve());
		assert.notEqual(a.connectionId, b.connectionId);

		assert.equal(await withTimeout(a.increment(3), 10_000, "a.increment(3)"), 3);
		// The event of an action precedes its response on the caller's socket.
		assert.deepStrictEqual(seenA, [3]);
		await waitFor(() => seenB.includes(3), { timeout: 10_000, what: "newCount 3 on the other connection" });
		assert.equal(await withTimeout(b.increment(4), 10_000, "b.increment(4)"), 7);
		await waitFor(() => seenA.includes(7), { timeout: 10_000, what: "newCount 7 on connection a" });
		// An HTTP action's broadcast reaches the connections too.
		assert.equal(await h.increment(1), 8);
		await waitFor(() => seenA.includes(8) && seenB.includes(8), { timeout: 10_000, what: "newCount 8 on both" });
		assert.deepStrictEqual(seenA, [3, 7, 8]);
		assert.deepStrictEqual(seenB, [3, 7, 8]);

		assert.equal(await withTimeout(a.whisper("psst"), 10_000, "a.whisper"), true);
		assert.deepStrictEqual(whispersA, ["psst"]);
		assert.equal(await withTimeout(b.whisper({ to: "b" }), 10_000, "b.whisper"), true);
		assert.deepStrictEqual(whispersB, [{ to: "b" }]);
		assert.deepStrictEqual(whispersA, ["psst"], "a got nothing of b's whisper");

		// Many actions in flight over one connection: replies in order.
		const pending = [];
		for (let i = 0; i < 20; i++) pending.push(a.increment(1));
		const results = await withTimeout(Promise.all(pending), 20_000, "20 pipelined increments");
		assert.deepStrictEqual(results, Array.from({ length: 20 }, (_, i) => 9 + i));
		assert.equal(await withTimeout(b.getCount(), 10_000, "b.getCount()"), 28);
	}));

	it("connections: params reach onBeforeConnect/createConnState; a rejected connection fails with the user error", T, env.wrap(async () => {
		const key = uniqueKey("guard");
		const good = connect(env.client.guarded.getOrCreate([key], { params: { token: "ok", user: "alice" } }));
		assert.equal(await withTimeout(good.whoami(), 15_000, "good.whoami()"), "alice");
		assert.equal(await env.client.guarded.getOrCreate([key], { params: { token: "ok", user: "bob" } }).whoami(), "bob");

		const bad = connect(env.client.guarded.getOrCreate([key], { params: { token: "bad" } }));
		const errors = [];
		bad.onError((e) => errors.push(e));
		await assert.rejects(withTimeout(bad.whoami(), 15_000, "bad.whoami()"), (err) => isActorError(err, "user", "forbidden_token"));
		await waitFor(() => errors.length > 0, { timeout: 10_000, what: "onError of the rejected connection" });
		for (const e of errors) isActorError(e, "user", "forbidden_token");
		await assert.rejects(env.client.guarded.getOrCreate([key], { params: { token: "bad" } }).whoami(), (err) =>
			isActorError(err, "user", "forbidden_token"),
		);
		// The good connection is unaffected.
		assert.equal(await withTimeout(good.whoami(), 10_000, "good.whoami() again"), "alice");
	}));

	it("raw request: GET with path and query, POST with a body, headers both ways", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const res = await withTimeout(h.fetch("hello/world?x=1&x=2", { headers: { "X-Test-Header": "abc" } }), 15_000, "fetch GET");
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("x-custom"), "1");
		const get = await json(res);
		assert.equal(get.method, "GET");
		assert.equal(get.path, "/hello/world");
		assert.equal(get.search, "?x=1&x=2");
		assert.equal(get.headers["x-test-header"], "abc");
		assert.ok(!get.search.includes("rvt-"), `gateway parameters stay out of the actor's query: ${get.search}`);

		const payload = JSON.stringify({ a: 1, b: [true, null, "✓"] });
		const post = await json(
			await withTimeout(
				h.fetch("post/here", { method: "POST", body: payload, headers: { "content-type": "application/json" } }),
				15_000,
				"fetch POST",
			),
		);
		assert.equal(post.method, "POST");
		assert.equal(post.path, "/post/here");
		assert.equal(post.body, payload);
		assert.match(post.headers["content-type"], /^application\/json/);

		// A larger body (several tunnel messages' worth).
		const large = "y".repeat(200_000);
		const echoed = await json(await withTimeout(h.fetch("large", { method: "PUT", body: large }), 20_000, "fetch PUT 200 kB"));
		assert.equal(echoed.method, "PUT");
		assert.equal(echoed.body.length, large.length);
		assert.equal(echoed.body, large);
		// Actions still work on the same actor.
		assert.equal(await h.increment(2), 2);
	}));

	it("raw WebSocket: greeting, text and binary echo, order, close; two sockets are independent", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("ws")]);
		const s = await openWs(h);
		assert.equal(await s.next(), "hello from actor");
		s.ws.send("hi");
		assert.equal(await s.next(), "echo:hi");
		const bytes = new Uint8Array([0, 1, 2, 127, 128, 254, 255]);
		s.ws.send(bytes);
		const back = await s.next();
		assert.ok(back instanceof ArrayBuffer, `binary stays binary (got ${typeof back})`);
		assert.deepStrictEqual([...new Uint8Array(back)], [...bytes]);
		const large = new Uint8Array(60_000).map((_, i) => (i * 7) & 0xff);
		s.ws.send(large);
		assert.ok(Buffer.from(await s.next()).equals(Buffer.from(large)), "a 60 kB binary message comes back unchanged");
		for (let i = 0; i < 30; i++) s.ws.send(`m${i}`);
		for (let i = 0; i < 30; i++) assert.equal(await s.next(), `echo:m${i}`);

		const other = await openWs(env.client.counter.getForId(await h.resolve()), "other/path?q=1");
		assert.equal(await other.next(), "hello from actor");
		other.ws.send("x");
		s.ws.send("y");
		assert.equal(await other.next(), "echo:x");
		assert.equal(await s.next(), "echo:y");

		s.close();
		await waitFor(() => s.closeEvent !== undefined, { timeout: 10_000, what: "the client's close to complete" });
		other.ws.send("still");
		assert.equal(await other.next(), "echo:still");
		assert.equal(await h.increment(1), 1, "actions keep working");
	}));
});
