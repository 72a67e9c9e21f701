// Regressions found by Rivet's own driver suite (make conformance), checked here with the
// official client against the suite's actors as rivetkit-cpp serves them
// (rivetkit_driver_fixture, tests/conformance), in both modes and every encoding: void
// actions, run handlers that throw, on_sleep before connections close, no restart after a
// requested sleep, connections that die while their actor sleeps, no input, state writes in
// on_state_change, stateless state, raw message indexes and the ack probe, wait_until errors in
// the log, hook timeouts, and the API the fixture needed (on_request returning nothing,
// Request::url, input schemas, the driver context, keep_awake results, async close handlers).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
	ActorError,
	ENCODING,
	MODE,
	driverFixturePath,
	suiteTimeout,
	uniqueKey,
	useServer,
	waitFor,
	withTimeout,
	sleep,
} from "../lib/server.mjs";
import { disposeConn, trackWs } from "../lib/lifecycle.mjs";

const T = { timeout: 90_000 };

function assertActorError(err, group, code) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
	assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
	return true;
}

const json = (data) => JSON.parse(typeof data === "string" ? data : Buffer.from(data).toString("utf8"));

/** Next JSON message of a tracked raw socket that satisfies `pred`. */
async function nextMatching(ws, pred, ms = 15_000) {
	const deadline = Date.now() + ms;
	for (;;) {
		const msg = json(await ws.next(Math.max(1, deadline - Date.now())));
		if (pred(msg)) return msg;
	}
}

