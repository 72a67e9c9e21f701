// The chat-room example (examples/chat-room) with the official client, as its README uses it:
// messages broadcast to every connection of the room, a history that survives a restart,
// usernames from connection params, and connections without a valid one refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, createClient, disposeClient, suiteTimeout, uniqueKey, useServer, waitFor, withTimeout } from "../lib/server.mjs";
import { examplePath, isUserError } from "../lib/example.mjs";

const T = { timeout: 60_000 };

describe("example chat-room", { timeout: suiteTimeout(240_000) }, () => {
	const env = useServer(undefined, { binary: examplePath("RIVETKIT_EXAMPLE_CHAT_ROOM") });
	const room = (key, username) => env.client.chatRoom.getOrCreate([key], { params: { username } });

	it("a message reaches every connection of the room and is kept in history", T, env.wrap(async () => {
		const key = uniqueKey("room");
		const ann = room(key, "ann").connect();
		const bob = room(key, "bob").connect();
		try {
			const seenByBob = [];
			bob.on("newMessage", (m) => seenByBob.push(m));
			const joined = [];
			ann.on("joined", (name) => joined.push(name));
			await withTimeout(bob.history(), 20_000, "bob's connection to open");
			await withTimeout(ann.history(), 20_000, "ann's connection to open");

			const sent = await ann.sendMessage("hello, room");
			assert.equal(sent.sender, "ann", "the sender is the connection's username, not the caller's say");
			assert.equal(sent.text, "hello, room");
			assert.ok(Math.abs(Number(sent.sentAt) - Date.now()) < 10 * 60_000);
			await waitFor(() => seenByBob.some((m) => m.text === "hello, room" && m.sender === "ann"), {
				what: "bob to receive ann's message",
			});
			await bob.sendMessage("hi ann");
			const history = await room(key, "carol").history();
			assert.deepEqual(history.map((m) => [m.sender, m.text]), [["ann", "hello, room"], ["bob", "hi ann"]]);
			assert.deepEqual((await room(key, "carol").history(1)).map((m) => m.text), ["hi ann"]);
			// Rooms are separate actors.
			assert.deepEqual(await room(uniqueKey("other"), "ann").history(), []);
			await assert.rejects(ann.sendMessage(""), (e) => isUserError(e, "invalid_message"));
			await assert.rejects(ann.sendMessage("x".repeat(2001)), (e) => isUserError(e, "invalid_message"));
		} finally {
			await Promise.all([ann.dispose(), bob.dispose()].map((p) => withTimeout(p, 10_000, "dispose").catch(() => {})));
		}
	}));

	it("connections without a valid username are refused", T, env.wrap(async () => {
		const key = uniqueKey("room");
		for (const username of ["", "   ", "x".repeat(33)]) {
			await assert.rejects(room(key, username).history(), (e) => isUserError(e, "invalid_username"));
			const conn = room(key, username).connect();
			try {
				await assert.rejects(withTimeout(conn.sendMessage("sneaky"), 20_000, "sendMessage on a refused connection"), (e) =>
					isUserError(e, "invalid_username"),
				);
			} finally {
				await withTimeout(conn.dispose(), 10_000, "dispose").catch(() => {});
			}
		}
		// No params at all: refused too, never a crash.
		await assert.rejects(env.client.chatRoom.getOrCreate([key]).history(), (e) => e instanceof ActorError);
		assert.deepEqual(await room(key, "dana").history(), [], "nothing a refused connection sent was kept");
		assert.ok(env.server.running);
	}));

	it("the history survives a restart", T, env.wrap(async () => {
		const key = uniqueKey("room");
		await room(key, "ann").sendMessage("before the restart");
		await env.server.restart();
		const client = createClient({ endpoint: env.server.endpoint });
		try {
			const again = client.chatRoom.getOrCreate([key], { params: { username: "bob" } });
			assert.deepEqual((await again.history()).map((m) => m.text), ["before the restart"]);
		} finally {
			await disposeClient(client);
		}
	}));
});
