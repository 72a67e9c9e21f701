// Durable workflows (ActorBuilder::workflow, include/rivetkit/workflow.hpp) through the official
// client, in both modes: steps replayed across actor restarts without running twice (SIGKILL
// mid-loop included), a finished step's context refused, a durable sleep that lets the actor
// sleep and is woken by its alarm, retries with RivetKit's onError events, an exhausted step
// failing the workflow (which then never runs again and lets the actor sleep), a completed
// workflow not rerun after wake, the database and client usable only inside steps, and a step
// that destroys its actor, rollbacks (undo handlers latest first, an undo that fails resumed at
// the next start). The actors: tests/conformance/actors/workflow.cpp.
//
// Workflows do not depend on the client's encoding: the cbor and bare runs check one case, json
// runs them all.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CURRENT_VERSION, TO_CLIENT_VERSIONED, TO_SERVER_VERSIONED, decodeWorkflowHistoryTransport } from "rivetkit/inspector/client";
import {
	ActorError,
	ENCODING,
	MODE,
	driverFixturePath,
	sleep,
	suiteTimeout,
	uniqueKey,
	useServer,
	waitFor,
	withServers,
	withTimeout,
} from "../lib/server.mjs";

const T = { timeout: 120_000 };
const FULL = ENCODING === "json";
const full = FULL ? it : it.skip;

/** history must be 1, 2, ..., n: each recorded step ran exactly once. */
function assertCountsOnce(history, what) {
	assert.deepEqual(history, Array.from({ length: history.length }, (_, i) => i + 1), `${what}: ${JSON.stringify(history)}`);
}

