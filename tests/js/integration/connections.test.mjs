// Connections (WS /connect) and events through the official client, plus a
// few raw-protocol checks for what the client hides (client-protocol.md §6.8;
// core-semantics.md §4).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, uniqueKey, withTimeout, waitFor, ActorError } from "../lib/server.mjs";
import { directUrl, openConnect, wsUrl, queryUrl } from "../lib/wire.mjs";

const T = { timeout: 30_000 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isActorError(err, group, code) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.constructor?.name}: ${err?.stack ?? err}`);
	assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
	return true;
}

describe(`connections and events [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();
	const conns = [];
	const connect = (handle, ...args) => {
		const c = handle.connect(...args);
		conns.push(c);
		return c;
	};
	after(async () => {
		for (const c of conns) await withTimeout(c.dispose(), 5_000, "conn.dispose()").catch(() => {});
	});

	it("connect: Init gives actor id and a UUID connection id", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("init")]);
		const conn = connect(h);
		await withTimeout(conn.ready, 10_000, "connection ready (Init)");
		assert.equal(conn.connStatus, "connected");
		assert.equal(conn.actorId, await h.resolve());
		assert.match(conn.connectionId, UUID);
	}));

	it("on('newCount') receives the event; the action over the connection returns", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("ev")]);
		const conn = connect(h);
		const seen = [];
		conn.on("newCount", (n) => seen.push(n));
		assert.equal(await withTimeout(conn.increment(3), 10_000, "conn.increment(3)"), 3);
		await waitFor(() => seen.includes(3), { timeout: 5_000, what: "newCount 3" });
		assert.equal(await conn.getCount(), 3);
		assert.equal(await h.getCount(), 3);
	}));

	it("the event of an action arrives before its response (§6.8 ordering)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("order")]);
		const conn = connect(h);
		const seen = [];
		conn.on("newCount", (n) => seen.push(n));
		await withTimeout(conn.ready, 10_000, "connection ready");
		for (let i = 1; i <= 10; i++) {
			const n = await withTimeout(conn.increment(1), 10_000, "conn.increment(1)");
			assert.equal(n, i);
			// Dispatched synchronously from the earlier frame: already here.
			assert.ok(seen.includes(n), `event newCount=${n} was delivered before the response (seen: ${seen})`);
		}
		assert.deepStrictEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
	}));

	it("HTTP actions broadcast to connected subscribers", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("httpev")]);
		const conn = connect(h);
		const seen = [];
		conn.on("newCount", (n) => seen.push(n));
		await withTimeout(conn.ready, 10_000, "connection ready");
		// The subscription is sent before Init is acted on; a round trip over the
		// socket guarantees the server has processed it.
		await conn.getCount();
		await h.increment(7);
		await waitFor(() => seen.includes(7), { timeout: 5_000, what: "newCount 7 from an HTTP action" });
	}));

	it("errors over the connection: user error and unknown action reject only that action", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("connerr")]);
		const conn = connect(h);
		await assert.rejects(withTimeout(conn.fail(), 10_000, "conn.fail()"), (err) => {
			isActorError(err, "user", "my_code");
			assert.equal(err.message, "this action always fails");
			assert.deepStrictEqual(err.metadata, { a: 1 });
			return true;
		});
		await assert.rejects(withTimeout(conn.action({ name: "nope", args: [] }), 10_000, "conn nope()"), (err) =>
			isActorError(err, "actor", "action_not_found"),
		);
		// Still connected and usable.
		assert.equal(await conn.increment(2), 2);
		assert.equal(conn.connStatus, "connected");
	}));

	it("many concurrent actions over one connection are matched to their responses", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("connconc")]);
		const conn = connect(h);
		const N = 30;
		const results = await withTimeout(
			Promise.all(Array.from({ length: N }, (_, i) => (i % 3 === 2 ? conn.echo(i) : conn.increment(1)))),
			20_000,
			"concurrent connection actions",
		);
		const incs = results.filter((_, i) => i % 3 !== 2);
		const echoes = results.filter((_, i) => i % 3 === 2);
		assert.deepStrictEqual([...incs].sort((a, b) => a - b), Array.from({ length: incs.length }, (_, i) => i + 1));
		assert.deepStrictEqual(echoes, Array.from({ length: N }, (_, i) => i).filter((i) => i % 3 === 2).map((i) => [i]));
		assert.equal(await conn.getCount(), incs.length);
	}));

	it("whisper (conn.send) reaches only the calling connection", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("whisper")]);
		const a = connect(h);
		const b = connect(h);
		const gotA = [];
		const gotB = [];
		a.on("whisper", (m) => gotA.push(m));
		b.on("whisper", (m) => gotB.push(m));
		await withTimeout(Promise.all([a.ready, b.ready]), 10_000, "both connections ready");
		await b.getCount(); // b's subscription is in place
		assert.equal(await withTimeout(a.whisper("psst"), 10_000, "a.whisper"), true);
		// Sent during a's action, so delivered before its response.
		assert.deepStrictEqual(gotA, ["psst"]);
		// Anything wrongly sent to b during a's action would precede b's next response.
		await b.getCount();
		assert.deepStrictEqual(gotB, []);
		assert.equal(await b.whisper("to-b"), true);
		assert.deepStrictEqual(gotB, ["to-b"]);
		await a.getCount();
		assert.deepStrictEqual(gotA, ["psst"]);
	}));

	it("two connections both receive a broadcast", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("bcast")]);
		const a = connect(h);
		const b = connect(h);
		const gotA = [];
		const gotB = [];
		a.on("newCount", (n) => gotA.push(n));
		b.on("newCount", (n) => gotB.push(n));
		await withTimeout(Promise.all([a.ready, b.ready]), 10_000, "both connections ready");
		await Promise.all([a.getCount(), b.getCount()]);
		assert.equal(await a.increment(5), 5);
		assert.deepStrictEqual(gotA, [5]);
		await waitFor(() => gotB.includes(5), { timeout: 5_000, what: "b to receive newCount 5" });
		assert.equal(await b.increment(1), 6);
		assert.deepStrictEqual(gotB, [5, 6]);
		await waitFor(() => gotA.includes(6), { timeout: 5_000, what: "a to receive newCount 6" });
		assert.deepStrictEqual(gotA, [5, 6]);
	}));

	it("once() fires once; unsubscribe stops delivery", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("unsub")]);
		const conn = connect(h);
		const onceSeen = [];
		const seen = [];
		conn.once("newCount", (n) => onceSeen.push(n));
		const unsub = conn.on("newCount", (n) => seen.push(n));
		await conn.increment(1);
		await conn.increment(1);
		assert.deepStrictEqual(onceSeen, [1]);
		assert.deepStrictEqual(seen, [1, 2]);
		unsub();
		await conn.increment(1);
		await conn.increment(1);
		assert.deepStrictEqual(seen, [1, 2]);
		// Re-subscribing works again.
		conn.on("newCount", (n) => seen.push(n));
		await conn.increment(1);
		assert.deepStrictEqual(seen, [1, 2, 5]);
	}));

	it("raw /connect: events go only to subscribed connections, and stop after unsubscribe", T, env.wrap(async () => {
		// The client drops unwanted events itself, so check the server's frames.
		const h = env.client.counter.getOrCreate([uniqueKey("rawsub")]);
		const id = await h.resolve();
		const url = wsUrl(directUrl(env.endpoint, id, "/connect"));
		const sub = await openConnect(url, ENCODING);
		const nosub = await openConnect(url, ENCODING);
		try {
			assert.equal(sub.init.actorId, id);
			assert.match(sub.init.connectionId, UUID);
			assert.notEqual(sub.init.connectionId, nosub.init.connectionId);

			sub.subscribe("newCount", true);
			let r = await sub.call("increment", [2]);
			assert.equal(r.result.tag, "ActionResponse");
			assert.equal(r.result.output, 2);
			assert.deepStrictEqual(r.before.map((f) => [f.tag, f.name, f.args]), [["Event", "newCount", [2]]], "Event before ActionResponse");

			// nosub never subscribed: its next response has no Event before it.
			r = await nosub.call("getCount", []);
			assert.equal(r.result.output, 2);
			assert.deepStrictEqual(r.before, [], "no events on an unsubscribed connection");

			sub.subscribe("newCount", false);
			r = await sub.call("increment", [1]);
			assert.equal(r.result.output, 3);
			assert.deepStrictEqual(r.before, [], "no events after unsubscribe");

			// whisper is sent whether or not the connection subscribed (conn.send).
			r = await nosub.call("whisper", ["direct"]);
			assert.equal(r.result.output, true);
			assert.deepStrictEqual(r.before.map((f) => [f.tag, f.name, f.args]), [["Event", "whisper", ["direct"]]]);
		} finally {
			sub.close();
			nosub.close();
		}
	}));

	it("raw /connect: id encoding follows §6.8 (bigint-compat json, 0x1b cbor)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("rawid")]);
		const id = await h.resolve();
		const c = await openConnect(wsUrl(directUrl(env.endpoint, id, "/connect")), ENCODING);
		try {
			c.sendAction("getCount", [], 41);
			const f = await c.frame();
			assert.equal(f.tag, "ActionResponse");
			assert.equal(f.id, 41);
			const expected = { json: "bigint-compat", cbor: "u64", bare: "uint" }[ENCODING];
			assert.equal(f.idForm, expected);
			c.sendAction("fail", [], 42);
			const e = await c.frame();
			assert.equal(e.tag, "Error");
			assert.equal(e.actionId, 42);
			assert.equal(e.actionIdForm, { json: "bigint-compat", cbor: "u64", bare: "uint" }[ENCODING]);
			assert.equal(e.group, "user");
			assert.equal(e.code, "my_code");
			assert.equal(e.message, "this action always fails");
			assert.deepStrictEqual(e.metadata, { a: 1 });
		} finally {
			c.close();
		}
	}));

	it("raw /connect: the 101 answers with subprotocol 'rivet'; query-gateway /connect works", T, env.wrap(async () => {
		const key = uniqueKey("rawq");
		const c = await openConnect(wsUrl(queryUrl(env.endpoint, "counter", "/connect", { key: [key] })), ENCODING);
		try {
			assert.equal(c.sock.protocol, "rivet");
			const r = await c.call("increment", [4]);
			assert.equal(r.result.output, 4);
			assert.equal(c.init.actorId, await env.client.counter.getOrCreate([key]).resolve());
		} finally {
			c.close();
		}
	}));

	it("raw /connect: a client close 1000 is answered with a close", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("rawclose")]);
		const id = await h.resolve();
		const c = await openConnect(wsUrl(directUrl(env.endpoint, id, "/connect")), ENCODING);
		c.sock.close(1000, "Disposed");
		const closed = await c.sock.closed(10_000);
		assert.equal(closed.code, 1000);
		assert.equal(await h.getCount(), 0);
	}));

	it("dispose() closes the connection; later calls fail; the actor keeps serving", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("dispose")]);
		const conn = connect(h);
		let closedCalls = 0;
		conn.onClose(() => closedCalls++);
		await withTimeout(conn.ready, 10_000, "connection ready");
		assert.equal(await conn.increment(1), 1);
		await withTimeout(conn.dispose(), 10_000, "conn.dispose()");
		assert.equal(conn.connStatus, "idle");
		assert.equal(closedCalls, 1);
		await assert.rejects(conn.getCount());
		assert.equal(await h.getCount(), 1);
		// A new connection on the same actor works.
		const again = connect(h);
		assert.equal(await withTimeout(again.increment(1), 10_000, "new connection increment"), 2);
	}));

	it("connections via getForId and create() handles", T, env.wrap(async () => {
		const created = await env.client.counter.create([uniqueKey("conncreate")]);
		const c1 = connect(created);
		assert.equal(await withTimeout(c1.increment(2), 10_000, "create() conn increment"), 2);
		const id = await created.resolve();
		const c2 = connect(env.client.counter.getForId(id));
		const seen = [];
		c2.on("newCount", (n) => seen.push(n));
		assert.equal(await withTimeout(c2.increment(1), 10_000, "getForId conn increment"), 3);
		assert.deepStrictEqual(seen, [3]);
		assert.equal(c2.actorId, id);
	}));
});
