// Stateless actions through the official client (HTTP POST /action/<name>,
// query gateway for getOrCreate handles). client-protocol.md §5.2, §6.3, §7;
// core-semantics.md §3.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, uniqueKey, ActorError } from "../lib/server.mjs";
import { normalize } from "../lib/wire.mjs";

const T = { timeout: 30_000 };

function assertActorError(err, group, code, message) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.constructor?.name}: ${err?.stack ?? err}`);
	assert.equal(err.group, group, `group (error: ${err.message})`);
	assert.equal(err.code, code, `code (error: ${err.message})`);
	if (message !== undefined) assert.equal(err.message, message);
	return true;
}

describe(`actions [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(240_000) }, () => {
	const env = useServer();

	it("increment(5) -> 5, increment(2) -> 7, getCount() -> 7", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate(["k"]);
		assert.equal(await h.increment(5), 5);
		assert.equal(await h.increment(2), 7);
		assert.equal(await h.getCount(), 7);
		// A second handle on the same key reaches the same actor.
		assert.equal(await env.client.counter.getOrCreate(["k"]).getCount(), 7);
		// The long form of an action call.
		assert.equal(await h.action({ name: "getCount", args: [] }), 7);
	}));

	it("separate keys are separate actors", T, env.wrap(async () => {
		const a = env.client.counter.getOrCreate([uniqueKey("sep-a")]);
		const b = env.client.counter.getOrCreate([uniqueKey("sep-b")]);
		assert.equal(await a.increment(1), 1);
		assert.equal(await b.increment(10), 10);
		assert.equal(await a.increment(1), 2);
		assert.equal(await b.getCount(), 10);
		assert.equal(await a.getCount(), 2);
		const [idA, idB] = [await a.resolve(), await b.resolve()];
		assert.equal(typeof idA, "string");
		assert.ok(idA.length > 0);
		assert.notEqual(idA, idB);
	}));

	it("multi-part keys are distinct from their joined forms", T, env.wrap(async () => {
		const k = uniqueKey("mp");
		const ab = env.client.counter.getOrCreate([k, "b"]);
		const a = env.client.counter.getOrCreate([k]);
		assert.equal(await ab.increment(3), 3);
		assert.equal(await a.getCount(), 0);
		assert.equal(await env.client.counter.getOrCreate([k, "b"]).getCount(), 3);
	}));

	it("a string key is the same as a one-element key array", T, env.wrap(async () => {
		const k = uniqueKey("str");
		assert.equal(await env.client.counter.getOrCreate(k).increment(4), 4);
		assert.equal(await env.client.counter.getOrCreate([k]).getCount(), 4);
	}));

	const echoCases = [
		["string", "hello"],
		["empty string", ""],
		["unicode string", "héllo wörld ✓ 日本語 🎉"],
		["zero", 0],
		["positive int", 42],
		["negative int", -17],
		["int 2^31-1", 2 ** 31 - 1],
		["float", 1.5],
		["negative float", -2.25],
		["null", null],
		["true", true],
		["false", false],
		["empty array", []],
		["array", [1, "two", [3], { four: 4.5 }, null, true]],
		["empty object", {}],
		["nested object", { a: { b: [1, { c: "d" }], e: null }, f: "g", h: [[], {}], i: false }],
		["bigint 1n", 1n],
		["negative bigint", -5n],
		["Uint8Array", new Uint8Array([1, 2, 3, 0, 255])],
		["empty Uint8Array", new Uint8Array([])],
	];

	for (const [label, value] of echoCases) {
		it(`echo round-trips ${label}`, T, env.wrap(async () => {
			const h = env.client.counter.getOrCreate(["echo"]);
			const out = await h.echo(value);
			assert.ok(Array.isArray(out), `echo returns the array of its arguments, got ${typeof out}`);
			assert.deepStrictEqual(normalize(out), normalize([value]));
			if (typeof value === "bigint") assert.equal(typeof out[0], "bigint");
			if (typeof value === "number") assert.equal(typeof out[0], "number");
			if (value instanceof Uint8Array) assert.ok(out[0] instanceof Uint8Array, "bytes come back as a Uint8Array");
		}));
	}

	it("echo round-trips many arguments in one call", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate(["echo"]);
		const args = [1, "two", [3], { four: 4.5 }, null, true, 1n, new Uint8Array([9, 8])];
		const out = await h.echo(...args);
		assert.deepStrictEqual(normalize(out), normalize(args));
		assert.deepStrictEqual(await h.echo(), [], "no arguments -> empty array");
	}));

	it("echo keeps large integer-valued numbers as numbers (not bigints)", T, env.wrap(async () => {
		// client-protocol.md §7.2: cbor-x writes integer-valued numbers >= 2^32 as
		// float64; a server that rewrites them as 0x1b integers makes the client see bigints.
		const h = env.client.counter.getOrCreate(["echo"]);
		for (const v of [2 ** 32, 2 ** 40 + 1, Number.MAX_SAFE_INTEGER, -(2 ** 33)]) {
			const [out] = await h.echo(v);
			assert.equal(typeof out, "number", `${v} came back as ${typeof out}`);
			assert.equal(out, v);
		}
	}));

	it(
		"echo round-trips a user array that looks like a compat tag",
		{ ...T, skip: ENCODING === "cbor" ? "cbor transport sends args without the compat escape (§7.2); the client itself throws on '$x'" : false },
		env.wrap(async () => {
			// §7.1: ["$x",1] is escaped to ["$$x",1] on the wire and revived by the client.
			const h = env.client.counter.getOrCreate(["echo"]);
			const out = await h.echo(["$x", 1], ["$BigInt-ish", "no"]);
			assert.deepStrictEqual(out, [["$x", 1], ["$BigInt-ish", "no"]]);
		}),
	);

	it("fail() -> ActorError user/my_code with message and metadata", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate(["errors"]);
		await assert.rejects(h.fail(), (err) => {
			assertActorError(err, "user", "my_code", "this action always fails");
			assert.deepStrictEqual(err.metadata, { a: 1 });
			return true;
		});
		// The actor is still usable after a user error.
		assert.equal(await h.increment(1), 1);
	}));

	it("increment past INT64_MAX or below INT64_MIN -> ActorError user/count_overflow; the actor stays up", T, env.wrap(async () => {
		// The count is an int64 and the amount comes from the client: the sum is checked
		// instead of overflowing (undefined behaviour; UBSan aborts the server).
		const MAX = 9223372036854775807n;
		const h = env.client.counter.getOrCreate([uniqueKey("overflow")]);
		assert.equal(Number(await h.increment(MAX)), Number(MAX));
		for (const amount of [MAX, 1]) {
			await assert.rejects(h.increment(amount), (err) =>
				assertActorError(err, "user", "count_overflow", "increment would overflow the count (a 64-bit integer)"),
			);
		}
		assert.equal(Number(await h.getCount()), Number(MAX), "a refused increment changes nothing");
		assert.equal(await h.increment(-MAX), 0);
		assert.equal(Number(await h.increment(-MAX - 1n)), Number(-MAX - 1n));
		await assert.rejects(h.increment(-1), (err) => assertActorError(err, "user", "count_overflow"));
		assert.equal(Number(await h.getCount()), Number(-MAX - 1n));
		// The server is still up for everyone else.
		assert.equal(await env.client.counter.getOrCreate([uniqueKey("after-overflow")]).increment(1), 1);
	}));

	it("unknown action -> ActorError actor/action_not_found", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate(["errors"]);
		await assert.rejects(h.action({ name: "nope", args: [] }), (err) => assertActorError(err, "actor", "action_not_found"));
		await assert.rejects(h.doesNotExist(1, 2), (err) => assertActorError(err, "actor", "action_not_found"));
		assert.equal(typeof (await h.getCount()), "number");
	}));

	it("concurrent actions on one actor all succeed with a consistent count", T, env.wrap(async () => {
		const key = [uniqueKey("conc")];
		const handles = [0, 1, 2, 3].map(() => env.client.counter.getOrCreate(key));
		const N = 40;
		const results = await Promise.all(
			Array.from({ length: N }, (_, i) => handles[i % handles.length].increment(1)),
		);
		// Each increment saw a distinct count: 1..N in some order.
		assert.deepStrictEqual([...results].sort((x, y) => x - y), Array.from({ length: N }, (_, i) => i + 1));
		assert.equal(await handles[0].getCount(), N);
	}));

	it("concurrent slow and fast actions interleave (actions run concurrently)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("slowfast")]);
		let fastDone = false;
		const slow = h.slow(3000).then((v) => {
			// The fast calls were issued after the slow one and finish while it waits (3 s is a wide margin, not a measured bound).
			return { v, fastDoneFirst: fastDone };
		});
		await h.increment(1);
		await h.increment(1);
		fastDone = true;
		const r = await slow;
		assert.equal(r.v, "done");
		assert.equal(r.fastDoneFirst, true, "fast actions were not blocked behind slow(3000)");
		assert.equal(await h.getCount(), 2);
	}));

	it("big(n) returns a string of n characters", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate(["big"]);
		assert.equal(await h.big(0), "");
		const s = await h.big(100_000);
		assert.equal(s.length, 100_000);
		assert.match(s, /^x+$/);
	}));

	it("getForId and getOrCreate handles address the same actor", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("byid")]);
		await h.increment(3);
		const id = await h.resolve();
		const byId = env.client.counter.getForId(id);
		assert.equal(await byId.getCount(), 3);
		assert.equal(await byId.increment(1), 4);
		assert.equal(await h.getCount(), 4);
		assert.equal(await byId.resolve(), id);
	}));
});