describe(`driver-suite regressions [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	// debug: the tests wait for "actor stopped actor_id=..." instead of sleeping for a while.
	const env = useServer(undefined, { binary: driverFixturePath(), serverEnv: { RIVET_LOG_LEVEL: "debug" } });
	const conns = [];
	const track = (c) => (conns.push(c), c);
	const openWs = async (handle, path) => trackWs(await withTimeout(handle.webSocket(path), 20_000, "handle.webSocket()"));
	const stopsOf = (id) => env.server.log.split(`actor stopped actor_id=${id}`).length - 1;
	const waitStopped = (id, count, what) =>
		waitFor(() => stopsOf(id) >= count, { timeout: 30_000, interval: 50, what });

	it("an action that returns nothing resolves, over HTTP and over a connection", T, env.wrap(async () => {
		const h = env.client.syncActionActor.getOrCreate([uniqueKey("void")]);
		assert.equal(await h.increment(5), 5);
		const out = await h.reset();
		assert.ok(out === undefined || out === null, `reset() gave ${JSON.stringify(out)}`);
		assert.equal(await h.increment(0), 0);
		const conn = track(h.connect());
		try {
			await conn.increment(2);
			const viaConn = await withTimeout(conn.reset(), 15_000, "conn.reset()");
			assert.ok(viaConn === undefined || viaConn === null);
			assert.equal(await conn.increment(0), 0);
		} finally {
			await disposeConn(conn);
		}
	}));

	it("a run handler that throws lets the actor sleep (and wake) instead of keeping it awake", T, env.wrap(async () => {
		const h = env.client.runWithError.getOrCreate([uniqueKey("run-error")]);
		const id = await h.resolve();
		assert.equal((await h.getState()).runStarted, true);
		await waitStopped(id, 1, "the actor to sleep after its run handler threw");
		const state = await h.getState();
		assert.equal(state.destroyCalled, false);
		assert.ok(state.sleepCount >= 1 && state.wakeCount >= 2, JSON.stringify(state));
	}));

	it("on_sleep still reaches an open raw WebSocket, and the sleep is not followed by a restart", T, env.wrap(async () => {
		const h = env.client.sleepRawWsSendOnSleep.getOrCreate([uniqueKey("send-on-sleep")]);
		const id = await h.resolve();
		const ws = await openWs(h);
		try {
			await nextMatching(ws, (m) => m.type === "connected");
			await h.triggerSleep();
			const msg = await nextMatching(ws, (m) => m.type === "sleeping");
			assert.equal(msg.sleepCount, 1);
			await waitStopped(id, 1, "the actor to sleep");
			await waitFor(() => ws.closeEvent !== undefined, { timeout: 15_000, what: "the raw socket to close" });
			// A restart nobody asked for would show up as a second stop within the sleep timeout
			// (1 s) after the socket closed (it came ~75 ms after each requested sleep).
			await sleep(1_500);
			assert.equal(stopsOf(id), 1, "the actor must stay asleep until something wakes it");
			assert.deepEqual(await h.getCounts(), { startCount: 2, sleepCount: 1 });
		} finally {
			ws.close();
		}
	}));

	it("a connection closed while its actor sleeps is gone after the wake, with one on_disconnect", T, env.wrap(async () => {
		const key = [uniqueKey("stale-conn")];
		const h = env.client.fileSystemHibernationCleanupActor.getOrCreate(key);
		const id = await h.resolve();
		const conn = track(h.connect());
		assert.equal(await conn.ping(), "pong");
		await conn.triggerSleep();
		await waitStopped(id, 1, "the actor to sleep with its connection hibernating");
		await disposeConn(conn);
		const other = track(env.client.fileSystemHibernationCleanupActor.getOrCreate(key).connect());
		try {
			await waitFor(async () => JSON.stringify(await other.getDisconnectWakeCounts()) === "[2]", {
				timeout: 20_000,
				interval: 100,
				what: "on_disconnect of the stale connection at the second wake, exactly once",
			});
			const h2 = env.client.hibernationActor.getOrCreate([uniqueKey("closed-asleep")]);
			const id2 = await h2.resolve();
			const c1 = track(h2.connect());
			await c1.ping();
			const [c1Id] = await c1.getConnectionIds();
			await c1.triggerSleep();
			await waitStopped(id2, 1, "hibernationActor to sleep");
			await disposeConn(c1);
			const c2 = track(h2.connect());
			await waitFor(async () => {
				const ids = await c2.getConnectionIds();
				return ids.length === 1 && ids[0] !== c1Id;
			}, { timeout: 20_000, interval: 100, what: "the closed connection to be gone after the wake" });
			assert.deepEqual(await c2.getConnLifecycleCounts(), { connectCount: 1, disconnectCount: 0 });
		} finally {
			for (const c of conns.splice(0)) await disposeConn(c);
		}
	}));

	it("a create without input gives the actor no input (undefined, not null)", T, env.wrap(async () => {
		const none = await env.client.inputActor.create([uniqueKey("no-input")]);
		const inputs = await none.getInputs();
		assert.equal(inputs.initialInput, undefined, JSON.stringify(inputs));
		assert.equal(inputs.onCreateInput, undefined, JSON.stringify(inputs));
		const some = await env.client.inputActor.create([uniqueKey("input")], { input: { a: 1 } });
		assert.deepEqual(await some.getInputs(), { initialInput: { a: 1 }, onCreateInput: { a: 1 } });
	}));

	it("a state write inside on_state_change is refused with actor.state_mutation_reentrant", T, env.wrap(async () => {
		const h = env.client.stateChangeReentrantMutationActor.getOrCreate([uniqueKey("reentrant")]);
		assert.equal(await h.setValue(5), 5);
		const r = await h.getResult();
		assert.equal(r.value, 5);
		assert.equal(r.derivedValue, 0, "the refused write left no trace");
		assert.equal(r.callCount, 1, "one on_state_change for the one mutating action");
		assert.equal(`${r.errorGroup}.${r.errorCode}`, "actor.state_mutation_reentrant");
	}));

	it("the state of an actor without state is an error that names it", T, env.wrap(async () => {
		const r = await env.client.statelessActor.getOrCreate([uniqueKey("stateless")]).tryGetState();
		assert.equal(r.success, false);
		assert.match(r.error, /state/i);
	}));

	it("raw messages carry their hibernatable index; the test-mode ack probe answers", T, env.wrap(async () => {
		const h = env.client.rawWebSocketActor.getOrCreate([uniqueKey("indexes")]);
		const ws = await openWs(h);
		try {
			await nextMatching(ws, (m) => m.type === "welcome");
			ws.ws.send(JSON.stringify({ type: "indexedEcho", payload: "a" }));
			ws.ws.send(JSON.stringify({ type: "indexedEcho", payload: "b" }));
			const a = await nextMatching(ws, (m) => m.type === "indexedEcho");
			const b = await nextMatching(ws, (m) => m.type === "indexedEcho");
			assert.deepEqual([a.payload, a.rivetMessageIndex, b.payload, b.rivetMessageIndex], ["a", 1, "b", 2]);
			// Acknowledged once the index is saved with the connection (engine mode: to the gateway).
			await waitFor(async () => {
				ws.ws.send(JSON.stringify({ __rivetkitTestHibernatableAckStateV1: true }));
				const s = await nextMatching(ws, (m) => m.__rivetkitTestHibernatableAckStateV1 === true);
				return s.lastSentIndex === 2 && s.lastAckedIndex === 2 && s.pendingIndexes.length === 0;
			}, { timeout: 20_000, interval: 100, what: "messages 1 and 2 acknowledged" });
			// Probes are answered by the runtime, not delivered: the actor saw two messages.
			ws.ws.send(JSON.stringify({ type: "getIndexedMessageOrder" }));
			assert.deepEqual((await nextMatching(ws, (m) => m.type === "indexedMessageOrder")).order, [1, 2]);
		} finally {
			ws.close();
		}
	}));

	it("a rejected wait_until does not fail its action and is logged with its message", T, env.wrap(async () => {
		const h = env.client.counterWaitUntilProbe.getOrCreate([uniqueKey("wait-until")]);
		assert.equal(await h.triggerWaitUntilRejectVoid(), 1);
		await waitFor(() => env.server.log.includes("reject-with-error-ok"), {
			timeout: 15_000,
			what: "the wait_until error in the runtime's log",
		});
		assert.match(env.server.log, /actor wait_until promise rejected/);
		assert.equal(await h.triggerKeepAwakeWithValue(), 2, "keep_awake's result is awaited");
		assert.equal(await h.getCount(), 2);
	}));

	it("hook timeouts apply: on_before_connect over its limit fails with actor.callback_timed_out", T, env.wrap(async () => {
		const h = env.client.beforeConnectTimeoutActor.getOrCreate([uniqueKey("hook-timeout")]);
		await assert.rejects(h.ping(), (err) => assertActorError(err, "actor", "callback_timed_out"));
	}));

	it("an on_request that returns nothing is answered 500 with RivetKit's message", T, env.wrap(async () => {
		const res = await env.client.rawHttpVoidReturnActor.getOrCreate([uniqueKey("void-request")]).fetch("api/anything");
		assert.equal(res.status, 500);
		assert.match(await res.text(), /onRequest handler must return a Response/);
	}));

	it("on_request sees the full URL; input schemas answer actor.validation_error; create_vars gets the driver context", T, env.wrap(async () => {
		const res = await env.client.rawHttpRequestPropertiesActor.getOrCreate([uniqueKey("url")]).fetch("test/path?foo=bar&baz=qux");
		const body = await res.json();
		assert.match(body.url, /^http:\/\/actor\/test\/path\?foo=bar&baz=qux$/);
		const nested = env.client.nestedActionActor.getOrCreate([uniqueKey("schema")]);
		assert.equal(await nested.action({ name: "calculator.add", args: [3] }), 3);
		await assert.rejects(nested.action({ name: "calculator.add", args: ["invalid"] }), (err) =>
			assertActorError(err, "actor", "validation_error"),
		);
		assert.deepEqual(await env.client.driverCtxActor.getOrCreate([uniqueKey("ctx")]).getVars(), { hasDriverCtx: true });
	}));

	it("an async raw WebSocket close handler runs to its end, and the actor sleeps after it", T, env.wrap(async () => {
		const h = env.client.sleepRawWsOnClose.getOrCreate([uniqueKey("async-close")]);
		const id = await h.resolve();
		const ws = await openWs(h);
		await nextMatching(ws, (m) => m.type === "connected");
		ws.close();
		await waitStopped(id, 1, "the actor to sleep once the close handler finished");
		const status = await h.getStatus();
		assert.equal(status.closeStarted, 1);
		assert.equal(status.closeFinished, 1, "the handler's work after its await completed before the sleep");
		assert.equal(status.sleepCount, 1);
	}));
});