describe(`actor workflows [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath() });

	it("steps run once each and replay; a finished step's context is refused", T, env.wrap(async () => {
		const h = env.client.workflowCounterActor.getOrCreate([uniqueKey("wf-counter")]);
		const state = await waitFor(async () => {
			const s = await h.getState();
			return s.runCount >= 3 && s.guardTriggered ? s : null;
		}, { timeout: 30_000, interval: 50, what: "three loop iterations" });
		assertCountsOnce(state.history, "history");
	}));

	full("a durable sleep lets the actor sleep and its alarm wakes it on time", T, env.wrap(async () => {
		const h = env.client.workflowTimerActor.getOrCreate([uniqueKey("wf-timer")], { createWithInput: 1500 });
		const first = await waitFor(async () => {
			const s = await h.getState();
			return s.beforeAt != null ? s : null;
		}, { timeout: 30_000, what: "the first step" });
		assert.equal(first.afterAt, null);
		// Nothing touches the actor now: only its alarm can bring it back for the second step.
		const quietUntil = first.beforeAt + 6_000;
		await sleep(Math.max(0, quietUntil - Date.now()));
		const askedAt = Date.now();
		const done = await h.getState();
		assert.ok(done.afterAt != null, "the step after the sleep ran before anyone asked");
		assert.ok(done.afterAt < askedAt, "the alarm woke the actor, not the request");
		assert.ok(done.afterAt >= first.beforeAt + 1_500, "not before the deadline");
		assert.ok(done.sleeps >= 1, `the actor slept during the workflow's sleep (sleeps=${done.sleeps})`);
		assert.ok(done.wakes >= 2, `woken again (wakes=${done.wakes})`);
	}));

	full("a failed step is retried and reported to onError; later wakes report nothing more", T, env.wrap(async () => {
		const h = env.client.workflowErrorHookSleepActor.getOrCreate([uniqueKey("wf-hook")]);
		const state = await waitFor(async () => {
			const s = await h.getErrorState();
			return s.attempts >= 2 && s.events.length > 0 ? s : null;
		}, { timeout: 30_000, what: "the retried step" });
		assert.equal(state.attempts, 2);
		assert.equal(state.events.length, 1);
		const step = state.events[0].step;
		assert.equal(step.stepName, "flaky");
		assert.equal(step.attempt, 1);
		assert.equal(step.willRetry, true);
		assert.equal(step.retryDelay, 1);
		assert.deepEqual(step.error, { name: "Error", message: "workflow hook failed" });
		await h.triggerSleep();
		const resumed = await waitFor(async () => {
			try {
				const s = await h.getErrorState();
				return s.wakeCount >= 2 && s.sleepCount >= 1 ? s : null;
			} catch (err) {
				if (err instanceof ActorError) return null; // stopping
				throw err;
			}
		}, { timeout: 30_000, interval: 100, what: "a sleep and a wake" });
		assert.equal(resumed.attempts, 2, "the completed step did not run again");
		assert.equal(resumed.events.length, 1);
	}));

	full("an exhausted step fails the workflow for good and the actor sleeps", T, env.wrap(async () => {
		const h = env.client.workflowFailedStepActor.getOrCreate([uniqueKey("wf-failed")]);
		// The retries' backoff is durable: the actor may sleep between attempts.
		const failed = await waitFor(async () => {
			const s = await h.getState();
			return s.runCount >= 3 && s.sleepCount >= 1 ? s : null;
		}, { timeout: 30_000, interval: 100, what: "three attempts and a sleep" });
		assert.deepEqual(failed.timeline, ["prepare", "fail", "fail", "fail"], "one attempt and two retries");
		const later = await waitFor(async () => {
			const s = await h.getState();
			return s.startCount > failed.startCount + 1 ? s : null;
		}, { timeout: 30_000, interval: 150, what: "two more wakes" });
		assert.equal(later.runCount, 3, "a failed workflow does not run again");
	}));

	full("a completed workflow is not rerun after a wake", T, env.wrap(async () => {
		const h = env.client.workflowCompleteActor.getOrCreate([uniqueKey("wf-complete")]);
		const state = await waitFor(async () => {
			const s = await h.getState();
			return s.sleepCount >= 1 && s.startCount >= 2 ? s : null;
		}, { timeout: 30_000, interval: 100, what: "the actor to sleep and wake" });
		assert.equal(state.runCount, 1);
	}));

	full("the database and the client are usable inside steps only", T, env.wrap(async () => {
		const h = env.client.workflowAccessActor.getOrCreate([uniqueKey("wf-access")]);
		const state = await waitFor(async () => {
			const s = await h.getState();
			return s.insideDbCount > 0 && s.outsideDbError ? s : null;
		}, { timeout: 30_000, what: "the access steps" });
		assert.equal(state.outsideDbError, "db is only available inside workflow steps");
		assert.equal(state.outsideClientError, "client is only available inside workflow steps");
		assert.equal(state.insideClientAvailable, true);
	}));

	full("a step can destroy its actor", T, env.wrap(async () => {
		const key = uniqueKey("wf-destroy");
		const observer = env.client.destroyObserver.getOrCreate(["observer"]);
		const h = env.client.workflowDestroyActor.getOrCreate([key]);
		await h.resolve();
		await waitFor(() => observer.wasDestroyed(key), { timeout: 30_000, what: "onDestroy" });
		await waitFor(async () => {
			try {
				await env.client.workflowDestroyActor.get([key]).resolve();
				return false;
			} catch (err) {
				return err instanceof ActorError && err.code === "not_found";
			}
		}, { timeout: 30_000, interval: 100, what: "not_found" });
	}));
});

