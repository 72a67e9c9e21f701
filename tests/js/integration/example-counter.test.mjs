// The counter example (examples/counter, the `make run` server) with the official client, as
// the README's quickstart uses it: increment, getCount, newCount events, and an increment that
// would overflow its int64 count, which is a clean user error and not a crashed server.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ActorError, ENCODING, MODE, suiteTimeout, uniqueKey, useServer, waitFor } from "../lib/server.mjs";
import { examplePath, isUserError } from "../lib/example.mjs";

const T = { timeout: 30_000 };

describe(`example counter [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(180_000) }, () => {
	const env = useServer(undefined, { binary: examplePath("RIVETKIT_EXAMPLE_COUNTER") });

	it("increment(5) -> 5, getCount() -> 5, and connections get newCount", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("quickstart")]);
		assert.equal(await h.increment(5), 5);
		assert.equal(await h.getCount(), 5);
		const conn = h.connect();
		try {
			const seen = [];
			conn.on("newCount", (n) => seen.push(n));
			assert.equal(await conn.increment(2), 7);
			await waitFor(() => seen.includes(7), { what: "newCount 7" });
		} finally {
			await conn.dispose();
		}
	}));

	it("increment(INT64_MAX) twice -> the second is ActorError user/count_overflow; the server stays up", T, env.wrap(async () => {
		const MAX = 9223372036854775807n;
		const h = env.client.counter.getOrCreate([uniqueKey("overflow")]);
		assert.equal(Number(await h.increment(MAX)), Number(MAX));
		await assert.rejects(h.increment(MAX), (err) => isUserError(err, "count_overflow"));
		await assert.rejects(h.increment(-MAX - 1n - MAX), (err) => err instanceof ActorError);  // not an int64
		assert.equal(Number(await h.getCount()), Number(MAX));
		assert.ok(env.server.running, "the server is still running");
		assert.equal(await env.client.counter.getOrCreate([uniqueKey("after")]).increment(1), 1);
	}));
});
