// Engine mode, lifecycle: sleep and wake through the engine (the actor asks the engine to
// sleep, the engine stops it, and starts it again on the next request or alarm), a connection
// and a raw WebSocket that survive the actor's sleep, an alarm waking a sleeping actor, destroy.
// One rivet-engine 2.3.19 and one engine-mode fixture server for the file (lib/engine-suite.mjs);
// the client talks to the engine's gateway. Fixture actors `sleepy`, `sleepyRaw` run with
// sleep_timeout 1000 ms; `observer` reads the process's hook log (the server is the only envoy,
// so the observer runs in the same process as the observed actors). Waits are bounded polls on
// outcomes; while waiting for a sleep or an alarm only the observer is read.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, suiteTimeout, uniqueKey, withTimeout, waitFor } from "../lib/server.mjs";
import { useEngine } from "../lib/engine-suite.mjs";
import { restApi } from "../lib/wire.mjs";
import { observer, watchConn, disposeConn, trackWs, isActorError } from "../lib/lifecycle.mjs";

const T = { timeout: 90_000 };

/** The engine's record of an actor (GET /actors?actor_ids=<id>): sleep_ts, connectable_ts, destroy_ts... */
async function engineActor(endpoint, id) {
	const r = await restApi(endpoint).getById(id);
	assert.equal(r.status, 200, `GET /actors?actor_ids=${id}: ${r.status} ${r.text}`);
	return r.json?.actors?.find((a) => a.actor_id === id);
}

/** Waits until the engine's record of `id` satisfies `pred` (reading it never wakes the actor). */
async function waitEngineActor(endpoint, id, pred, what) {
	let last;
	try {
		await waitFor(
			async () => {
				last = await engineActor(endpoint, id);
				return last !== undefined && pred(last);
			},
			{ timeout: 20_000, interval: 50, what: `engine's record of ${id}: ${what}` },
		);
	} catch (err) {
		err.message += ` (last: ${JSON.stringify(last)})`;
		throw err;
	}
	return last;
}