describe(`actor workflows: queues, joins, races, try [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath() });

	it("a queue wait takes each message once and completes a waiting send", T, env.wrap(async () => {
		const h = env.client.workflowQueueActor.getOrCreate([uniqueKey("wf-queue")]);
		assert.deepEqual(await h.sendAndWait({ value: 123 }), { status: "completed", response: { echo: { value: 123 } } });
		const direct = await h.send("workflow-default", { hello: "world" }, { wait: true, timeout: 10_000 });
		assert.deepEqual(direct, { status: "completed", response: { echo: { hello: "world" } } });
		assert.deepEqual(await h.getMessages(), [{ value: 123 }, { hello: "world" }]);
	}));

	it("a workflow serving an exactly-once queue answers each message without waiting for the hold", T, env.wrap(async () => {
		const h = env.client.workflowExactlyOnceQueueActor.getOrCreate([uniqueKey("wf-exactly-once")]);
		// The queue's hold would last its 60 s visibility timeout; the wait's record releases it.
		for (const amount of [5, 7]) {
			assert.deepEqual(await h.send("ledger", { amount }, { wait: true, timeout: 20_000 }),
				{ status: "completed", response: { booked: { amount } } });
		}
		assert.deepEqual(await h.getMessages(), [{ amount: 5 }, { amount: 7 }]);
	}));

	for (const [actor, first, second, expected] of [
		["workflowNestedLoopActor", ["a", "b"], ["c"], ["a", "b", "c"]],
		["workflowNestedJoinActor", ["a", "b"], ["c"], ["a", "b", "c"]],
		["workflowNestedRaceActor", ["a"], ["b"], ["a", "b"]],
	]) {
		full(`${actor}: nested blocks process each item once across queue iterations`, T, env.wrap(async () => {
			const h = env.client[actor].getOrCreate([uniqueKey("wf-nested")]);
			assert.deepEqual(await h.send("workflow-nested", { items: first }, { wait: true, timeout: 10_000 }),
				{ status: "completed", response: { processed: first.length } });
			assert.deepEqual(await h.send("workflow-nested", { items: second }, { wait: true, timeout: 10_000 }),
				{ status: "completed", response: { processed: second.length } });
			const state = await waitFor(async () => {
				const s = await h.getState();
				return s.processed.length >= expected.length ? s : null;
			}, { timeout: 30_000, what: "the processed items" });
			assert.deepEqual(state.processed, expected);
		}));
	}

	full("try_step and try_block return failures; failed steps roll forward", T, env.wrap(async () => {
		const t = env.client.workflowTryActor.getOrCreate([uniqueKey("wf-try")]);
		const state = await waitFor(async () => {
			const s = await t.getState();
			return s.tryStepFailure && s.tryJoinFailure ? s : null;
		}, { timeout: 30_000, what: "the try results" });
		assert.equal(state.innerWrites, 1, "the failed step's state change rolled forward, once");
		// Vars live as long as one generation: the actor sleeps 50 ms after its workflow ended, so
		// a read that came after that sleep sees fresh vars (both 0), one before it both at 1.
		const { innerWrites, recoveryWrites } = state.vars;
		assert.ok((innerWrites === 1 && recoveryWrites === 1) || (innerWrites === 0 && recoveryWrites === 0),
			`vars of one generation: ${JSON.stringify(state.vars)}`);
		assert.deepEqual(state.tryStepFailure, { kind: "exhausted", message: "card declined", attempts: 1 });
		assert.equal(state.tryJoinFailure, "join:parallel");
		const r = env.client.workflowStepRollForwardActor.getOrCreate([uniqueKey("wf-roll")]);
		const snap = await waitFor(async () => {
			const s = await r.getSnapshot();
			return s.state.failureCaught ? s : null;
		}, { timeout: 30_000, what: "the recovery" });
		assert.deepEqual(snap.state, { failedStateWrites: 1, recoveryStateWrites: 1, failureCaught: true });
		// As above: this actor also sleeps 50 ms after its workflow ended, so the read may come
		// from the next generation (fresh vars, both 0); within one generation both are 1.
		const { failedVarsWrites, recoveryVarsWrites } = snap.vars;
		assert.ok((failedVarsWrites === 1 && recoveryVarsWrites === 1) || (failedVarsWrites === 0 && recoveryVarsWrites === 0),
			`vars of one generation: ${JSON.stringify(snap.vars)}`);
	}));

	full("a workflow waiting on its queue lets the actor sleep and stop promptly", T, env.wrap(async () => {
		const h = env.client.workflowStopTeardownActor.getOrCreate([uniqueKey("wf-teardown")]);
		await h.getTimeline();
		const timeline = await waitFor(async () => {
			await sleep(400);
			const t = await h.getTimeline();
			return t.sleepAts.length >= 1 && t.wakeAts.length >= 2 ? t : null;
		}, { timeout: 30_000, interval: 0, what: "a sleep and a wake" });
		assert.ok(timeline.sleepAts[0] - timeline.wakeAts[0] < 1_800, `slept after ${timeline.sleepAts[0] - timeline.wakeAts[0]} ms`);
	}));

	full("onError can broadcast and enqueue; a step spawns a child workflow", T, env.wrap(async () => {
		const h = env.client.workflowErrorHookEffectsActor.getOrCreate([uniqueKey("wf-effects")]);
		const conn = h.connect();
		try {
			const event = new Promise((resolve) => conn.once("workflowError", resolve));
			await conn.startWorkflow(); // after the subscription, on the same socket
			const seen = await withTimeout(event, 30_000, "the workflowError event");
			assert.equal(seen.step.stepName, "flaky");
			assert.equal(seen.step.willRetry, true);
			const queued = await h.receiveQueuedError();
			assert.equal(queued.step.stepName, "flaky");
			const state = await waitFor(async () => {
				const s = await h.getErrorState();
				return s.attempts >= 2 ? s : null;
			}, { timeout: 30_000, what: "the retry" });
			assert.equal(state.errorCount, 1);
		} finally {
			await conn.dispose();
		}
		const key = uniqueKey("wf-child");
		const parent = env.client.workflowSpawnParentActor.getOrCreate([uniqueKey("wf-parent")]);
		assert.deepEqual(await parent.triggerSpawn(key), { queued: true });
		const p = await waitFor(async () => {
			const s = await parent.getState();
			return s.results.length > 0 ? s : null;
		}, { timeout: 30_000, what: "the child's answer" });
		assert.deepEqual(p.results, [{ key, result: { status: "completed", response: { ok: true } }, error: null }]);
		assert.deepEqual(await env.client.workflowSpawnChildActor.getOrCreate([key]).getState(),
			{ label: key, started: true, processed: ["hello"] });
	}));
});

describe(`actor workflows in the inspector [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath() });

	// The driver fixture runs in RivetKit's test mode: every actor accepts the token "token".
	async function inspector(handle) {
		const gatewayUrl = await handle.getGatewayUrl();
		const token = "token";
		return async (method, path, body) => {
			const url = new URL(gatewayUrl);
			url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector${path}`;
			const res = await fetch(url, {
				method,
				headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
				body: body ? JSON.stringify(body) : undefined,
			});
			return { status: res.status, body: await res.json() };
		};
	}

	full("history of a running workflow; replay refused while in flight (409)", T, env.wrap(async () => {
		const h = env.client.workflowRunningStepActor.getOrCreate([uniqueKey("wf-insp-running")]);
		await h.getState();
		const call = await inspector(h);
		const history = await waitFor(async () => {
			const r = await call("GET", "/workflow-history");
			return r.body.history?.entries.length >= 2 ? r.body : null;
		}, { timeout: 30_000, what: "the history of prepare and block" });
		assert.equal(history.isWorkflowEnabled, true);
		assert.equal(history.workflowState, "running");
		assert.deepEqual(history.history.nameRegistry, ["prepare", "block"]);
		const block = history.history.entries.find((e) => e.kind.type === "step" && e.location[0] === 1);
		assert.equal(history.history.entryMetadata[block.id].status, "running");
		const summary = await call("GET", "/summary");
		assert.equal(summary.body.isWorkflowEnabled, true);
		assert.equal(summary.body.workflowState, "running");
		assert.ok(summary.body.workflowHistory.entries.length >= 2);
		const refused = await call("POST", "/workflow/replay", {});
		assert.equal(refused.status, 409);
		assert.deepEqual(refused.body, {
			group: "actor",
			code: "workflow_in_flight",
			message: "Workflow replay is unavailable while the workflow is currently in flight.",
			metadata: null,
		});
		await h.release();
		await waitFor(async () => (await h.getState()).finishedAt != null, { timeout: 30_000, what: "the finish step" });
	}));

	full("replay from the start or from a step runs the workflow again from there", T, env.wrap(async () => {
		const h = env.client.workflowReplayActor.getOrCreate([uniqueKey("wf-insp-replay")]);
		await waitFor(async () => (await h.getTimeline()).length === 2, { timeout: 30_000, what: "the first run" });
		const call = await inspector(h);
		const done = await waitFor(async () => {
			const r = await call("GET", "/workflow-history");
			return r.body.workflowState === "completed" ? r.body : null;
		}, { timeout: 30_000, what: "the completed workflow" });
		const two = done.history.entries.find((e) => e.location[0] === 1);
		const fromTwo = await call("POST", "/workflow/replay", { entryId: two.id });
		assert.equal(fromTwo.status, 200, JSON.stringify(fromTwo.body));
		assert.equal(fromTwo.body.isWorkflowEnabled, true);
		assert.equal(fromTwo.body.history.entries.length, 1, "only step one is left");
		await waitFor(async () => (await h.getTimeline()).length === 3, { timeout: 30_000, what: "step two again" });
		await waitFor(async () => (await call("GET", "/workflow-history")).body.workflowState === "completed",
			{ timeout: 30_000, what: "completed again" });
		const all = await call("POST", "/workflow/replay", {});
		assert.equal(all.status, 200);
		await waitFor(async () => (await h.getTimeline()).length === 5, { timeout: 30_000, what: "both steps again" });
		assert.deepEqual(await h.getTimeline(), ["one", "two", "two", "one", "two"]);
		const missing = await call("POST", "/workflow/replay", { entryId: "no-such-entry" });
		assert.equal(missing.body.code, "entry_not_found");
	}));
	full("the inspector WebSocket carries the history in RivetKit's transport encoding, live", T, env.wrap(async () => {
		const h = env.client.workflowReplayActor.getOrCreate([uniqueKey("wf-insp-ws")]);
		await waitFor(async () => (await h.getTimeline()).length === 2, { timeout: 30_000, what: "the first run" });
		const url = new URL(await h.getGatewayUrl());
		url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector/connect`;
		url.searchParams.set("protocol_version", String(CURRENT_VERSION));
		url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
		const ws = new WebSocket(url.toString(), ["rivet", "rivet_inspector_token.token"]);
		ws.binaryType = "arraybuffer";
		const received = [];
		ws.addEventListener("message", (e) => received.push(TO_CLIENT_VERSIONED.deserialize(new Uint8Array(e.data), CURRENT_VERSION).body));
		const next = async (tag) => {
			let found;
			await waitFor(() => (found = received.find((m) => m.tag === tag)) !== undefined, { timeout: 15_000, what: tag });
			received.splice(received.indexOf(found), 1);
			return found.val;
		};
		try {
			const init = await next("Init");
			assert.equal(init.isWorkflowEnabled, true);
			const history = decodeWorkflowHistoryTransport(init.workflowHistory);
			assert.deepEqual([...history.nameRegistry], ["one", "two"]);
			assert.equal(history.entries.length, 2);
			assert.deepEqual(history.entries.map((e) => e.kind.tag), ["WorkflowStepEntry", "WorkflowStepEntry"]);
			assert.deepEqual(history.entries[1].location, [{ tag: "WorkflowNameIndex", val: 1 }]);
			for (const e of history.entries) assert.equal(history.entryMetadata.get(e.id).status, "COMPLETED");
			ws.send(TO_SERVER_VERSIONED.serialize({ body: { tag: "WorkflowHistoryRequest", val: { id: 7n } } }, CURRENT_VERSION));
			const answer = await next("WorkflowHistoryResponse");
			assert.equal(answer.rid, 7n);
			assert.equal(answer.isWorkflowEnabled, true);
			assert.equal(decodeWorkflowHistoryTransport(answer.history).entries.length, 2);
			ws.send(TO_SERVER_VERSIONED.serialize({ body: { tag: "WorkflowReplayRequest", val: { id: 8n, entryId: null } } }, CURRENT_VERSION));
			const replayed = await next("WorkflowReplayResponse");
			assert.equal(replayed.rid, 8n);
			await waitFor(async () => (await h.getTimeline()).length === 4, { timeout: 30_000, what: "the replayed run" });
			// The replayed run's new entries are pushed as they are recorded.
			await waitFor(() => received.some((m) => m.tag === "WorkflowHistoryUpdated" && decodeWorkflowHistoryTransport(m.val.history).entries.length === 2
				&& [...decodeWorkflowHistoryTransport(m.val.history).entryMetadata.values()].every((md) => md.status === "COMPLETED")),
				{ timeout: 15_000, what: "a pushed history of the replayed run" });
		} finally {
			ws.close();
		}
	}));
});

