// Actor lifecycle through the official client: idle sleep and wake, c.sleep(),
// hibernating connections (core-semantics.md §1.3, §4), messages sent to a
// sleeping actor, onDisconnect while asleep, `run` aborted at sleep, and a raw
// hibernating WebSocket. Fixture actors `sleepy`, `looper`, `sleepyRaw` run with
// sleep_timeout 1000 ms and grace 3000 ms; `observer` reads the hook log.
// Waits are bounded polls on outcomes (hook log, state), never fixed delays.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, uniqueKey, withTimeout, waitFor } from "../lib/server.mjs";
import { observer, watchConn, disposeConn, trackWs } from "../lib/lifecycle.mjs";

const T = { timeout: 60_000 };

describe(`lifecycle: sleep and wake [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();
	const conns = [];
	const sockets = [];
	const connect = (handle) => {
		const c = handle.connect();
		conns.push(c);
		return c;
	};
	after(async () => {
		for (const c of conns) await disposeConn(c);
		for (const s of sockets) s.close();
	});
	const obs = () => observer(env.client);

	it("idle sleep: the actor sleeps after sleep_timeout without activity; the next call wakes it with state intact", T, env.wrap(async () => {
		const key = uniqueKey("idle");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const first = await h.getLifecycle();
		assert.equal(first.wakes, 1, `a new actor woke once: ${JSON.stringify(first)}`);
		assert.equal(first.sleeps, 0);
		assert.equal(await h.increment(4), 4);
		assert.equal(await h.increment(3), 7);

		// Only the observer is polled: the sleepy actor sees no request while idle.
		await o.waitEvent(`sleepy:onSleep:${key}`);

		const life = await h.getLifecycle();
		assert.equal(life.count, 7, `count survived the sleep: ${JSON.stringify(life)}`);
		assert.ok(life.sleeps >= 1, `onSleep's state change was saved: ${JSON.stringify(life)}`);
		assert.ok(life.wakes >= 2, `onWake ran again at wake: ${JSON.stringify(life)}`);
		assert.ok(life.generation > first.generation, `a new generation after the wake: ${first.generation} -> ${life.generation}`);
		assert.ok((await o.count(`sleepy:onWake:${key}`)) >= 2, "onWake recorded for the create and for the wake");
		// And it keeps working.
		assert.equal(await h.increment(1), 8);
	}));

	it("c.sleep(): goToSleep puts the actor to sleep; the next call wakes it with state intact", T, env.wrap(async () => {
		const key = uniqueKey("csleep");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(5), 5);
		const before = await h.getLifecycle();
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		await o.waitEvent(`sleepy:onSleep:${key}`, { since });

		const life = await h.getLifecycle();
		assert.equal(life.count, 5, JSON.stringify(life));
		assert.equal(life.sleeps, before.sleeps + 1, `one sleep: ${JSON.stringify(before)} -> ${JSON.stringify(life)}`);
		assert.equal(life.wakes, before.wakes + 1, `one wake: ${JSON.stringify(before)} -> ${JSON.stringify(life)}`);
		assert.ok(life.generation > before.generation, `generation ${before.generation} -> ${life.generation}`);
		assert.equal(await h.getCount(), 5);
	}));

	it("a connection stays open across the actor's sleep (hibernation) and gets events and replies after the wake", T, env.wrap(async () => {
		// Everything on this actor goes over the one connection: HTTP actions open
		// transient connections of their own (onConnect/onDisconnect, core-semantics §3).
		const key = uniqueKey("hib");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const conn = connect(h);
		const rec = watchConn(conn);
		const counts = [];
		const sleeping = [];
		conn.on("newCount", (n) => counts.push(n));
		conn.on("sleeping", (n) => sleeping.push(n));
		await withTimeout(conn.ready, 10_000, "connection ready");
		assert.equal(await withTimeout(conn.increment(2), 10_000, "conn.increment(2)"), 2);
		assert.deepStrictEqual(counts, [2]);
		const before = await withTimeout(conn.getLifecycle(), 10_000, "conn.getLifecycle()");
		await o.waitEvent(`sleepy:onConnect:${key}`);

		// The actor sleeps although the client stays connected (its socket hibernates).
		const afterSleep = await o.waitEvent(`sleepy:onSleep:${key}`, { timeout: 20_000 });
		// onSleep's broadcast reached the still-subscribed connection.
		await waitFor(() => sleeping.length > 0, { timeout: 5_000, what: "the `sleeping` event from onSleep" });
		assert.equal(conn.connStatus, "connected", "still connected while the actor sleeps");

		// An action over the same connection wakes the actor; its broadcast, produced
		// by the new instance, reaches the restored connection (subscription kept).
		assert.equal(await withTimeout(conn.increment(3), 15_000, "conn.increment(3) to the sleeping actor"), 5);
		assert.deepStrictEqual(counts, [2, 5], "newCount 5 produced after the wake was delivered (before the reply)");
		assert.ok((await o.count(`sleepy:onWake:${key}`, afterSleep)) >= 1, "the actor woke after its sleep");
		const life = await withTimeout(conn.getLifecycle(), 10_000, "conn.getLifecycle() after the wake");
		assert.ok(life.generation > before.generation, `the connection talks to the new instance: gen ${before.generation} -> ${life.generation}`);
		assert.equal(life.count, 5);
		assert.ok(life.sleeps >= 1);
		assert.equal(await withTimeout(conn.increment(1), 10_000, "conn.increment(1)"), 6);
		assert.deepStrictEqual(counts, [2, 5, 6]);

		// The client never saw the socket go away, and the actor saw no disconnect/reconnect.
		assert.equal(conn.connStatus, "connected");
		assert.deepStrictEqual(rec.statuses, ["connected"], "status changes after connect() (its first \"connecting\" is set before listeners)");
		assert.equal(rec.closes, 0, "no onClose");
		assert.equal(rec.opens, 1, "opened once");
		assert.deepStrictEqual(rec.errors, []);
		assert.equal(await o.count(`sleepy:onConnect:${key}`), 1, "onConnect ran once (not again at the wake)");
		assert.equal(await o.count(`sleepy:onDisconnect:${key}`), 0, "no onDisconnect for a hibernated connection");
	}));

	it("messages sent over a connection to a sleeping actor are delivered once and in order", T, env.wrap(async () => {
		const key = uniqueKey("queued");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const conn = connect(h);
		const rec = watchConn(conn);
		const counts = [];
		conn.on("newCount", (n) => counts.push(n));
		const start = await withTimeout(conn.increment(10), 10_000, "conn.increment(10)");
		assert.equal(start, 10);
		const slept = await o.waitEvent(`sleepy:onSleep:${key}`, { timeout: 20_000 });

		const N = 20;
		const pending = [];
		for (let i = 0; i < N; i++) pending.push(conn.increment(1));
		const results = await withTimeout(Promise.all(pending), 30_000, `${N} increments sent to the sleeping actor`);
		assert.deepStrictEqual(results, Array.from({ length: N }, (_, i) => start + i + 1), "each reply in order, each increment once");
		assert.equal(await withTimeout(conn.getCount(), 10_000, "conn.getCount()"), start + N, "exactly N increments applied");
		// Each event precedes its action's response on the socket.
		assert.deepStrictEqual(counts, Array.from({ length: N + 1 }, (_, i) => start + i), "events once and in order");
		assert.deepStrictEqual(rec.statuses, ["connected"], "no disconnect");
		assert.ok((await o.count(`sleepy:onWake:${key}`, slept)) >= 1, "the messages woke the actor");
		assert.equal(await o.count(`sleepy:onConnect:${key}`), 1);
		assert.equal(await o.count(`sleepy:onDisconnect:${key}`), 0);
		// Seen from outside too (an HTTP action).
		assert.equal(await h.getCount(), start + N);
	}));

	it("onDisconnect runs when the client goes away while the actor sleeps", T, env.wrap(async () => {
		const key = uniqueKey("gone");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const conn = connect(h);
		assert.equal(await withTimeout(conn.increment(1), 10_000, "conn.increment(1)"), 1);
		await o.waitEvent(`sleepy:onConnect:${key}`);
		const slept = await o.waitEvent(`sleepy:onSleep:${key}`, { timeout: 20_000 });
		assert.equal(await o.count(`sleepy:onDisconnect:${key}`), 0, "no onDisconnect at sleep");

		await withTimeout(conn.dispose(), 10_000, "conn.dispose()");
		await o.waitEvent(`sleepy:onDisconnect:${key}`, { since: slept, timeout: 10_000 });
		assert.equal(await o.count(`sleepy:onDisconnect:${key}`), 1, "onDisconnect ran exactly once");
		assert.equal(await h.getCount(), 1, "state intact");
	}));

	it("looper: the `run` loop is aborted at sleep; run_aborts and ticks persist", T, env.wrap(async () => {
		const key = uniqueKey("loop");
		const o = obs();
		const h = env.client.looper.getOrCreate([key]);
		const ticking = await waitFor(
			async () => {
				const s = await h.getState();
				return s.ticks > 0 ? s : false;
			},
			{ timeout: 10_000, interval: 50, what: "looper ticks > 0" },
		);
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		try {
			await o.waitEvent(`looper:runAborted:${key}`, { since });
		} catch (err) {
			// Say what the actor did instead (did it sleep at all? did `run` end without the abort?).
			const state = await withTimeout(h.getState(), 10_000, "looper getState").catch((e) => `unavailable: ${e.message}`);
			err.message += `\nobserver log for ${key}: ${JSON.stringify(await o.forKey(key))}\nstate now: ${JSON.stringify(state)}`;
			throw err;
		}

		const s = await h.getState();
		assert.ok(s.run_aborts >= 1, `run_aborts saved: ${JSON.stringify(s)}`);
		assert.ok(s.ticks >= ticking.ticks, `ticks persisted across the sleep: ${ticking.ticks} -> ${s.ticks}`);
		// `run` starts again on wake.
		await waitFor(async () => (await h.getState()).ticks > s.ticks, { timeout: 10_000, interval: 50, what: "looper ticking again after the wake" });
	}));

	it("raw hibernating WebSocket: survives the actor's sleep; a message after it reaches the new instance, no second greeting", T, env.wrap(async () => {
		const key = uniqueKey("rawhib");
		const o = obs();
		const h = env.client.sleepyRaw.getOrCreate([key]);
		const ws = await withTimeout(h.webSocket("ws"), 10_000, "handle.webSocket('ws')");
		const s = trackWs(ws);
		sockets.push(s);
		assert.equal(await s.next(), "hello from actor");
		s.ws.send("a");
		const first = await s.next();
		const m1 = /^echo:a:gen(\d+)$/.exec(first);
		assert.ok(m1, `first echo: ${JSON.stringify(first)}`);
		const gen1 = Number(m1[1]);

		await o.waitEvent(`sleepyRaw:onSleep:${key}`, { timeout: 20_000 });
		assert.equal(s.closeEvent, undefined, "the socket stayed open while the actor slept");

		s.ws.send("hi");
		const reply = await s.next(20_000);
		const m2 = /^echo:hi:gen(\d+)$/.exec(reply);
		assert.ok(m2, `echo after the sleep (no second greeting before it): ${JSON.stringify(reply)}`);
		assert.ok(Number(m2[1]) > gen1, `served by a later generation: gen${gen1} -> gen${m2[1]}`);
		s.ws.send("again");
		assert.equal(await s.next(), `echo:again:gen${m2[1]}`);
		assert.deepStrictEqual(
			s.seen.filter((m) => m === "hello from actor"),
			["hello from actor"],
			`one greeting only: ${JSON.stringify(s.seen)}`,
		);
	}));
});
