// Connection params and connection rejection (actor `guarded`):
// onBeforeConnect / createConnState run for WS connections and for every HTTP
// action (transient connection). client-protocol.md §6.3, §6.8, §8.3;
// core-semantics.md §3, §4.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, uniqueKey, withTimeout, waitFor, ActorError } from "../lib/server.mjs";
import { directUrl, openConnect, openWs, postAction, wsUrl, connectProtocols, decodeToClient, show } from "../lib/wire.mjs";

const T = { timeout: 30_000 };

function isActorError(err, group, code) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.constructor?.name}: ${err?.stack ?? err}`);
	assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
	return true;
}

describe(`params and rejection [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();
	const conns = [];
	after(async () => {
		for (const c of conns) await withTimeout(c.dispose(), 5_000, "conn.dispose()").catch(() => {});
	});
	const guarded = (key, params) => env.client.guarded.getOrCreate([key], params === undefined ? {} : { params });

	it("good token: connect, whoami over the connection returns the params-derived user", T, env.wrap(async () => {
		const conn = guarded(uniqueKey("g"), { token: "ok", user: "alice" }).connect();
		conns.push(conn);
		assert.equal(await withTimeout(conn.whoami(), 10_000, "conn.whoami()"), "alice");
		assert.equal(conn.connStatus, "connected");
	}));

	it("good token without user: createConnState defaults to 'anon'", T, env.wrap(async () => {
		const conn = guarded(uniqueKey("g"), { token: "ok" }).connect();
		conns.push(conn);
		assert.equal(await withTimeout(conn.whoami(), 10_000, "conn.whoami()"), "anon");
	}));

	it("good token: whoami over HTTP uses the params (x-rivet-conn-params)", T, env.wrap(async () => {
		const key = uniqueKey("g");
		assert.equal(await guarded(key, { token: "ok", user: "bob" }).whoami(), "bob");
		// Each HTTP action is its own transient connection with its own params.
		assert.equal(await guarded(key, { token: "ok", user: "carol" }).whoami(), "carol");
		assert.equal(await guarded(key, { token: "ok" }).whoami(), "anon");
	}));

	it("connect(params) overrides the handle's params", T, env.wrap(async () => {
		const conn = guarded(uniqueKey("g"), { token: "bad" }).connect({ token: "ok", user: "dave" });
		conns.push(conn);
		assert.equal(await withTimeout(conn.whoami(), 10_000, "conn.whoami()"), "dave");
	}));

	it("bad token: the connection fails with user/forbidden_token and the client stops retrying", T, env.wrap(async () => {
		const conn = guarded(uniqueKey("g"), { token: "bad" }).connect();
		conns.push(conn);
		const errors = [];
		conn.onError((e) => errors.push(e));
		// An action queued before Init is rejected with the connection error.
		await assert.rejects(withTimeout(conn.whoami(), 10_000, "conn.whoami() on a rejected connection"), (err) =>
			isActorError(err, "user", "forbidden_token"),
		);
		await waitFor(() => errors.length > 0, { timeout: 5_000, what: "onError" });
		for (const e of errors) isActorError(e, "user", "forbidden_token");
		// §6.8 step 1: an Error frame carries the raw message before the close.
		assert.ok(errors.some((e) => e.message === "bad token"), `an error with message "bad token": ${errors.map((e) => e.message)}`);
		// Not retried (§8.3): the connection settles in "idle", never "connected".
		await waitFor(() => conn.connStatus === "idle", { timeout: 5_000, what: `connStatus idle (is ${conn.connStatus})` });
	}));

	it("missing params: the connection is rejected too", T, env.wrap(async () => {
		const conn = guarded(uniqueKey("g")).connect();
		conns.push(conn);
		await assert.rejects(withTimeout(conn.whoami(), 10_000, "conn.whoami()"), (err) => isActorError(err, "user", "forbidden_token"));
	}));

	it("bad token over HTTP: the action fails with user/forbidden_token", T, env.wrap(async () => {
		const key = uniqueKey("g");
		await assert.rejects(guarded(key, { token: "bad" }).whoami(), (err) => {
			isActorError(err, "user", "forbidden_token");
			assert.equal(err.message, "bad token");
			return true;
		});
		await assert.rejects(guarded(key).whoami(), (err) => isActorError(err, "user", "forbidden_token"));
		// The actor itself is fine.
		assert.equal(await guarded(key, { token: "ok", user: "erin" }).whoami(), "erin");
	}));

	it("raw HTTP: params travel in x-rivet-conn-params; a rejection is HTTP 500 with the user error", T, env.wrap(async () => {
		const h = guarded(uniqueKey("g"), { token: "ok" });
		const id = await h.resolve();
		const url = directUrl(env.endpoint, id, "/action/whoami");

		let r = await postAction(url, { encoding: ENCODING, args: [], headers: { "x-rivet-conn-params": JSON.stringify({ token: "ok", user: "frank" }) } });
		assert.equal(r.status, 200, `status ${r.status}: ${show(r.body)}`);
		assert.deepStrictEqual(r.body, { output: "frank" });

		r = await postAction(url, { encoding: ENCODING, args: [], headers: { "x-rivet-conn-params": JSON.stringify({ token: "bad" }) } });
		// §6.5: user errors are HTTP 500, body in the request's encoding.
		assert.equal(r.status, 500);
		assert.ifError(r.decodeError);
		assert.equal(r.body.group, "user");
		assert.equal(r.body.code, "forbidden_token");
		assert.equal(r.body.message, "bad token");

		r = await postAction(url, { encoding: ENCODING, args: [] });
		assert.equal(r.status, 500);
		assert.equal(r.body?.code, "forbidden_token");
	}));

	it("raw /connect: params in rivet_conn_params; rejection = Error frame (actionId null) then close 1011", T, env.wrap(async () => {
		const h = guarded(uniqueKey("g"), { token: "ok" });
		const id = await h.resolve();
		const url = wsUrl(directUrl(env.endpoint, id, "/connect"));

		const ok = await openConnect(url, ENCODING, { params: { token: "ok", user: "gina" } });
		try {
			const r = await ok.call("whoami", []);
			assert.equal(r.result.tag, "ActionResponse");
			assert.equal(r.result.output, "gina");
		} finally {
			ok.close();
		}

		const bad = openWs(url, connectProtocols(ENCODING, { token: "bad" }));
		const closed = await bad.closed(10_000);
		const frames = closed.messages.map((m) => decodeToClient(ENCODING, m));
		assert.ok(!frames.some((f) => f.tag === "Init"), "no Init on a rejected connection");
		const err = frames.find((f) => f.tag === "Error");
		assert.ok(err, `an Error frame before the close (frames: ${show(frames)})`);
		assert.equal(err.actionId, null);
		assert.equal(err.group, "user");
		assert.equal(err.code, "forbidden_token");
		assert.equal(err.message, "bad token");
		assert.equal(closed.code, 1011);
		assert.equal(closed.reason.split("#")[0], "user.forbidden_token");
	}));
});