describe(`actor workflows across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	full("a SIGKILL mid-loop resumes it without running a recorded step twice", T, withServers(async (ctx) => {
		const server = await ctx.start({ binary: driverFixturePath() });
		let client = ctx.client(server);
		const key = [uniqueKey("wf-kill")];
		const before = await waitFor(async () => {
			const s = await client.workflowCounterActor.getOrCreate(key).getState();
			return s.runCount >= 3 ? s : null;
		}, { timeout: 30_000, interval: 20, what: "three iterations" });
		await server.restart({ hard: true });
		client = ctx.client(server);
		const h = client.workflowCounterActor.getOrCreate(key);
		const after = await withTimeout(waitFor(async () => {
			const s = await h.getState();
			return s.runCount >= before.runCount + 3 ? s : null;
		}, { timeout: 60_000, interval: 50, what: "three more iterations" }), 90_000, "the resumed workflow");
		assertCountsOnce(after.history, "history across the crash");
	}));
});

describe(`actor workflows: rollback [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath() });

	async function history(handle) {
		const url = new URL(await handle.getGatewayUrl());
		url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector/workflow-history`;
		const res = await fetch(url, { headers: { authorization: "Bearer token" } });
		return await res.json();
	}

	it("a step asking for a rollback undoes the completed steps, latest first, once", T, env.wrap(async () => {
		const h = env.client.workflowSagaActor.getOrCreate([uniqueKey("wf-saga")], {
			createWithInput: { failWith: "rollback", failUndoOnce: false },
		});
		const state = await waitFor(async () => {
			const s = await h.getState();
			return s.log.includes("release r-1") ? s : null;
		}, { timeout: 30_000, interval: 100, what: "the rollback" });
		assert.deepEqual(state.log, ["reserve", "charge", "refund 100", "release r-1"]);
		assert.equal(state.stock, 10);
		assert.equal(state.balance, 0);
		assert.equal(state.events.length, 1, JSON.stringify(state.events));
		assert.equal(state.events[0].step.stepName, "ship");
		assert.equal(state.events[0].step.willRetry, false, "a rollback request is not retried");
		assert.equal(state.events[0].step.error.name, "RollbackError");
		const h2 = await waitFor(async () => {
			const r = await history(h);
			return r.workflowState === "failed" ? r : null;
		}, { timeout: 15_000, what: "the failed workflow" });
		const byName = (name) => h2.history.entries.find((e) => h2.history.nameRegistry[e.location.at(-1)] === name);
		assert.deepEqual(byName("order").kind, { type: "rollback_checkpoint", data: { name: "order" } });
		for (const step of ["reserve", "charge"]) {
			const meta = h2.history.entryMetadata[byName(step).id];
			assert.equal(typeof meta.rollbackCompletedAt, "number", `${step} undone: ${JSON.stringify(meta)}`);
			assert.equal(meta.rollbackError, null);
		}
		assert.equal(h2.history.entryMetadata[byName("ship").id].rollbackCompletedAt, null);
	}));

	full("an undo that fails stops the rollback; the next start of the actor finishes it", T, env.wrap(async () => {
		const h = env.client.workflowSagaActor.getOrCreate([uniqueKey("wf-saga-undo")], {
			createWithInput: { failWith: "error", failUndoOnce: true },
		});
		// Polled slower than the actor's 100 ms sleep timeout: it sleeps in between, and each
		// wake starts the workflow again, which resumes the rollback.
		const state = await waitFor(async () => {
			const s = await h.getState();
			return s.log.includes("release r-1") ? s : null;
		}, { timeout: 60_000, interval: 500, what: "the resumed rollback" });
		assert.deepEqual(state.log, ["reserve", "charge", "refund 100", "release r-1"]);
		assert.equal(state.undoFailures, 1);
		assert.equal(state.balance, 0);
		assert.equal(state.stock, 10);
		const rollback = state.events.find((e) => e.rollback);
		assert.ok(rollback, JSON.stringify(state.events));
		assert.equal(rollback.rollback.stepName, "charge");
		assert.equal(rollback.rollback.error.message, "bank offline");
		const steps = state.events.filter((e) => e.step);
		assert.equal(steps.length, 2, "ship: two attempts");
		assert.equal(state.events.length, 3, JSON.stringify(state.events));
	}));
});
