// Redelivery of queue messages (rivetkit::QueueDelivery, beyond RivetKit; docs/queues.md) through
// the official client, in both modes and every encoding: delivery counts that go on across
// SIGKILL, a visibility timeout that hides a taken message and then delivers it again (the first
// delivery's complete() then fails with queue.delivery_expired), max_deliveries moving a message
// that keeps failing to the dead letters (taken message left uncompleted across restarts, and a
// `run` handler that crashes the process on a poison message), and replaying and dropping dead
// letters; waitForNames / waitForNamesAvailable. The actor: queueWorker (tests/integration/queue_worker.cpp).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, uniqueKey, useServer, waitFor, withServers, withTimeout } from "../lib/server.mjs";

const T = { timeout: 180_000 };
const CRASH_T = { timeout: 360_000 };

describe(`queue redelivery [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();

	it("a visibility timeout hides a taken message, then delivers it again; the stale delivery cannot complete it", T, env.wrap(async () => {
		const h = env.client.queueWorker.getOrCreate([uniqueKey("q-vis")]);
		await h.send("slow", { job: 1 });
		const holding = h.holdUntilGo("slow");
		await waitFor(() => h.holding(), { timeout: 30_000, what: "the first delivery" });
		assert.equal(await h.take("slow"), null, "hidden while its first delivery runs");
		// A receive that waits gets it once the visibility timeout (300 ms) passes.
		const second = await h.take("slow", 30_000);
		assert.equal(second?.deliveries, 2, JSON.stringify(second));
		assert.deepEqual(second.body, { job: 1 });
		await h.go();
		assert.deepEqual(await holding, { deliveries: 1, result: "queue.delivery_expired" });
		assert.equal(await h.size(), 1, "the stale complete removed nothing");
		// The second delivery was not completed either: a third comes once its timeout passes.
		const third = await waitFor(() => h.takeAndComplete("slow", "done"), { timeout: 30_000, what: "the third delivery" });
		assert.equal(third.deliveries, 3);
		assert.equal(third.id, second.id);
		assert.equal(await h.size(), 0);
	}));

	it("waitForNamesAvailable then waitForNames: resumes on a matching send, or queue.timed_out", T, env.wrap(async () => {
		const h = env.client.queueWorker.getOrCreate([uniqueKey("q-wait-names")]);
		const waiting = h.waitForNames(["late"], 60_000);
		await h.send("jobs", "another name");
		await h.send("late", { hi: 1 });
		assert.deepEqual(await waiting, { queued: 2, body: { hi: 1 } }, "availability took nothing; the wait took it");
		await assert.rejects(h.waitForNames(["late"], 50), (err) => {
			assert.equal(`${err.group}.${err.code}`, "queue.timed_out", err.message);
			return true;
		});
	}));

	it("unknown dead letters: replay answers null, drop false", T, env.wrap(async () => {
		const h = env.client.queueWorker.getOrCreate([uniqueKey("q-none")]);
		assert.equal(await h.replay(12345), null);
		assert.equal(await h.drop(12345), false);
		assert.deepEqual(await h.deadLetters(), []);
	}));
});

describe(`queue redelivery across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(900_000) }, () => {
	it("an uncompleted message comes back after each SIGKILL with its count, then goes to the dead letters; replay and complete", CRASH_T, withServers(async (ctx) => {
		const server = await ctx.start();
		let client = ctx.client(server);
		const key = [uniqueKey("q-redeliver")];
		let h = client.queueWorker.getOrCreate(key);
		await h.send("jobs", "j1");
		const first = await h.take("jobs");
		assert.equal(first.deliveries, 1);
		assert.equal(await h.take("jobs"), null, "hidden for its visibility timeout (60 s)");
		for (const expected of [2, 3]) {
			await server.restart({ hard: true });
			client = ctx.client(server);
			h = client.queueWorker.getOrCreate(key);
			const again = await withTimeout(h.take("jobs"), 60_000, `delivery ${expected} after SIGKILL`);
			assert.deepEqual(again, { ...first, deliveries: expected }, "a restart shows it again, counted");
		}
		await server.restart({ hard: true });
		client = ctx.client(server);
		h = client.queueWorker.getOrCreate(key);
		assert.equal(await withTimeout(h.take("jobs"), 60_000, "the take after 3 deliveries"), null, "max_deliveries (3) reached");
		assert.deepEqual(await h.deadLetters(), [{ id: first.id, name: "jobs", body: "j1", deliveries: 3 }]);
		assert.equal(await h.size(), 0);

		const replayed = await h.replay(first.id);
		assert.ok(replayed > first.id, `a replay gets a new id (${replayed})`);
		assert.deepEqual(await h.deadLetters(), []);
		const done = await h.takeAndComplete("jobs", "ok");
		assert.deepEqual(done, { id: replayed, name: "jobs", body: "j1", deliveries: 1 });
		await server.restart({ hard: true });
		client = ctx.client(server);
		h = client.queueWorker.getOrCreate(key);
		assert.equal(await withTimeout(h.take("jobs"), 60_000, "the take after the completion"), null, "a completed message is gone for good");
		assert.deepEqual(await h.deadLetters(), []);
	}));

	it("a run handler that crashes the process on a poison message: counted, dead-lettered after 2, the queue goes on", CRASH_T, withServers(async (ctx) => {
		const server = await ctx.start();
		const key = [uniqueKey("q-poison")];
		let crashes = 0;
		let exited = server.exited;
		let client = ctx.client(server);
		// Calls made while the consumer crashes may never be answered (the engine holds a request
		// for an actor whose process died): they are not awaited; the process's exit is.
		client.queueWorker.getOrCreate(key).send("poison", "crash").catch(() => {});
		while (crashes < 2) {
			await withTimeout(exited, 90_000, `crash ${crashes + 1} of the run handler`);
			crashes += 1;
			await server.restart({ hard: true });
			exited = server.exited;
			client = ctx.client(server);
			// Wakes the actor (unless the engine did): its run handler takes the message again.
			client.queueWorker.getOrCreate(key).applied().catch(() => {});
		}
		const h = client.queueWorker.getOrCreate(key);
		// Each poll is bounded: in engine mode a request that reached the engine while the actor's
		// process was dying may be held unanswered; the next poll is a new request.
		const dead = await waitFor(
			async () => {
				const list = await withTimeout(h.deadLetters(), 15_000, "deadLetters()").catch(() => []);
				return list.length === 1 ? list : undefined;
			},
			{ timeout: 90_000, what: "the poison message in the dead letters" },
		);
		assert.equal(server.running, true, "no third crash");
		assert.equal(dead[0].body, "crash");
		assert.equal(dead[0].deliveries, 2);
		await withTimeout(h.send("poison", "fine"), 30_000, "send fine");
		await waitFor(async () => (await withTimeout(h.applied(), 15_000, "applied()").catch(() => 0)) === 1, {
			timeout: 60_000,
			what: "the next message applied",
		});
		assert.equal(await h.drop(dead[0].id), true);
		assert.deepEqual(await h.deadLetters(), []);
		assert.equal(server.running, true);
	}));
});