describe(`engine mode: sleep, wake, alarms, destroy [${ENCODING}]`, { timeout: suiteTimeout(390_000) }, () => {
	const env = useEngine();
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

	it("c.sleep(): the actor sleeps through the engine; the next call wakes it with state intact", T, env.wrap(async () => {
		const key = uniqueKey("csleep");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(5), 5);
		assert.equal(await h.increment(2), 7);
		const before = await h.getLifecycle();
		assert.equal(before.wakes, 1, `a new actor woke once: ${JSON.stringify(before)}`);
		const id = await h.resolve();
		const awake = await engineActor(env.endpoint, id);
		assert.ok(awake?.connectable_ts && !awake.sleep_ts, `the engine has the actor awake: ${JSON.stringify(awake)}`);
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		// The engine itself has the actor asleep (not only the runtime).
		await waitEngineActor(env.endpoint, id, (a) => a.sleep_ts && !a.connectable_ts && !a.destroy_ts, "asleep");

		const life = await withTimeout(h.getLifecycle(), 20_000, "getLifecycle() on the sleeping actor");
		assert.equal(life.count, 7, `count survived the sleep: ${JSON.stringify(life)}`);
		assert.equal(life.sleeps, before.sleeps + 1, `onSleep's state change was saved: ${JSON.stringify(life)}`);
		assert.equal(life.wakes, before.wakes + 1, `onWake ran again: ${JSON.stringify(life)}`);
		assert.ok(life.generation > before.generation, `a new generation after the wake: ${before.generation} -> ${life.generation}`);
		assert.ok((await o.count(`sleepy:onWake:${key}`, since)) >= 1, "onWake recorded after the sleep");
		assert.equal(await h.resolve(), id, "same actor id");
		const woken = await engineActor(env.endpoint, id);
		assert.ok(woken?.connectable_ts && !woken.sleep_ts, `the engine has the actor awake again: ${JSON.stringify(woken)}`);
		assert.equal(await env.client.sleepy.getForId(id).increment(1), 8, "keeps working (getForId)");
	}));

	it("idle sleep: without requests the actor sleeps after sleep_timeout; a call wakes it with state intact", T, env.wrap(async () => {
		const key = uniqueKey("idle");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(4), 4);
		const before = await h.getLifecycle();
		const since = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		const life = await withTimeout(h.getLifecycle(), 20_000, "getLifecycle() on the sleeping actor");
		assert.equal(life.count, 4, JSON.stringify(life));
		assert.ok(life.sleeps >= 1, JSON.stringify(life));
		assert.ok(life.generation > before.generation, `generation ${before.generation} -> ${life.generation}`);
		assert.equal(await h.increment(1), 5);
	}));

	it("sleep/wake cycles: state written in each generation survives the next sleep", T, env.wrap(async () => {
		const key = uniqueKey("cycles");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		let expected = 0;
		let lastGen = -1;
		for (let round = 1; round <= 3; round++) {
			expected += round;
			assert.equal(await h.increment(round), expected, `round ${round}`);
			const life = await h.getLifecycle();
			assert.ok(life.generation > lastGen, `round ${round}: generation ${lastGen} -> ${life.generation}`);
			lastGen = life.generation;
			const since = await o.mark();
			assert.equal(await h.goToSleep(), true);
			await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		}
		const life = await withTimeout(h.getLifecycle(), 20_000, "getLifecycle() after 3 sleeps");
		assert.equal(life.count, expected, JSON.stringify(life));
		assert.equal(life.sleeps, 3, JSON.stringify(life));
		assert.equal(life.wakes, 4, JSON.stringify(life));
	}));

	it("a connection survives the actor's sleep (hibernation) and gets events and replies after the wake", T, env.wrap(async () => {
		const key = uniqueKey("hib");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const conn = connect(h);
		const rec = watchConn(conn);
		const counts = [];
		const sleeping = [];
		conn.on("newCount", (n) => counts.push(n));
		conn.on("sleeping", (n) => sleeping.push(n));
		await withTimeout(conn.ready, 15_000, "connection ready");
		assert.equal(await withTimeout(conn.increment(2), 10_000, "conn.increment(2)"), 2);
		assert.deepStrictEqual(counts, [2]);
		const before = await withTimeout(conn.getLifecycle(), 10_000, "conn.getLifecycle()");
		await o.waitEvent(`sleepy:onConnect:${key}`);

		// Over the connection itself: an HTTP action would open a transient connection of its own.
		const since = await o.mark();
		assert.equal(await withTimeout(conn.goToSleep(), 10_000, "conn.goToSleep()"), true);
		await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		await waitFor(() => sleeping.length > 0, { timeout: 10_000, what: "the `sleeping` event from onSleep" });
		assert.equal(conn.connStatus, "connected", "still connected while the actor sleeps");

		assert.equal(await withTimeout(conn.increment(3), 20_000, "conn.increment(3) to the sleeping actor"), 5);
		assert.deepStrictEqual(counts, [2, 5], "newCount produced by the woken instance reached the connection");
		const life = await withTimeout(conn.getLifecycle(), 10_000, "conn.getLifecycle() after the wake");
		assert.ok(life.generation > before.generation, `the connection talks to the new instance: gen ${before.generation} -> ${life.generation}`);
		assert.equal(life.count, 5);
		assert.equal(await withTimeout(conn.increment(1), 10_000, "conn.increment(1)"), 6);
		assert.deepStrictEqual(counts, [2, 5, 6]);

		assert.equal(conn.connStatus, "connected");
		assert.deepStrictEqual(rec.statuses, ["connected"], "the client never saw the connection drop");
		assert.equal(rec.closes, 0, "no onClose");
		assert.deepStrictEqual(rec.errors, []);
		assert.equal(await o.count(`sleepy:onConnect:${key}`), 1, "onConnect ran once (not again at the wake)");
		assert.equal(await o.count(`sleepy:onDisconnect:${key}`), 0, "no onDisconnect for a hibernated connection");

		// Idle sleep with the connection open, then a wake by a message on it.
		const since2 = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since: since2, timeout: 20_000 });
		assert.equal(await withTimeout(conn.increment(1), 20_000, "conn.increment(1) after an idle sleep"), 7);
		assert.deepStrictEqual(rec.statuses, ["connected"]);
	}));

	it("a raw hibernatable WebSocket survives the actor's sleep; a message after it reaches the new instance", T, env.wrap(async () => {
		const key = uniqueKey("rawhib");
		const o = obs();
		const h = env.client.sleepyRaw.getOrCreate([key]);
		const s = trackWs(await withTimeout(h.webSocket("ws"), 15_000, "handle.webSocket('ws')"));
		sockets.push(s);
		assert.equal(await s.next(), "hello from actor");
		s.ws.send("a");
		const m1 = /^echo:a:gen(\d+)$/.exec(await s.next());
		assert.ok(m1, "first echo");
		const gen1 = Number(m1[1]);

		await o.waitEvent(`sleepyRaw:onSleep:${key}`, { timeout: 20_000 });
		assert.equal(s.closeEvent, undefined, "the socket stayed open while the actor slept");
		s.ws.send("hi");
		const reply = await s.next(20_000);
		const m2 = /^echo:hi:gen(\d+)$/.exec(reply);
		assert.ok(m2, `echo after the sleep (no second greeting): ${JSON.stringify(reply)} (seen: ${JSON.stringify(s.seen)})`);
		assert.ok(Number(m2[1]) > gen1, `served by a later generation: gen${gen1} -> gen${m2[1]}`);
		s.ws.send("again");
		assert.equal(await s.next(), `echo:again:gen${m2[1]}`);
	}));

	it("an alarm (schedule.after) wakes the sleeping actor and the scheduled action runs once", T, env.wrap(async () => {
		const key = uniqueKey("alarm");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(1), 1);
		const id = await h.scheduleIncrement(4_000, 10);
		assert.deepStrictEqual((await h.listSchedules()).map((e) => e.id), [id]);
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		const slept = await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		// No request reaches this actor from here on: a wake can only be the alarm's.
		await o.waitEvent(`sleepy:onWake:${key}`, { since: slept, timeout: 30_000 });
		let last;
		await waitFor(
			async () => {
				last = await h.getCount();
				return last === 11;
			},
			{ timeout: 15_000, interval: 100, what: "count 11 from the scheduled increment" },
		).catch((err) => {
			err.message += ` (last count: ${last})`;
			throw err;
		});
		assert.deepStrictEqual(await h.listSchedules(), [], "a fired one-shot is gone");
		// After the next sleep, nothing fired again.
		const since2 = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since: since2, timeout: 20_000 });
		assert.equal(await h.getCount(), 11, "fired once");
	}));

	it("an alarm due while the actor sleeps with no client at all (idle sleep) still fires", T, env.wrap(async () => {
		const key = uniqueKey("alarm-idle");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const at = (await h.now()) + 4_000;
		await h.scheduleIncrementAt(at, 3);
		const since = await o.mark();
		const slept = await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		await o.waitEvent(`sleepy:onWake:${key}`, { since: slept, timeout: 30_000 });
		await waitFor(async () => (await h.getCount()) === 3, { timeout: 15_000, interval: 100, what: "count 3 from the alarm" });
		assert.deepStrictEqual(await h.listSchedules(), []);
	}));

	it("destroy (c.destroy()): onDestroy runs; the id is gone; getOrCreate makes a fresh actor", T, env.wrap(async () => {
		const key = uniqueKey("destroy");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(9), 9);
		const id = await h.resolve();
		assert.equal(await h.destroySelf(), true);
		await o.waitEvent(`sleepy:onDestroy:${key}`, { timeout: 20_000 });
		assert.equal(await o.count(`sleepy:onSleep:${key}`), 0, "a destroy is not a sleep");
		await waitEngineActor(env.endpoint, id, (a) => a.destroy_ts, "destroyed (destroy_ts set)");
		await waitFor(
			async () => {
				try {
					await withTimeout(env.client.sleepy.getForId(id).getCount(), 15_000, "getForId(destroyed id).getCount()");
					return false;
				} catch (err) {
					return isActorError(err, "actor", "not_found");
				}
			},
			{ timeout: 30_000, interval: 250, what: "getForId(destroyed id) -> actor/not_found" },
		);
		const fresh = env.client.sleepy.getOrCreate([key]);
		assert.equal(await fresh.getCount(), 0, "a fresh actor under the same key");
		assert.notEqual(await fresh.resolve(), id, "with a new actor id");
		const life = await fresh.getLifecycle();
		assert.equal(life.wakes, 1, `fresh state: ${JSON.stringify(life)}`);
		assert.equal(await o.count(`sleepy:onDestroy:${key}`), 1, "onDestroy ran once");
	}));

	it("destroy through the engine's API (DELETE /actors/{id}) of a sleeping actor: its state is gone", T, env.wrap(async () => {
		const key = uniqueKey("destroy-rest");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		assert.equal(await h.increment(4), 4);
		const id = await h.resolve();
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		await o.waitEvent(`sleepy:onSleep:${key}`, { since, timeout: 20_000 });
		await waitEngineActor(env.endpoint, id, (a) => a.sleep_ts, "asleep");
		const del = await restApi(env.endpoint).destroy(id);
		assert.equal(del.status, 200, `DELETE /actors/${id}: ${del.status} ${del.text}`);
		await waitEngineActor(env.endpoint, id, (a) => a.destroy_ts, "destroyed (destroy_ts set)");
		await waitFor(
			async () => {
				try {
					await withTimeout(env.client.sleepy.getForId(id).getCount(), 15_000, "getForId(destroyed id).getCount()");
					return false;
				} catch (err) {
					return isActorError(err, "actor", "not_found");
				}
			},
			{ timeout: 30_000, interval: 250, what: "getForId(destroyed id) -> actor/not_found" },
		);
		const fresh = env.client.sleepy.getOrCreate([key]);
		assert.equal(await fresh.getCount(), 0, "a fresh actor under the same key, without the old state");
		assert.notEqual(await fresh.resolve(), id);
	}));
});
