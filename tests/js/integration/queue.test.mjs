// Durable queues (c.queue(), include/rivetkit/queue.hpp) through the official client, in both
// modes and every encoding: `handle.send(name, body)` and the actor's receives (one, a batch by
// names and count, without waiting, with a timeout), undeclared queues, completable messages
// (returned again until completed, previous_message_not_completed, already_completed), a send
// that waits for completion or times out, the limits, a receive ended by the actor's destroy, a
// `run` consumer, a send from the actor to itself, bad input (malformed bodies in each encoding, a
// negative timeout, a flood past the limit), and acknowledged messages surviving SIGKILL.
// The actors: queueActor, queueLimitedActor, runWithQueueConsumer
// (tests/conformance/actors/queue.cpp).
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
	withServers,
	withTimeout,
} from "../lib/server.mjs";
import { U64, cborDecode, cborEncode } from "../lib/wire.mjs";

const T = { timeout: 120_000 };

async function rejectsWith(promise, group, code, check = () => {}) {
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		check(err);
		return true;
	});
}

describe(`actor queue [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath() });

	it("a client's sends are received oldest first, by name and count, with or without waiting", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-basic")]);
		await h.send("greeting", { hello: "world" });
		assert.deepEqual(await h.receiveOne("greeting"), { name: "greeting", body: { hello: "world" } });
		await h.send("a", 1);
		await h.send("b", 2);
		await h.send("c", 3);
		await h.send("a", 4);
		assert.deepEqual(await h.receiveMany(["a", "c"], { count: 2 }), [
			{ name: "a", body: 1 },
			{ name: "c", body: 3 },
		]);
		assert.deepEqual(await h.receiveRequest({ count: 5 }), [
			{ name: "b", body: 2 },
			{ name: "a", body: 4 },
		]);
		assert.deepEqual(await h.tryReceiveMany({ names: ["a"], count: 3 }), []);
		const started = Date.now();
		assert.deepEqual(await h.receiveRequest({ names: ["b"], timeout: 100 }), []);
		assert.ok(Date.now() - started >= 90, "a receive with a timeout waits for it");
		assert.equal(await h.receiveOne("missing", { timeout: 50 }), null);
		// A receive that waits is woken by a send.
		const waiting = h.receiveOne("one", { timeout: 30_000 });
		await h.send("one", "first");
		assert.deepEqual(await withTimeout(waiting, 30_000, "the waiting receive"), { name: "one", body: "first" });
	}));

	it("a send to a queue the actor does not declare completes and keeps nothing", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-undeclared")]);
		await h.send("nobody", { x: 1 });
		assert.deepEqual(await h.send("nobody", { x: 2 }, { wait: true, timeout: 1_000 }), { status: "completed" });
		assert.deepEqual(await h.tryReceiveMany({ count: 10 }), []);
	}));

	it("completable messages come back until completed; RivetKit's errors for misuse", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-complete")]);
		await h.send("tasks", { value: 789 });
		assert.deepEqual(await h.receiveWithoutComplete("tasks"), { name: "tasks", body: { value: 789 } });
		assert.deepEqual(await h.receiveOne("tasks", { timeout: 1_000 }), { name: "tasks", body: { value: 789 } });
		await h.send("twice", { value: "t" });
		assert.deepEqual(await h.receiveAndCompleteTwice("twice"), { group: "queue", code: "already_completed" });
		await h.send("nowait", { value: "n" });
		assert.deepEqual(await h.receiveWithoutCompleteMethod("nowait"), { hasComplete: true });
		assert.deepEqual(await h.receiveOne("nowait", { timeout: 1_000 }), { name: "nowait", body: { value: "n" } });
		const other = env.client.queueActor.getOrCreate([uniqueKey("q-previous")]);
		await other.send("tasks", { value: 111 });
		assert.deepEqual(await other.receiveManualThenNextWithoutComplete("tasks"), {
			group: "queue",
			code: "previous_message_not_completed",
		});
	}));

	it("a send that waits gets the consumer's response, or timedOut", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-wait")]);
		const consumer = h.receiveAndComplete("tasks");
		const result = await h.send("tasks", { value: 123 }, { wait: true, timeout: 30_000 });
		assert.deepEqual(result, { status: "completed", response: { echo: { value: 123 } } });
		assert.deepEqual(await consumer, { name: "tasks", body: { value: 123 } });
		const started = Date.now();
		const timedOut = await h.send("timeout", { value: 456 }, { wait: true, timeout: 100 });
		assert.equal(timedOut.status, "timedOut");
		assert.ok(Date.now() - started >= 90);
		// The message stays queued for a later consumer.
		assert.deepEqual(await h.receiveOne("timeout", { timeout: 1_000 }), { name: "timeout", body: { value: 456 } });
	}));

	it("limits: queue.full past max_queue_size, queue.message_too_large past the message size", T, env.wrap(async () => {
		const h = env.client.queueLimitedActor.getOrCreate([uniqueKey("q-limits")]);
		await h.send("message", 1);
		await rejectsWith(h.send("message", 2), "queue", "full", (err) => assert.match(err.message, /Queue is full\. Limit is 1/));
		const big = env.client.queueLimitedActor.getOrCreate([uniqueKey("q-big")]);
		await rejectsWith(big.send("oversize", "a".repeat(200)), "queue", "message_too_large");
		await big.send("oversize", "small");
	}));

	it("a receive waiting when the actor is destroyed ends with actor.aborted", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-abort")]);
		await rejectsWith(withTimeout(h.waitForAbort(), 30_000, "the aborted receive"), "actor", "aborted");
	}));

	it("a run loop consumes what the actor and its clients send; an actor sends to itself", T, env.wrap(async () => {
		const h = env.client.runWithQueueConsumer.getOrCreate([uniqueKey("q-run")]);
		assert.equal(await h.sendMessage({ n: 1 }), true);
		await h.send("messages", { n: 2 });
		await waitFor(async () => (await h.getState()).messagesReceived.length === 2, {
			timeout: 30_000,
			what: "the run loop to take both",
		});
		const state = await h.getState();
		assert.equal(state.runStarted, true);
		assert.deepEqual(state.messagesReceived, [
			{ name: "messages", body: { n: 1 } },
			{ name: "messages", body: { n: 2 } },
		]);
		const self = env.client.queueActor.getOrCreate([uniqueKey("q-self")]);
		assert.equal(await self.sendToSelf("self", { value: 42 }), true);
		assert.deepEqual(await self.receiveOne("self"), { name: "self", body: { value: 42 } });
	}));

	it("bad input: malformed bodies and a negative timeout are 400s that keep nothing; a flood past the limit keeps exactly the limit", T, env.wrap(async () => {
		const h = env.client.queueActor.getOrCreate([uniqueKey("q-bad")]);
		const id = await h.resolve();
		const url = `${env.endpoint}/gateway/${encodeURIComponent(id)}/queue/a`;
		const post = (body, encoding = "json") =>
			fetch(url, { method: "POST", headers: { "x-rivet-encoding": encoding }, body });
		for (const [body, encoding] of [
			["{not json", "json"],
			["[1,2]", "json"],
			[JSON.stringify({ body: 1, wait: "yes" }), "json"],
			[JSON.stringify({ body: 1, wait: true, timeout: -5 }), "json"],
			[Buffer.from([0xa1, 0x64]), "cbor"],
			[Buffer.from([0xff, 0x00, 0x13]), "bare"],
		]) {
			const r = await post(body, encoding);
			assert.equal(r.status, 400, `${encoding} ${String(body)}`);
		}
		assert.deepEqual(await h.tryReceiveMany({ count: 10 }), [], "nothing was enqueued");
		const ok = await post(JSON.stringify({ body: { y: 2 } }));
		assert.equal(ok.status, 200);
		assert.deepEqual(await h.receiveOne("a"), { name: "a", body: { y: 2 } });
		// A huge timeout (CBOR u64 2^64-1 ms: {body: 3, wait: true, timeout}) is bounded by the action
		// timeout only: the send waits for the consumer instead of timing out at once.
		const waiting = post(cborEncode({ body: 3, wait: true, timeout: new U64(2n ** 64n - 1n) }), "cbor");
		assert.deepEqual(await h.receiveAndComplete("a"), { name: "a", body: 3 });
		const answered = await waiting;
		assert.equal(answered.status, 200);
		assert.deepEqual(cborDecode(new Uint8Array(await answered.arrayBuffer())), { status: "completed", response: { echo: 3 } });

		// 20 concurrent sends to a queue of one: exactly one is kept, the others are queue.full.
		const limited = env.client.queueLimitedActor.getOrCreate([uniqueKey("q-flood")]);
		const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => limited.send("message", i)));
		assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
		for (const r of results.filter((x) => x.status === "rejected")) {
			assert.equal(`${r.reason.group}.${r.reason.code}`, "queue.full");
		}
		await rejectsWith(limited.send("message", 99), "queue", "full");
	}));
});

describe(`actor queue across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	it("acknowledged sends and receives survive SIGKILL: the rest comes back in order", T, withServers(async (ctx) => {
		const server = await ctx.start({ binary: driverFixturePath() });
		let client = ctx.client(server);
		const key = [uniqueKey("q-kill")];
		const h = client.queueActor.getOrCreate(key);
		const N = 20;
		for (let i = 0; i < N; i++) await h.send("a", i);
		assert.deepEqual(await h.receiveMany(["a"], { count: 5 }), [0, 1, 2, 3, 4].map((body) => ({ name: "a", body })));
		await server.restart({ hard: true });
		client = ctx.client(server);
		const again = client.queueActor.getOrCreate(key);
		const rest = await withTimeout(again.receiveMany(["a"], { count: 100 }), 60_000, "the receive after the restart");
		assert.deepEqual(rest, Array.from({ length: N - 5 }, (_, i) => ({ name: "a", body: i + 5 })));
		await again.send("b", "after");
		assert.deepEqual(await again.receiveOne("b"), { name: "b", body: "after" });
	}));
});
