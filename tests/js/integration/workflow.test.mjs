// Durable workflows (ActorBuilder::workflow, include/rivetkit/workflow.hpp) through the official
// client, in both modes: steps replayed across actor restarts without running twice (SIGKILL
// mid-loop included), a finished step's context refused, a durable sleep that lets the actor
// sleep and is woken by its alarm, retries with RivetKit's onError events, an exhausted step
// failing the workflow (which then never runs again and lets the actor sleep), a completed
// workflow not rerun after wake, the database and client usable only inside steps, and a step
// that destroys its actor. The actors: tests/conformance/actors/workflow.cpp.
//
// Workflows do not depend on the client's encoding: the cbor and bare runs check one case, json
// runs them all.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
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
