// The game-lobby example (examples/game-lobby) with the official client, as its README uses it:
// players join and get ready, a countdown (a durable schedule) starts the game and tells every
// connection, the lobby's rules answer clear errors, and a countdown running when the server is
// killed still starts the game after the restart.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, MODE, createClient, disposeClient, suiteTimeout, uniqueKey, useServer, waitFor, withTimeout } from "../lib/server.mjs";
import { examplePath, isUserError } from "../lib/example.mjs";

const T = { timeout: 90_000 };

describe("example game-lobby", { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer(undefined, { binary: examplePath("RIVETKIT_EXAMPLE_GAME_LOBBY") });
	const lobby = (key, input) => env.client.gameLobby.getOrCreate([key], { createWithInput: input });

	it("everyone ready -> a countdown -> the game starts and every connection hears it", T, env.wrap(async () => {
		const key = uniqueKey("lobby");
		const conn = lobby(key, { maxPlayers: 3, countdownMs: 1500 }).connect();
		try {
			const changes = [];
			const started = [];
			conn.on("lobbyChanged", (l) => changes.push(l));
			conn.on("gameStarted", (l) => started.push(l));
			let l = await withTimeout(conn.join("ann"), 20_000, "join over the connection");
			assert.deepEqual(l.players, [{ name: "ann", ready: false }]);
			assert.equal(l.phase, "waiting");
			await conn.join("bob");
			await conn.setReady("ann", true);
			assert.equal((await conn.getLobby()).phase, "waiting", "one ready player of two starts nothing");
			l = await conn.setReady("bob", true);
			assert.equal(l.phase, "countdown");
			assert.ok(Number(l.startsAt) >= Date.now() - 60_000);
			await waitFor(() => started.length > 0, { timeout: 30_000, what: "gameStarted" });
			assert.equal(started[0].phase, "playing");
			assert.ok(Number(started[0].startedAt) >= Number(l.startsAt), "not before the countdown ended");
			assert.ok(changes.some((c) => c.phase === "countdown"), "lobbyChanged announced the countdown");
			assert.equal((await conn.getLobby()).phase, "playing");
			await assert.rejects(conn.join("carol"), (e) => isUserError(e, "game_started"));
		} finally {
			await withTimeout(conn.dispose(), 10_000, "dispose").catch(() => {});
		}
	}));

	it("the lobby's rules: full, names, players, a countdown stopped by an unready player", T, env.wrap(async () => {
		const key = uniqueKey("lobby");
		const h = lobby(key, { maxPlayers: 2, countdownMs: 600_000 });
		await h.join("ann");
		await assert.rejects(h.join("ann"), (e) => isUserError(e, "name_taken"));
		await assert.rejects(h.join(""), (e) => isUserError(e, "invalid_name"));
		await h.join("bob");
		await assert.rejects(h.join("carol"), (e) => isUserError(e, "lobby_full"));
		await assert.rejects(h.setReady("zed", true), (e) => isUserError(e, "not_in_lobby"));
		await h.setReady("ann", true);
		assert.equal((await h.setReady("bob", true)).phase, "countdown");
		const back = await h.setReady("bob", false);
		assert.equal(back.phase, "waiting");
		assert.equal(back.startsAt, null);
		assert.equal(await h.startGame(), false, "no countdown is due");
		const left = await h.leave("bob");
		assert.deepEqual(left.players.map((p) => p.name), ["ann"]);
		// Bad input at creation is the creator's error.
		// Locally the creator gets create_state's error; through the engine, that the actor could
		// not start (the engine does not carry a start's error to the client).
		const startFailed = (code) => (e) => {
			assert.ok(e instanceof ActorError, `expected an ActorError, got ${e?.stack ?? e}`);
			if (MODE !== "engine") assert.equal(`${e.group}.${e.code}`, code, e.message);
			return true;
		};
		await assert.rejects(lobby(uniqueKey("bad"), { maxPlayers: 1 }).getLobby(), startFailed("user.invalid_input"));
		await assert.rejects(lobby(uniqueKey("bad"), { maxPlayers: "four" }).getLobby(), startFailed("actor.invalid_request"));
		// No input: the defaults.
		const plain = await lobby(uniqueKey("plain")).getLobby();
		assert.equal(plain.maxPlayers, 4);
		assert.equal(plain.countdownMs, 10_000);
		assert.ok(env.server.running);
	}));

	it("a countdown running when the server is killed starts the game after the restart", T, env.wrap(async () => {
		const key = uniqueKey("lobby");
		const h = lobby(key, { maxPlayers: 2, countdownMs: 3000 });
		await h.join("ann");
		await h.join("bob");
		await h.setReady("ann", true);
		const counting = await h.setReady("bob", true); // acknowledged: the schedule is durable
		assert.equal(counting.phase, "countdown");
		await env.server.restart({ hard: true });
		const client = createClient({ endpoint: env.server.endpoint });
		try {
			const again = client.gameLobby.getOrCreate([key]);
			let l;
			await waitFor(async () => (l = await again.getLobby()).phase === "playing", {
				timeout: 60_000,
				interval: 250,
				what: "the game to start after the restart",
			});
			assert.ok(Number(l.startedAt) >= Number(counting.startsAt));
			assert.deepEqual(l.players.map((p) => p.name), ["ann", "bob"]);
		} finally {
			await disposeClient(client);
		}
	}));
});
