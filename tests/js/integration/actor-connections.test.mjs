// Connections from one actor to another (handle.connect() in c.client(),
// include/rivetkit/actor_connection.hpp) through the official client, in both modes and every
// encoding. The `watcher` actor (tests/integration/fixture_server.cpp) holds one connection to a
// `room`, opened from its action, and keeps the events it gets in its vars; the room counts the
// connections whose params say {member: true}. Checked from outside: events the holder subscribed
// to reach it (broadcasts and conn.send), actions run over the connection with its params, errors
// keep RivetKit's shape, a refused connection fails the connect, and the connection ends when it
// is disposed, when its holder sleeps, and when the other actor is destroyed.
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

describe(`actor-to-actor connections [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();
	const member = { member: true };

	async function joined() {
		const watcher = env.client.watcher.getOrCreate([uniqueKey("watcher")]);
		const roomKey = uniqueKey("room");
		const connId = await watcher.join("room", roomKey, member);
		assert.equal(typeof connId, "string");
		assert.ok(connId.length > 0, "the room's Init named the connection");
		return { watcher, room: env.client.room.getOrCreate([roomKey]), roomKey };
	}

	it("events the holder listens to reach it: broadcasts and conn.send", T, env.wrap(async () => {
		const { watcher, room } = await joined();
		assert.equal(await room.say("hello"), "hello");
		await waitFor(async () => (await watcher.received()).length >= 1, { timeout: 15_000, what: "the broadcast" });
		assert.deepEqual(await watcher.received(), [{ said: ["hello"] }]);
		assert.equal(await watcher.callThrough("whisperTo", ["psst"]), true);
		await waitFor(async () => (await watcher.received()).length >= 2, { timeout: 15_000, what: "the whisper" });
		assert.deepEqual((await watcher.received())[1], { whisper: ["psst"] });
		assert.deepEqual(await room.presence(), { joined: 1, left: 0 });
	}));

	it("actions run over the connection, with its params and RivetKit's errors", T, env.wrap(async () => {
		const { watcher } = await joined();
		assert.deepEqual(await watcher.callThrough("params", []), member);
		assert.equal(await watcher.callThrough("say", ["over the connection"]), "over the connection");
		const err = await rejectsWith(watcher.callThrough("fail", []), "user", "room_says_no");
		assert.deepEqual(err.metadata, { why: "test" });
		await rejectsWith(watcher.callThrough("noSuchAction", []), "actor", "action_not_found");
		assert.equal(await watcher.holds(), true, "errors of single actions leave the connection open");
		await waitFor(async () => (await watcher.received()).length >= 1, { timeout: 15_000, what: "its own broadcast" });
	}));

	it("a connection the other actor refuses fails the connect with its error", T, env.wrap(async () => {
		const watcher = env.client.watcher.getOrCreate([uniqueKey("watcher")]);
		await rejectsWith(watcher.join("guarded", uniqueKey("guarded"), { token: "bad" }), "user", "forbidden_token");
		assert.equal(await watcher.holds(), false);
		assert.equal(typeof (await watcher.join("guarded", uniqueKey("guarded"), { token: "ok", user: "w" })), "string");
		assert.equal(await watcher.callThrough("whoami", []), "w");
	}));

	it("dispose ends the connection: the other actor sees it leave", T, env.wrap(async () => {
		const { watcher, room } = await joined();
		assert.equal(await watcher.leave(), true);
		await waitFor(async () => (await room.presence()).left === 1, { timeout: 15_000, what: "the room to see it leave" });
		await rejectsWith(watcher.callThrough("say", ["too late"]), "actor", "connection_closed");
	}));

	it("the connection closes when its holder sleeps", T, env.wrap(async () => {
		const { watcher, room } = await joined();
		await watcher.goToSleep();
		await waitFor(async () => (await room.presence()).left === 1, { timeout: 20_000, what: "the room to see it leave" });
		assert.equal(await watcher.holds(), false, "the holder woke without it");
	}));

	it("the connection ends when the other actor is destroyed", T, env.wrap(async () => {
		const { watcher, roomKey } = await joined();
		const relay = env.client.relay.getOrCreate([uniqueKey("relay")]);
		assert.equal(await relay.destroyActor("room", [roomKey]), true);
		await waitFor(async () => !(await watcher.holds()), { timeout: 20_000, what: "the connection to end" });
		await assert.rejects(watcher.callThrough("say", ["gone"]));
	}));
});
