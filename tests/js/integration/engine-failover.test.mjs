// Engine mode, failures: two rivetkit-cpp processes in pool "default" of one rivet-engine
// 2.3.19 (SIGKILL of one: its actors come back on the other with their acknowledged state, and
// their queued messages with their delivery counts, a workflow resumed without repeating a
// recorded step; a graceful stop of one: its actors move to
// the other), and the engine restarted (SIGTERM, then
// SIGKILL) under a running runtime, which reconnects while actors keep working.
// These scenarios do not depend on the client's encoding: they run with bare only (the other
// encodings skip the file, saying so), to keep `make test` short.
//
// Each test starts its own fixture servers (lib/engine-suite.mjs, RIVETKIT_ENGINE_SPAWN=never)
// and stops them at its end, so that the next test's servers are the only envoys of the pool.
// Which process hosts an actor is read from the `fixture-event sleepy:onWake:<key>` lines the
// fixture prints (the `observer` actor could live in either process). Waits are bounded; calls
// that may fail while the system recovers are retried until a bound (eventually()).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, driverFixturePath, suiteTimeout, uniqueKey, withTimeout, waitFor, disposeClient } from "../lib/server.mjs";
import { useEngine, eventually, waitServerEvent, fixtureEvents } from "../lib/engine-suite.mjs";
import { watchConn, disposeConn } from "../lib/lifecycle.mjs";

const T = { timeout: 240_000 };
/** Bound on an actor coming back after its process or the engine went away. */
const RECOVERY_MS = 120_000;
const ONLY = "bare";
const skip = ENCODING === ONLY ? false : `encoding-independent scenarios: run with RIVETKIT_ENCODING=${ONLY} only`;

