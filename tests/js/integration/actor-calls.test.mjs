// Actors calling actors (c.client(), include/rivetkit/client.hpp) through the official client, in
// both modes and every encoding. The `relay` actor (tests/integration/fixture_server.cpp) reaches
// other actors only through c.client(): in local mode in process, in engine mode through the
// engine's gateway. Checked from outside with the official client: the relay and the client see
// one and the same actor per key; create gives the input; values keep their types through two
// hops; the callee's user error reaches the client with group, code and metadata; unknown types,
// missing actors and unknown actions are RivetKit's errors; an actor calls itself and two relays
// call each other without deadlock; arguments and results over the message limits are refused; a sleeping callee is woken with its state; a destroyed callee
// is not found and a get-or-create through the relay then makes it anew; queue sends pass the
// callee's connection hooks and complete.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, ENCODING, MODE, suiteTimeout, uniqueKey, useServer, waitFor } from "../lib/server.mjs";

const T = { timeout: 60_000 };

async function rejectsWith(promise, group, code) {
	let caught;
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		caught = err;
		return true;
	});
	return caught;
}

describe(`actor-to-actor calls [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();

	it("the relay and the client reach the same actor per key", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = uniqueKey("room");
		assert.equal(await relay.callActor("counter", [key], "increment", [2]), 2);
		assert.equal(await relay.callActor("counter", [key], "increment", [3]), 5);
		assert.equal(await env.client.counter.getOrCreate([key]).getCount(), 5, "the client sees the relay's writes");
		await env.client.counter.getOrCreate([key]).increment(10);
		assert.equal(await relay.callActor("counter", [key], "getCount", []), 15, "and the relay the client's");
		const id = await relay.resolveActor("counter", [key]);
		assert.equal(id, await env.client.counter.getOrCreate([key]).resolve());
		assert.equal(await relay.callById("counter", id, "getCount", []), 15);
	}));

	it("create gives the input and refuses a used key", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = uniqueKey("input");
		const input = { name: "alpha", n: 7, nested: [1, "two", null] };
		const id = await relay.createActor("withInput", [key], input);
		assert.deepEqual(await env.client.withInput.getForId(id).getInput(), input);
		await assert.rejects(relay.createActor("withInput", [key], input), (err) => {
			assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
			assert.equal(err.group, "actor");
			// Through the engine a racing create may also answer destroyed_during_creation (create-get.test.mjs).
			assert.ok(["duplicate_key", "destroyed_during_creation"].includes(err.code), `${err.code}: ${err.message}`);
			return true;
		});
	}));

	it("values keep their types through two hops", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const args = [1, -2.5, "text", true, null, [1, [2]], { a: { b: "c" } }, 12345678901234567890n, new Uint8Array([0, 1, 255])];
		const out = await relay.callActor("counter", [uniqueKey("echo")], "echo", args);
		assert.equal(out.length, args.length);
		assert.deepEqual(out.slice(0, 7), args.slice(0, 7));
		assert.equal(out[7], 12345678901234567890n);
		assert.deepEqual(Array.from(out[8]), [0, 1, 255]);
	}));

	it("the callee's user error reaches the client with group, code and metadata", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const err = await rejectsWith(relay.callActor("counter", [uniqueKey("fail")], "fail", []), "user", "my_code");
		assert.equal(err.message, "this action always fails");
		assert.deepEqual(err.metadata, { a: 1 });
	}));

	it("unknown types, missing actors and unknown actions are RivetKit's errors", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		await rejectsWith(relay.callActor("noSuchActor", ["x"], "anything", []), "actor", "unknown_name");
		await rejectsWith(relay.getAndCall("counter", [uniqueKey("never-made")], "getCount", []), "actor", "not_found");
		await rejectsWith(relay.callActor("counter", [uniqueKey("c")], "noSuchAction", []), "actor", "action_not_found");
		// The relay still works after its calls failed.
		assert.equal(await relay.ping(), "pong");
	}));

	it("arguments and results over the message limits are refused", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = [uniqueKey("limits")];
		// The fixture's limits are RivetKit's defaults: 64 KiB in, 1 MiB out.
		assert.deepEqual(await relay.echoOfSize(key, 60_000), ["e".repeat(60_000)]);
		await rejectsWith(relay.echoOfSize(key, 70_000), "message", "incoming_too_long");
		assert.equal((await relay.callActor("counter", key, "big", [900_000])).length, 900_000);
		await rejectsWith(relay.callActor("counter", key, "big", [1_100_000]), "message", "outgoing_too_long");
		assert.equal(await relay.ping(), "pong");
	}));

	it("queue sends reach the callee through its connection hooks", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = uniqueKey("guarded");
		const ok = { token: "ok", user: "relayed" };
		assert.equal(await relay.sendToActor("guarded", [key], "jobs", { x: 1 }, false, ok), "sent");
		assert.deepEqual(await relay.sendToActor("guarded", [key], "jobs", [1, "two"], true, ok), { status: "completed" });
		await rejectsWith(relay.sendToActor("guarded", [key], "jobs", 1, false, { token: "bad" }), "user", "forbidden_token");
		await rejectsWith(relay.sendToActor("guarded", [key], "jobs", 1, true, { token: "bad" }), "user", "forbidden_token");
		assert.equal(await env.client.guarded.getOrCreate([key], { params: ok }).whoami(), "relayed", "the callee is unharmed");
	}));

	it("an actor calls itself, and two actors call each other, without deadlock", T, env.wrap(async () => {
		const a = uniqueKey("relay-a");
		const b = uniqueKey("relay-b");
		assert.equal(await env.client.relay.getOrCreate([a]).pingSelf(), "pong");
		// a -> b.callActor(relay, [a], ping) -> a.ping while a still waits for b.
		assert.equal(await env.client.relay.getOrCreate([a]).pingThrough(b), "pong");
		const calls = [];
		for (let i = 0; i < 5; i++) {
			calls.push(env.client.relay.getOrCreate([a]).pingThrough(b));
			calls.push(env.client.relay.getOrCreate([b]).pingThrough(a));
		}
		assert.deepEqual(await Promise.all(calls), Array(10).fill("pong"));
	}));

	it("a sleeping callee is woken with its state", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = uniqueKey("sleeper");
		assert.equal(await relay.callActor("sleepy", [key], "increment", [4]), 4);
		const before = await env.client.sleepy.getOrCreate([key]).getLifecycle();
		await relay.callActor("sleepy", [key], "goToSleep", []);
		// The sleepy actor counts its sleeps; wait until it has slept (reading wakes it again).
		await waitFor(async () => (await env.client.sleepy.getOrCreate([key]).getLifecycle()).sleeps > before.sleeps, {
			timeout: 30_000,
			interval: 200,
			what: "the callee slept",
		});
		await relay.callActor("sleepy", [key], "goToSleep", []);
		assert.equal(await relay.callActor("sleepy", [key], "increment", [1]), 5, "woken by the relay, with its state");
	}));

	it("a destroyed callee is not found, and get-or-create then makes it anew", T, env.wrap(async () => {
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		const key = uniqueKey("doomed");
		assert.equal(await relay.callActor("counter", [key], "increment", [3]), 3);
		const oldId = await relay.resolveActor("counter", [key]);
		assert.equal(await relay.destroyActor("counter", [key]), true);
		await waitFor(
			async () => {
				try {
					await env.client.counter.getForId(oldId).getCount();
					return false;
				} catch (err) {
					return err instanceof ActorError && err.code === "not_found";
				}
			},
			{ timeout: 30_000, interval: 100, what: "the destroyed actor is gone" },
		);
		await rejectsWith(relay.callById("counter", oldId, "getCount", []), "actor", "not_found");
		await rejectsWith(relay.destroyActor("counter", [key]), "actor", "not_found");
		assert.equal(await relay.callActor("counter", [key], "increment", [1]), 1, "a fresh actor, fresh state");
		assert.notEqual(await relay.resolveActor("counter", [key]), oldId);
	}));
});
