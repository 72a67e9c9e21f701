// Actor KV (c.kv(), include/rivetkit/kv.hpp) through the official client, in both modes and
// every encoding: the whole API on text and binary keys, byte order, ranges with reverse and
// limit, RivetKit's limits and errors (nothing half-written), KV across sleep, restart, SIGKILL
// right after an acknowledged write (state and KV written in one turn stay together), and
// destroy wiping it. The actors: kvActor (the suite's) and kvProbe (tests/conformance/actors/kv.cpp).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
	ActorError,
	ENCODING,
	MODE,
	disposeClient,
	driverFixturePath,
	suiteTimeout,
	uniqueKey,
	useServer,
	waitFor,
	withServers,
	withTimeout,
} from "../lib/server.mjs";

const T = { timeout: 120_000 };

async function rejectsWith(promise, group, code) {
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		assert.notEqual(err.message, "An internal error occurred", "kv errors are public");
		return true;
	});
}

const bytes = (...b) => new Uint8Array(b);
const arr = (u8) => Array.from(u8 ?? []);

describe(`actor KV [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath(), serverEnv: { RIVET_LOG_LEVEL: "debug" } });

	it("the suite's kvActor: text, ranges, reverse + limit, range delete, array buffers", T, env.wrap(async () => {
		const h = env.client.kvActor.getOrCreate([uniqueKey("kv-suite")]);
		assert.equal(await h.putText("greeting", "hello"), true);
		assert.equal(await h.getText("greeting"), "hello");
		assert.equal(await h.getText("missing"), null);
		for (const [k, v] of [["a", "alpha"], ["b", "bravo"], ["c", "charlie"], ["d", "delta"]]) await h.putText(k, v);
		assert.deepEqual(await h.listTextRange("b", "d"), [{ key: "b", value: "bravo" }, { key: "c", value: "charlie" }]);
		assert.deepEqual(await h.listTextRange("a", "d", { reverse: true, limit: 2 }), [
			{ key: "c", value: "charlie" },
			{ key: "b", value: "bravo" },
		]);
		assert.equal(await h.deleteTextRange("b", "d"), true);
		assert.deepEqual((await h.listText("")).map((e) => e.key), ["a", "d", "greeting"]);
		assert.deepEqual(await h.roundtripArrayBuffer("bytes", [0, 4, 8, 15, 255]), [0, 4, 8, 15, 255]);
	}));

	it("get, put, remove, batches and lists: order by bytes, prefixes, limits, overwrite", T, env.wrap(async () => {
		const h = env.client.kvProbe.getOrCreate([uniqueKey("kv-api")]);
		await h.batchPut([["user:2", "two"], ["user:10", "ten"], ["user:1", "one"], ["other", "x"], ["user:1", "uno"]]);
		assert.deepEqual(await h.batchGet(["user:1", "nope", "user:10", "user:1"]), ["uno", null, "ten", "uno"]);
		assert.deepEqual(await h.list("user:", null), [
			{ key: "user:1", value: "uno" },
			{ key: "user:10", value: "ten" },
			{ key: "user:2", value: "two" },
		]);
		assert.deepEqual((await h.list("user:", { reverse: true, limit: 2 })).map((e) => e.key), ["user:2", "user:10"]);
		assert.deepEqual(await h.list("user:", { limit: 0 }), []);
		assert.deepEqual((await h.list("", null)).map((e) => e.key), ["other", "user:1", "user:10", "user:2"]);
		assert.deepEqual(await h.listRange("user:1", "user:1", null), [], "an empty range");
		assert.deepEqual((await h.listRange("user:10", "user:3", null)).map((e) => e.key), ["user:10", "user:2"]);
		await h.remove("user:10");
		await h.remove("never-there");
		assert.equal(await h.get("user:10"), null);
		await h.batchRemove(["user:1", "other"]);
		assert.deepEqual((await h.list("", null)).map((e) => e.key), ["user:2"]);
		await h.removeRange("a", "z");
		assert.deepEqual(await h.list("", null), []);
		await h.put("", "the empty key");
		assert.equal(await h.get(""), "the empty key");
		await h.put("unicode-ключ-🔑", "значение");
		assert.equal(await h.get("unicode-ключ-🔑"), "значение");
	}));

	it("binary keys and values, ordered by their bytes (0x00 and 0xff included)", T, env.wrap(async () => {
		const h = env.client.kvProbe.getOrCreate([uniqueKey("kv-bin")]);
		await h.putBytes(bytes(1, 0xff), bytes(0, 1, 2));
		await h.putBytes(bytes(1, 0), bytes(0xff));
		await h.putBytes(bytes(1), bytes());
		await h.putBytes(bytes(1, 0, 0), bytes(7));
		await h.putBytes(bytes(2), bytes(9));
		assert.deepEqual(arr(await h.getBytes(bytes(1, 0xff))), [0, 1, 2]);
		assert.deepEqual(arr(await h.getBytes(bytes(1))), [], "an empty value is a value");
		assert.equal(await h.getBytes(bytes(3)), null);
		const listed = (await h.listBytes(bytes(1), null)).map(([k, v]) => [arr(k), arr(v)]);
		assert.deepEqual(listed, [
			[[1], []],
			[[1, 0], [0xff]],
			[[1, 0, 0], [7]],
			[[1, 0xff], [0, 1, 2]],
		]);
		const rev = (await h.listBytes(bytes(1), { reverse: true, limit: 3 })).map(([k]) => arr(k));
		assert.deepEqual(rev, [[1, 0xff], [1, 0, 0], [1, 0]]);
	}));

	it("limits and bad input: clear kv.* errors, and nothing of a refused call is written", T, env.wrap(async () => {
		const h = env.client.kvProbe.getOrCreate([uniqueKey("kv-limits")]);
		const ok = "k".repeat(2045); // within the key limit in both modes
		await h.put(ok, "fits");
		assert.equal(await h.get(ok), "fits");
		await rejectsWith(h.put("k".repeat(2048), "v"), "kv", "key_too_large");
		await rejectsWith(h.get("k".repeat(2048)), "kv", "key_too_large");
		await h.putRepeated("big", 128 * 1024);
		assert.equal(await h.sizeOf("big"), 128 * 1024);
		await rejectsWith(h.putRepeated("too-big", 128 * 1024 + 1), "kv", "value_too_large");
		assert.equal(await h.sizeOf("too-big"), -1);
		// One bad entry refuses the whole batch.
		await rejectsWith(h.batchPut([["b1", "x"], ["k".repeat(3000), "y"], ["b2", "z"]]), "kv", "key_too_large");
		assert.deepEqual(await h.batchGet(["b1", "b2"]), [null, null]);
		await rejectsWith(h.batchPutRepeated("many:", 16385, 1), "kv", "batch_too_large");
		assert.deepEqual(await h.list("many:", { limit: 1 }), []);
		await rejectsWith(h.listRange("b", "a", null), "kv", "invalid_range");
		await rejectsWith(h.removeRange("b", "a"), "kv", "invalid_range");
		await rejectsWith(h.list("", { limit: -1 }), "kv", "invalid_limit");
		await rejectsWith(h.list("", { limit: 2 ** 32 }), "kv", "invalid_limit");
		// The actor is fine afterwards.
		await h.put("after", "ok");
		assert.equal(await h.get("after"), "ok");
	}));

	it("large batches: 2,000 entries and 3 MiB in one call (split to the engine's limits in engine mode)", T, env.wrap(async () => {
		const h = env.client.kvProbe.getOrCreate([uniqueKey("kv-large")]);
		await h.batchPutRepeated("e:", 2000, 1500);
		const all = await h.listSizes("e:", null);
		assert.equal(all.length, 2000);
		assert.equal(all[0].key, "e:0");
		assert.equal(all.at(-1).key, "e:999");
		assert.ok(all.every((e) => e.size === 1500));
		const rev = await h.listSizes("e:", { reverse: true, limit: 20000 });
		assert.equal(rev.length, 2000);
		assert.equal(rev[0].key, "e:999");
		await h.removeRange("e:", "e;");
		assert.deepEqual(await h.list("e:", null), []);
	}));

	it("KV survives sleep; state and KV written in one turn agree", T, env.wrap(async () => {
		const h = env.client.kvProbe.getOrCreate([uniqueKey("kv-sleep")]);
		const id = await h.resolve();
		assert.equal(await h.increment(5), 5);
		await h.put("note", "before sleep");
		const stops = () => env.server.log.split(`actor stopped actor_id=${id}`).length - 1;
		const before = stops();
		await h.triggerSleep();
		await waitFor(() => stops() > before, { timeout: 30_000, interval: 50, what: "the actor to sleep" });
		assert.equal(await h.get("note"), "before sleep");
		assert.equal(await h.getCount(), 5);
		assert.equal(await h.get("count"), "5");
	}));

	it("destroy deletes the actor's KV: a new actor with the same key starts empty", T, env.wrap(async () => {
		const key = [uniqueKey("kv-destroy")];
		const h = env.client.kvProbe.getOrCreate(key);
		const id = await h.resolve();
		await h.put("left", "behind");
		await h.destroySelf();
		await waitFor(
			async () => {
				try {
					return (await env.client.kvProbe.getOrCreate(key).resolve()) !== id;
				} catch {
					return false;
				}
			},
			{ timeout: 30_000, interval: 100, what: "a fresh actor for the key" },
		);
		assert.equal(await env.client.kvProbe.getOrCreate(key).get("left"), null);
	}));
});

describe(`actor KV across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	it("SIGKILL right after N acknowledged state + KV writes: both are there, and agree", T, withServers(async (ctx) => {
		const N = 25;
		const server = await ctx.start({ binary: driverFixturePath() });
		let client = ctx.client(server);
		const key = [uniqueKey("kv-kill")];
		const h = client.kvProbe.getOrCreate(key);
		await h.put("first", "written");
		for (let i = 1; i <= N; i++) assert.equal(await h.increment(1), i);
		server.kill(); // SIGKILL right after the last reply
		await disposeClient(client, 3_000);

		await server.restart({ hard: true });
		client = ctx.client(server);
		const again = client.kvProbe.getOrCreate(key);
		assert.equal(await withTimeout(again.getCount(), 60_000, "getCount after the restart"), N);
		assert.equal(await again.get("count"), String(N));
		assert.equal(await again.get("first"), "written");
	}));

	it("SIGKILL in the middle of concurrent state + KV writes: after the restart state and KV agree (both or neither)", T, withServers(async (ctx) => {
		const server = await ctx.start({ binary: driverFixturePath() });
		const H = 4;
		const clients = Array.from({ length: H }, () => ctx.client(server));
		const key = [uniqueKey("kv-kill-mid")];
		await clients[0].kvProbe.getOrCreate(key).getCount(); // created: later failures are lost writes
		let acked = 0;
		let killed = false;
		const KILL_AT = 40;
		const writers = Promise.all(
			clients.map(async (c) => {
				const h = c.kvProbe.getOrCreate(key);
				for (let i = 0; i < 100 && !killed; i++) {
					try {
						await h.increment(1);
						acked++;
						if (acked === KILL_AT) {
							killed = true;
							server.kill(); // writes of the other clients are in flight
						}
					} catch {
						return; // the server is gone
					}
				}
			}),
		);
		await waitFor(() => killed, { timeout: 60_000, what: "the kill" });
		// Engine mode: the gateway holds the calls in flight at the kill until the actor runs again,
		// so the restart comes before they settle.
		await server.restart({ hard: true });
		await withTimeout(writers, 90_000, "the writers to settle");
		for (const c of clients) await disposeClient(c, 3_000);
		const client = ctx.client(server);
		const h = client.kvProbe.getOrCreate(key);
		const count = await withTimeout(h.getCount(), 60_000, "getCount after the restart");
		assert.ok(count >= KILL_AT, `count ${count} < acknowledged ${KILL_AT}`);
		assert.equal(await h.get("count"), String(count), "the KV write of every durable state change is there, and none beyond");
	}));
});