describe(`engine mode: failover and engine restart [${ENCODING}]`, { skip, timeout: suiteTimeout(390_000) }, () => {
	const env = useEngine({ server: false });

	/** Runs fn(ctx) with servers and connections that are always cleaned up at the end. */
	function scenario(fn) {
		return env.wrap(async (t) => {
			const servers = [];
			const conns = [];
			const clients = [];
			const ctx = {
				async start(name, opts = {}) {
					const s = await env.startServer({ name, ...opts });
					servers.push(s);
					return s;
				},
				client() {
					const c = env.newClient();
					clients.push(c);
					return c;
				},
				connect(handle) {
					const c = handle.connect();
					conns.push(c);
					return c;
				},
			};
			try {
				return await fn(ctx, t);
			} finally {
				for (const c of conns) await disposeConn(c, 3_000);
				for (const c of clients) await disposeClient(c, 3_000);
				// Graceful, so that the engine does not keep the next test's actors for a dead envoy.
				for (const s of servers) await s.stop().catch(() => {});
			}
		});
	}

	/** Waits (bounded) for `server` to print that it woke `key`: the event comes over its stdout,
	 * not necessarily before the reply that went through the engine. */
	const runsOn = (server, key) => waitServerEvent(server, `sleepy:onWake:${key}`, { timeout: 10_000 });

	it("two processes in one pool: SIGKILL one, its actors come back on the other with their acknowledged state", T, scenario(async (ctx) => {
		const A = await ctx.start("A");
		const client = ctx.client();
		const counted = uniqueKey("fo-count");
		const connected = uniqueKey("fo-conn");
		const scheduled = uniqueKey("fo-alarm");

		// While A is the only envoy, every actor lands on it.
		const h = client.sleepy.getOrCreate([counted]);
		const N = 30;
		for (let i = 1; i <= N; i++) assert.equal(await h.increment(1), i);
		const id = await h.resolve();
		const before = await h.getLifecycle();

		const hc = client.sleepy.getOrCreate([connected]);
		const conn = ctx.connect(hc);
		const counts = [];
		conn.on("newCount", (n) => counts.push(n));
		assert.equal(await withTimeout(conn.increment(3), 15_000, "conn.increment(3)"), 3);

		const hs = client.sleepy.getOrCreate([scheduled]);
		assert.equal(await hs.increment(1), 1);

		for (const k of [counted, connected, scheduled]) await runsOn(A, k);

		const B = await ctx.start("B");
		// Due well after the kill (which follows at once): it can only fire on B.
		await hs.scheduleIncrement(3_000, 100);
		// The last acknowledged write before the kill.
		assert.equal(await h.increment(1), N + 1);
		A.kill();
		await withTimeout(A.exited, 10_000, "A to exit after SIGKILL");

		// The counted actor comes back, on B, with every acknowledged increment.
		const count = await eventually(() => client.sleepy.getOrCreate([counted]).getCount(), {
			accept: (n) => n === N + 1,
			timeout: RECOVERY_MS,
			what: `actor ${counted} back with count ${N + 1} after A's SIGKILL`,
		});
		assert.equal(count, N + 1);
		await runsOn(B, counted);
		assert.equal(await h.resolve(), id, "same actor id");
		const after = await h.getLifecycle();
		assert.ok(after.generation > before.generation, `a new generation on B: ${before.generation} -> ${after.generation}`);
		assert.equal(after.wakes, before.wakes + 1, `woken once more (on B): ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
		assert.equal(await h.increment(1), N + 2, "and it keeps working");

		// The alarm scheduled on A fires on B without any request to that actor.
		await waitServerEvent(B, `sleepy:onWake:${scheduled}`, { timeout: RECOVERY_MS });
		await waitFor(async () => (await hs.getCount()) === 101, { timeout: 20_000, interval: 100, what: `count 101 from the alarm set on A (actor ${scheduled})` });
		assert.deepStrictEqual(await hs.listSchedules(), []);

		// The connection opened to A reaches the actor on B again (the client reconnects).
		const viaConn = await eventually(() => conn.getCount(), {
			accept: (n) => n === 3,
			timeout: RECOVERY_MS,
			what: `the connection to ${connected} working again with count 3`,
		});
		assert.equal(viaConn, 3);
		await runsOn(B, connected);
		assert.equal(await withTimeout(conn.increment(1), 15_000, "conn.increment(1) after the failover"), 4);
		await waitFor(() => counts.includes(4), { timeout: 10_000, what: "newCount 4 on the reconnected connection" });

		// New actors go to the survivor.
		const fresh = uniqueKey("fo-new");
		assert.equal(await client.sleepy.getOrCreate([fresh]).increment(2), 2);
		await runsOn(B, fresh);
	}));

	it("queue messages fail over with the actor: SIGKILL of its process, the other process has every acknowledged message and delivery count", T, scenario(async (ctx) => {
		const A = await ctx.start("A");
		const client = ctx.client();
		const key = uniqueKey("fo-queue");
		const h = client.queueWorker.getOrCreate([key]);
		for (let i = 1; i <= 5; i++) await h.send("late", i);
		// A plain receive: its removal is durable before the reply.
		assert.deepEqual(await h.waitForNames(["late"], 10_000), { queued: 5, body: 1 });
		await h.send("jobs", "job");
		const taken = await h.take("jobs");
		assert.equal(taken.deliveries, 1);
		assert.equal(await h.take("jobs"), null, "hidden for its visibility timeout on A");

		await ctx.start("B");
		A.kill();
		await withTimeout(A.exited, 10_000, "A to exit after SIGKILL");

		// On B: the four messages left and the taken job, which the failover delivers again.
		const size = await eventually(() => client.queueWorker.getOrCreate([key]).size(), {
			accept: (n) => n === 5,
			timeout: RECOVERY_MS,
			what: `actor ${key} back with 5 queued messages after A's SIGKILL`,
		});
		assert.equal(size, 5);
		assert.deepEqual(await h.take("jobs"), { ...taken, deliveries: 2 });
		for (let i = 2; i <= 5; i++) assert.equal((await h.waitForNames(["late"], 10_000)).body, i, "in order, none lost or repeated");
		await h.send("late", 6);
		const next = await h.take("late");
		assert.ok(next.id > taken.id, `ids go on after the failover (${next.id} > ${taken.id})`);
	}));

	it("a workflow fails over: SIGKILL of its process, the other process resumes it without running a recorded step twice", T, scenario(async (ctx) => {
		// The driver fixture's workflowCounterActor: a loop of one step (runCount += 1, appended
		// to history) and a 25 ms durable sleep per iteration.
		const A = await ctx.start("A", { binary: driverFixturePath() });
		const client = ctx.client();
		const key = [uniqueKey("fo-wf")];
		const before = await waitFor(async () => {
			const s = await client.workflowCounterActor.getOrCreate(key).getState();
			return s.runCount >= 3 ? s : null;
		}, { timeout: 30_000, interval: 50, what: "three iterations on A" });
		await ctx.start("B", { binary: driverFixturePath() });
		A.kill();
		await withTimeout(A.exited, 10_000, "A to exit after SIGKILL");
		const after = await eventually(() => client.workflowCounterActor.getOrCreate(key).getState(), {
			accept: (s) => s.runCount >= before.runCount + 3,
			timeout: RECOVERY_MS,
			what: "the workflow resumed on B for three more iterations",
		});
		assert.deepEqual(after.history, Array.from({ length: after.history.length }, (_, i) => i + 1),
			`each recorded step ran exactly once across the failover: ${JSON.stringify(after.history)}`);
		assert.ok(after.history.length >= before.history.length, "no acknowledged iteration lost");
	}));

	it("graceful stop (SIGTERM) of one of two processes: its actors move to the other with their state", T, scenario(async (ctx) => {
		const C = await ctx.start("C");
		const client = ctx.client();
		const keys = [uniqueKey("mv-a"), uniqueKey("mv-b")];
		for (const [i, k] of keys.entries()) {
			assert.equal(await client.sleepy.getOrCreate([k]).increment(10 + i), 10 + i);
			await runsOn(C, k);
		}
		const D = await ctx.start("D");
		const stopped = await C.stop();
		for (const [i, k] of keys.entries()) {
			const n = await eventually(() => client.sleepy.getOrCreate([k]).getCount(), {
				accept: (v) => v === 10 + i,
				timeout: RECOVERY_MS,
				what: `actor ${k} on D with count ${10 + i}`,
			});
			assert.equal(n, 10 + i);
			await runsOn(D, k);
		}
		assert.equal(stopped.forced, false, "C exited on SIGTERM without needing SIGKILL");
		assert.equal(stopped.code, 0, `C's exit after SIGTERM: ${JSON.stringify(stopped)}`);
		for (const k of keys) {
			// (C's last output may still be in the pipe when its exit is seen.)
			await waitServerEvent(C, `sleepy:onSleep:${k}`, { timeout: 5_000 }).catch((err) => {
				err.message = `onSleep did not run on C for ${k} during the graceful stop: ${err.message}`;
				throw err;
			});
			const life = await client.sleepy.getOrCreate([k]).getLifecycle();
			assert.equal(life.sleeps, 1, `C's onSleep state change was saved: ${JSON.stringify(life)}`);
		}
	}));

	it("a hibernating connection moves with its actor to another process: no reconnect, messages and events continue", T, scenario(async (ctx) => {
		const E = await ctx.start("E");
		const client = ctx.client();
		const key = uniqueKey("mv-conn");
		const handle = client.sleepy.getOrCreate([key]);
		const conn = ctx.connect(handle);
		const rec = watchConn(conn);
		const counts = [];
		conn.on("newCount", (n) => counts.push(n));
		assert.equal(await withTimeout(conn.increment(5), 20_000, "conn.increment(5)"), 5);
		await runsOn(E, key);
		// The actor goes to sleep on E (idle timeout) with the connection open: the gateway holds the
		// socket as hibernating. (Stopping E while the actor is awake races the engine's immediate
		// restart on F with the gateway's hibernation bookkeeping; not what this case checks.)
		await waitServerEvent(E, `sleepy:onSleep:${key}`, { timeout: 20_000 });
		const F = await ctx.start("F");
		const opensBefore = rec.opens;
		// E goes away gracefully; the next message wakes the actor on F, which resumes the socket
		// from the connection's record.
		const stopped = await E.stop();
		assert.equal(stopped.code, 0, `E's exit after SIGTERM: ${JSON.stringify(stopped)}`);
		assert.equal(await withTimeout(conn.increment(1), 60_000, "conn.increment(1) after the move"), 6);
		assert.equal(await withTimeout(conn.increment(1), 20_000, "conn.increment(1) again"), 7);
		await runsOn(F, key);
		await waitFor(() => counts.includes(7), { timeout: 10_000, what: "newCount 7 on the moved connection" });
		assert.deepStrictEqual(counts, [5, 6, 7], `events in order, once each (statuses: ${rec.statuses})`);
		assert.equal(rec.opens, opensBefore, `the client did not reconnect (statuses: ${rec.statuses})`);
		// Only the connection talked to the actor on F: a reconnect would have run onConnect there.
		assert.ok(
			!fixtureEvents(F).includes(`sleepy:onConnect:${key}`),
			`the connection was resumed on F, not opened again: ${fixtureEvents(F).join(", ")}`,
		);
	}));

	/** Actors and a connection on runtime S, the engine restarted, then everything checked. */
	async function engineRestart(ctx, { hard }) {
		const S = await ctx.start(hard ? "S-hard" : "S");
		const client = ctx.client();
		const counter = client.counter.getOrCreate([uniqueKey("er-count")]);
		for (let i = 1; i <= 5; i++) assert.equal(await counter.increment(1), i);
		const sleeperKey = uniqueKey("er-sleep");
		const sleeper = client.sleepy.getOrCreate([sleeperKey]);
		assert.equal(await sleeper.increment(7), 7);
		assert.equal(await sleeper.goToSleep(), true);
		await waitServerEvent(S, `sleepy:onSleep:${sleeperKey}`);
		// (SIGTERM: lib/engine.mjs sends SIGKILL if the engine has not exited within 5 s.)
		await env.engine.restart({ hard });
		assert.ok(S.running, "the runtime kept running while the engine was down");

		// The awake actor (stopped while the engine was away) answers again with its state.
		assert.equal(
			await eventually(() => counter.getCount(), { accept: (n) => n === 5, timeout: RECOVERY_MS, what: "counter back with count 5" }),
			5,
		);
		assert.equal(await counter.increment(1), 6);
		// The actor that slept before the restart wakes with its state. (After a SIGKILL the
		// restarted engine takes its own workflows over only once the dead worker's leases expire,
		// about 30 s: "handled failover" in its log.)
		assert.equal(await eventually(() => sleeper.getCount(), { accept: (n) => n === 7, timeout: RECOVERY_MS, what: "sleeper back with count 7" }), 7);
		// New actors can be created (on S, the only envoy).
		const freshKey = uniqueKey("er-new");
		assert.equal(await client.sleepy.getOrCreate([freshKey]).increment(3), 3);
		await runsOn(S, freshKey);
		// Connections work again (a WebSocket tunneled through the restarted gateway to S). A
		// connection opened before the restart is not checked: the official client's reconnect
		// attempt made while the gateway is down never settles (see lifecycle-destroy), which is
		// the client's behaviour, not the runtime's.
		const conn = ctx.connect(counter);
		const rec = watchConn(conn);
		const counts = [];
		conn.on("newCount", (n) => counts.push(n));
		assert.equal(await withTimeout(conn.increment(1), 20_000, "conn.increment(1) after the restart"), 7);
		assert.deepStrictEqual(counts, [7], `newCount 7 before the reply (statuses: ${rec.statuses})`);
		assert.equal(await withTimeout(conn.getCount(), 10_000, "conn.getCount()"), 7);
		assert.ok(S.running, "the runtime is still running");
		assert.equal(S.exitInfo, undefined);
	}

	it("the engine restarted gracefully (SIGTERM) under a running runtime: it reconnects and actors keep working", T, scenario(async (ctx) => {
		await engineRestart(ctx, { hard: false });
	}));

	it("the engine SIGKILLed and restarted under a running runtime: it reconnects and actors keep working", T, scenario(async (ctx) => {
		await engineRestart(ctx, { hard: true });
	}));
});
