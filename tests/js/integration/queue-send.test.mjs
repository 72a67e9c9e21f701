// Queue sends (`handle.send(name, body, {wait, timeout})`, POST /queue/{name}) through the official
// client, in both modes and every encoding, to an actor that declares no queues: RivetKit answers
// a send to a queue an actor does not declare with {status: "completed"} and enqueues nothing
// (core-semantics.md §7). These tests hold that, together with what every send goes through
// first, the transient connection's hooks (the `guarded` actor refuses params without token "ok")
// and the request checks (method, size, body). Declared queues: queue.test.mjs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, ENCODING, MODE, suiteTimeout, uniqueKey, useServer } from "../lib/server.mjs";

const T = { timeout: 60_000 };

async function rejectsWith(promise, group, code) {
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError || err?.group, `expected a RivetKit error, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		return true;
	});
}

describe(`queue sends [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(180_000) }, () => {
	const env = useServer();
	const admitted = (key) => env.client.guarded.getOrCreate([key], { params: { token: "ok", user: "q" } });

	it("a send without wait resolves once the actor took it", T, env.wrap(async () => {
		const h = admitted(uniqueKey("send"));
		assert.equal(await h.send("jobs", { x: 1 }), undefined);
		assert.equal(await h.whoami(), "q", "the actor serves actions after the send");
	}));

	it("a send that waits is completed (an undeclared queue completes at once)", T, env.wrap(async () => {
		const h = admitted(uniqueKey("wait"));
		const result = await h.send("jobs", { x: 1 }, { wait: true, timeout: 5_000 });
		assert.equal(result.status, "completed");
		assert.equal(result.response, undefined);
		const untimed = await h.send("other queue/ü", [1, "two", null], { wait: true });
		assert.equal(untimed.status, "completed", "any name, any body");
	}));

	it("the connection hooks run first: a refused connection refuses the send", T, env.wrap(async () => {
		const key = uniqueKey("refused");
		await rejectsWith(
			env.client.guarded.getOrCreate([key], { params: { token: "bad" } }).send("jobs", 1),
			"user",
			"forbidden_token",
		);
		await rejectsWith(
			env.client.guarded.getOrCreate([key], { params: { token: "bad" } }).send("jobs", 1, { wait: true }),
			"user",
			"forbidden_token",
		);
		assert.equal(await admitted(key).send("jobs", 1), undefined, "the actor is unharmed");
	}));

	it("a body over the incoming limit is message.incoming_too_long", T, env.wrap(async () => {
		const h = admitted(uniqueKey("big"));
		await rejectsWith(h.send("jobs", "x".repeat(70_000)), "message", "incoming_too_long");
		assert.equal(await h.send("jobs", "x".repeat(1_000)), undefined);
	}));

	it("a queue path answers only POST, and a bad body is a 400", T, env.wrap(async () => {
		const h = admitted(uniqueKey("raw"));
		const id = await h.resolve();
		const url = `${env.endpoint}/gateway/${encodeURIComponent(id)}/queue/jobs`;
		const headers = { "x-rivet-encoding": "json", "x-rivet-conn-params": JSON.stringify({ token: "ok" }) };
		const get = await fetch(url, { headers });
		assert.equal(get.status, 405);
		assert.equal((await get.json()).code, "method_not_allowed");
		const bad = await fetch(url, { method: "POST", headers, body: "{not json" });
		assert.equal(bad.status, 400);
		assert.equal((await bad.json()).group, "core");
		const ok = await fetch(url, { method: "POST", headers, body: JSON.stringify({ body: { y: 2 }, wait: true }) });
		assert.equal(ok.status, 200);
		assert.deepEqual(await ok.json(), { status: "completed" });
	}));
});
