// Event access control (ActorBuilder::event with a can_subscribe rule) through the official
// client, in both modes and every encoding. The `gate` actor (tests/integration/fixture_server.cpp)
// declares `open` (no rule), `vip` (an asynchronous rule that admits params {user: "vip"}),
// `broken` (a rule that throws) and `closed` (always false). A refused subscription closes the
// connection with the refusal (auth.forbidden, or the rule's own error), so the client's next call
// on it fails with it; undeclared events and events without a rule are open to anyone; an
// unsubscribed connection gets no more of the event. Rivet's own access-control suite file runs
// against tests/conformance/actors/access_control.cpp (`make conformance`).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, ENCODING, MODE, suiteTimeout, uniqueKey, useServer, withTimeout } from "../lib/server.mjs";

const T = { timeout: 60_000 };

function nextEvent(conn, name) {
	return new Promise((resolve) => {
		const off = conn.on(name, (payload) => {
			off();
			resolve(payload);
		});
	});
}

// A connection whose subscription was refused is closed by the server; RivetKit's client then
// reconnects and subscribes again, and is refused again, in a tight loop while the listener stays.
// Its dispose() stops that loop at once, but the promise it returns may wait for the close event of
// a socket the loop was opening, which sometimes never comes (no socket reaches the server then).
// So the refused connections are disposed without waiting for more than a moment.
async function disposeRefused(conn) {
	await Promise.race([conn.dispose(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
}

async function rejectsWith(promise, group, code) {
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError || err?.group, `expected a RivetKit error, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		return true;
	});
}

describe(`event access control [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(240_000) }, () => {
	const env = useServer();

	it("events without a rule, declared or not, reach any subscriber", T, env.wrap(async () => {
		const h = env.client.gate.getOrCreate([uniqueKey("open")]);
		const conn = h.connect();
		try {
			const open = nextEvent(conn, "open");
			const undeclared = nextEvent(conn, "undeclared");
			assert.equal(await conn.ping(), "pong");
			await h.publish("open", { n: 1 });
			await h.publish("undeclared", { n: 2 });
			assert.deepEqual(await withTimeout(open, 10_000, "open event"), { n: 1 });
			assert.deepEqual(await withTimeout(undeclared, 10_000, "undeclared event"), { n: 2 });
		} finally {
			await conn.dispose();
		}
	}));

	it("an asynchronous rule admits one connection and refuses another with auth.forbidden", T, env.wrap(async () => {
		const key = uniqueKey("vip");
		const vip = env.client.gate.getOrCreate([key], { params: { user: "vip" } }).connect();
		const bob = env.client.gate.getOrCreate([key], { params: { user: "bob" } }).connect();
		try {
			const got = nextEvent(vip, "vip");
			assert.equal(await withTimeout(vip.ping(), 15_000, "vip ping"), "pong", "the subscription was admitted before this call");
			await env.client.gate.getOrCreate([key]).publish("vip", "for vips");
			assert.equal(await withTimeout(got, 10_000, "vip event"), "for vips");

			const offBob = bob.on("vip", () => assert.fail("a refused connection got the event"));
			await withTimeout(rejectsWith(bob.ping(), "auth", "forbidden"), 15_000, "bob ping");
			offBob();
			// The admitted connection is untouched.
			assert.equal(await vip.ping(), "pong");
		} finally {
			await withTimeout(vip.dispose(), 15_000, "dispose vip");
			await disposeRefused(bob);
		}
	}));

	it("a rule that throws refuses with its own error; one that says false with auth.forbidden", T, env.wrap(async () => {
		const h = env.client.gate.getOrCreate([uniqueKey("broken")]);
		const broken = h.connect();
		const closed = h.connect();
		try {
			const offBroken = broken.on("broken", () => {});
			await withTimeout(rejectsWith(broken.ping(), "user", "rule_failed"), 15_000, "broken ping");
			offBroken();
			const offClosed = closed.on("closed", () => {});
			await withTimeout(rejectsWith(closed.ping(), "auth", "forbidden"), 15_000, "closed ping");
			offClosed();
			assert.equal(await withTimeout(h.ping(), 15_000, "h ping"), "pong", "the actor itself is fine");
		} finally {
			await disposeRefused(broken);
			await disposeRefused(closed);
		}
	}));

	it("an unsubscribed connection gets no more of the event", T, env.wrap(async () => {
		const h = env.client.gate.getOrCreate([uniqueKey("unsub")]);
		const conn = h.connect();
		try {
			let late = 0;
			const first = nextEvent(conn, "open");
			const off = conn.on("undeclared", () => late++);
			assert.equal(await conn.ping(), "pong");
			await h.publish("open", 1);
			assert.equal(await withTimeout(first, 10_000, "first event"), 1);
			off();
			assert.equal(await conn.ping(), "pong", "the unsubscribe was taken before this call");
			const marker = nextEvent(conn, "open");
			await h.publish("undeclared", "too late");
			await h.publish("open", 2);
			// Events of one connection arrive in order: the marker comes after the dropped one.
			assert.equal(await withTimeout(marker, 10_000, "marker event"), 2);
			assert.equal(late, 0);
		} finally {
			await conn.dispose();
		}
	}));
});
