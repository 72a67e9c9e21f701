// SQLite per actor (c.db(), include/rivetkit/database.hpp) through the official client, in both
// modes and every encoding: migrations before the hooks, rows and state committed in one turn,
// typed rows, named parameters, SQLite's value types, errors (caught in the actor, or thrown to
// the client without SQLite's message), transactions (commit, rollback on exception, other calls'
// statements waiting), the sandbox (ATTACH, durability pragmas, extensions), a statement past the
// action timeout, a result too large, an actor without a database, a failing migration, the
// database across sleep, SIGKILL right after acknowledged writes and in the middle of concurrent
// turns small and large (a large one spans several engine requests: the commit journal), and
// destroy deleting it. The actors: dbProbe, dbSlow, dbless, dbBadMigration
// (tests/conformance/actors/db.cpp).
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

async function rejectsWith(promise, group, code, check = () => {}) {
	await assert.rejects(promise, (err) => {
		assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
		assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
		check(err);
		return true;
	});
}

describe(`actor database [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(600_000) }, () => {
	const env = useServer(undefined, { binary: driverFixturePath(), serverEnv: { RIVET_LOG_LEVEL: "debug" } });

	it("migrations run before the hooks; rows and state of one action commit together", T, env.wrap(async () => {
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-basic")]);
		assert.deepEqual(await h.add("alpha"), { id: 1, count: 1 });
		assert.deepEqual(await h.add("beta"), { id: 2, count: 2 });
		assert.equal(await h.addScored("gamma", 2.5), 3);
		assert.deepEqual(await h.items(), [
			{ id: 1, name: "alpha", score: null },
			{ id: 2, name: "beta", score: null },
			{ id: 3, name: "gamma", score: 2.5 },
		]);
		// on_wake inserted into a table of migration 2: the database was ready before it ran.
		assert.deepEqual(await h.counts(), { rows: 3, wakes: 1, state: 2 });
	}));

	it("SQLite's values: integers, reals, text with NUL bytes, blobs, null; several statements", T, env.wrap(async () => {
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-values")]);
		const r = await h.sql("SELECT 42 AS i, 1.5 AS r, ? AS t, x'00ff10' AS b, NULL AS n, length(?1) AS len, hex(?1) AS hx", ["a\u0000b"]);
		assert.equal(r.ok, true);
		assert.deepEqual(r.columns, ["i", "r", "t", "b", "n", "len", "hx"]);
		const row = r.rows[0];
		assert.equal(row.i, 42);
		assert.equal(row.r, 1.5);
		assert.equal(row.t, "a\u0000b");
		assert.deepEqual(Array.from(row.b), [0, 255, 16]);
		assert.equal(row.n, null);
		assert.equal(row.hx, "610062");
		const multi = await h.sql("CREATE TABLE m (v); INSERT INTO m VALUES (1), (2); SELECT sum(v) AS s FROM m", []);
		assert.deepEqual(multi.rows, [{ s: 3 }]);
		const changed = await h.sql("UPDATE m SET v = v + 1", []);
		assert.equal(changed.changes, 2);
	}));

	it("errors: RivetKit's sqlite group with a code per kind; uncaught, the client sees the code without SQLite's message", T, env.wrap(async () => {
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-errors")]);
		await h.add("same");
		const dup = await h.sql("INSERT INTO items (name) VALUES ('same')", []);
		assert.equal(dup.ok, false);
		assert.equal(`${dup.group}.${dup.code}`, "sqlite.constraint_violation");
		assert.match(dup.message, /UNIQUE/);
		const syntax = await h.sql("SELEC 1", []);
		assert.equal(`${syntax.group}.${syntax.code}`, "sqlite.sql_error");
		assert.match(syntax.message, /syntax error/);
		const missing = await h.sql("SELECT ?", []);
		assert.equal(missing.code, "invalid_parameter");
		// Not public: the client learns the group and code, not SQLite's message.
		await rejectsWith(h.sqlThrows("SELECT * FROM nowhere"), "sqlite", "sql_error", (err) => {
			assert.equal(err.message, "An internal error occurred");
		});
		assert.deepEqual(await h.counts(), { rows: 1, wakes: 1, state: 1 }, "the actor is fine afterwards");
	}));

	it("transactions: committed, or rolled back when the body throws; other calls wait for them", T, env.wrap(async () => {
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-tx")]);
		assert.equal(await h.pair("kept", false), 2);
		await rejectsWith(h.pair("dropped", true), "user", "pair_refused");
		assert.deepEqual(await h.names(), ["kept", "kept-2"]);
		// While slowPair holds its transaction (300 ms between its inserts), add's statement waits.
		const slow = h.slowPair("tx");
		await new Promise((r) => setTimeout(r, 50));
		await h.add("between");
		await slow;
		assert.deepEqual(await h.names(), ["kept", "kept-2", "tx-a", "tx-b", "between"]);
	}));

	it("the sandbox: ATTACH, extensions and durability pragmas are refused with a clear message", T, env.wrap(async () => {
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-sandbox")]);
		for (const sql of [
			"ATTACH DATABASE '/tmp/elsewhere.db' AS other",
			"PRAGMA journal_mode=OFF",
			"PRAGMA synchronous=OFF",
			"PRAGMA locking_mode=NORMAL",
			"SELECT load_extension('/tmp/evil.so')",
		]) {
			const r = await h.sql(sql, []);
			assert.equal(r.ok, false, sql);
			assert.equal(r.group, "sqlite", sql);
			assert.ok(r.message.length > 10, `${sql}: ${r.message}`);
		}
		assert.match((await h.sql("ATTACH DATABASE ':memory:' AS m", [])).message, /ATTACH/);
		assert.match((await h.sql("PRAGMA synchronous=OFF", [])).message, /synchronous/);
		assert.deepEqual((await h.sql("PRAGMA journal_mode", [])).rows, [{ journal_mode: "memory" }]);
		assert.equal((await h.sql("PRAGMA integrity_check", [])).rows[0].integrity_check, "ok");
		assert.equal((await h.sql("VACUUM", [])).ok, true, "VACUUM works");
	}));

	it("a statement past the action timeout is interrupted; a result too large fails cleanly", T, env.wrap(async () => {
		const slow = env.client.dbSlow.getOrCreate([uniqueKey("db-slow")]);
		await assert.rejects(slow.spin(), (err) => {
			assert.ok(err instanceof ActorError, String(err));
			assert.equal(`${err.group}.${err.code}`, "actor.action_timed_out");
			return true;
		});
		assert.equal(await slow.ping(), "pong", "the actor still answers");
		const h = env.client.dbProbe.getOrCreate([uniqueKey("db-big")]);
		const big = await h.sql(
			"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 70000) SELECT x, zeroblob(1000) FROM c",
			[],
		);
		assert.equal(`${big.group}.${big.code}`, "sqlite.result_too_large");
	}));

	it("an actor without a database gets database.not_enabled, naming the database", T, env.wrap(async () => {
		await rejectsWith(env.client.dbless.getOrCreate([uniqueKey("db-none")]).touch(), "database", "not_enabled", (err) => {
			assert.match(err.message, /database/);
		});
	}));

	it("a failing migration fails the start; the actor's next start fails the same way", T, env.wrap(async () => {
		const h = env.client.dbBadMigration.getOrCreate([uniqueKey("db-badmig")]);
		await assert.rejects(withTimeout(h.ping(), 60_000, "ping of an actor whose migration fails"));
		await assert.rejects(withTimeout(h.ping(), 60_000, "ping again"));
	}));

	it("a database many times its page cache is written, survives sleep and reads back whole", T, env.wrap(async () => {
		// dbProbe keeps 64 pages (256 KiB) in memory; this database is ~2.5 MB, beyond SQLite's
		// own cache too, so the scan after the wake reads every page through the eviction.
		const key = [uniqueKey("db-large")];
		const h = env.client.dbProbe.getOrCreate(key);
		const id = await h.resolve();
		const ROWS = 300; // ~600 KB a turn: in engine mode a journaled commit of ~170 pages
		for (let i = 0; i < 4; i++) {
			assert.equal(await withTimeout(h.addMany(`big${i}`, ROWS), 90_000, `addMany #${i}`), (i + 1) * ROWS);
		}
		const stops = () => env.server.log.split(`actor stopped actor_id=${id}`).length - 1;
		const before = stops();
		await h.goToSleep();
		await waitFor(() => stops() > before, { timeout: 30_000, interval: 50, what: "the actor to sleep" });
		const sum = await withTimeout(h.sql("SELECT count(*) AS n, sum(length(name)) AS bytes FROM items", []), 60_000, "a full scan");
		assert.equal(sum.rows[0].n, 4 * ROWS);
		assert.ok(sum.rows[0].bytes > 4 * ROWS * 2000, `${sum.rows[0].bytes} bytes of names`);
		assert.equal((await h.sql("PRAGMA integrity_check", [])).rows[0].integrity_check, "ok");
		assert.deepEqual(await h.counts(), { rows: 4 * ROWS, wakes: 2, state: 4 * ROWS });
	}));

	it("migration steps written as code read before they write; one that throws is rolled back, fails the start with its message, and applies at the next start", T, env.wrap(async () => {
		const h = env.client.dbCodeMigration.getOrCreate([uniqueKey("db-code-mig")]);
		// Step 3 refuses its first attempt in this process. In engine mode the engine starts the
		// actor again at once, so the call may already see the second attempt.
		let notes;
		try {
			notes = await withTimeout(h.notes(), 60_000, "notes");
		} catch (err) {
			assert.match(String(err?.message), /Migration 3 failed.*step 3 refuses its first attempt/, `error: ${err?.stack ?? err}`);
			notes = await withTimeout(h.notes(), 60_000, "notes after the failed start");
		}
		assert.deepEqual(notes, ["step 2 saw 0 notes", "named parameter", "step 3"], "step 3's first attempt left nothing");
	}));

	it("the database survives sleep; destroy deletes it", T, env.wrap(async () => {
		const key = [uniqueKey("db-sleep")];
		const h = env.client.dbProbe.getOrCreate(key);
		const id = await h.resolve();
		await h.add("before-sleep");
		const stops = () => env.server.log.split(`actor stopped actor_id=${id}`).length - 1;
		const before = stops();
		await h.goToSleep();
		await waitFor(() => stops() > before, { timeout: 30_000, interval: 50, what: "the actor to sleep" });
		assert.deepEqual(await h.counts(), { rows: 1, wakes: 2, state: 1 });
		assert.deepEqual(await h.names(), ["before-sleep"]);
		await h.destroy();
		await waitFor(
			async () => {
				try {
					return (await env.client.dbProbe.getOrCreate(key).resolve()) !== id;
				} catch {
					return false;
				}
			},
			{ timeout: 30_000, interval: 100, what: "a fresh actor for the key" },
		);
		assert.deepEqual(await env.client.dbProbe.getOrCreate(key).counts(), { rows: 0, wakes: 1, state: 0 });
	}));
});

describe(`actor database across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	it("SIGKILL right after N acknowledged inserts: every row is there, with its state", T, withServers(async (ctx) => {
		const N = 30;
		const server = await ctx.start({ binary: driverFixturePath() });
		let client = ctx.client(server);
		const key = [uniqueKey("db-kill")];
		const h = client.dbProbe.getOrCreate(key);
		for (let i = 1; i <= N; i++) assert.equal((await h.add(`row-${i}`)).count, i);
		server.kill(); // SIGKILL right after the last reply
		await disposeClient(client, 3_000);

		await server.restart({ hard: true });
		client = ctx.client(server);
		const again = client.dbProbe.getOrCreate(key);
		const counts = await withTimeout(again.counts(), 60_000, "counts after the restart");
		assert.equal(counts.rows, N);
		assert.equal(counts.state, N);
		assert.equal((await again.sql("PRAGMA integrity_check", [])).rows[0].integrity_check, "ok");
	}));

	it("SIGKILL in the middle of concurrent large turns (hundreds of pages each): rows and state agree", T, withServers(async (ctx) => {
		const server = await ctx.start({ binary: driverFixturePath() });
		const H = 3;
		const ROWS = 150; // ~300 KB of rows and their index: more than one engine request
		const clients = Array.from({ length: H }, () => ctx.client(server));
		const key = [uniqueKey("db-kill-large")];
		await clients[0].dbProbe.getOrCreate(key).counts();
		let acked = 0;
		let killed = false;
		const KILL_AT = 5;
		const writers = Promise.all(
			clients.map(async (c, w) => {
				const h = c.dbProbe.getOrCreate(key);
				for (let i = 0; i < 40 && !killed; i++) {
					try {
						await h.addMany(`w${w}-${i}`, ROWS);
						acked += ROWS;
						if (acked === KILL_AT * ROWS) {
							killed = true;
							server.kill(); // the other writers' turns are being committed
						}
					} catch {
						return;
					}
				}
			}),
		);
		await waitFor(() => killed, { timeout: 120_000, what: "the kill" });
		await server.restart({ hard: true });
		await withTimeout(writers, 90_000, "the writers to settle");
		for (const c of clients) await disposeClient(c, 3_000);
		const client = ctx.client(server);
		const h = client.dbProbe.getOrCreate(key);
		const counts = await withTimeout(h.counts(), 60_000, "counts after the restart");
		assert.equal(counts.rows, counts.state, "rows and state committed together");
		assert.equal(counts.rows % ROWS, 0, "no turn was cut in half");
		assert.ok(counts.rows >= acked, `${counts.rows} rows, ${acked} acknowledged`);
		assert.equal((await h.sql("PRAGMA integrity_check", [])).rows[0].integrity_check, "ok");
	}));

	it("SIGKILL in the middle of concurrent inserts: rows and state agree after the restart", T, withServers(async (ctx) => {
		const server = await ctx.start({ binary: driverFixturePath() });
		const H = 4;
		const clients = Array.from({ length: H }, () => ctx.client(server));
		const key = [uniqueKey("db-kill-mid")];
		await clients[0].dbProbe.getOrCreate(key).counts(); // created: later failures are lost writes
		let acked = 0;
		let killed = false;
		const KILL_AT = 40;
		const writers = Promise.all(
			clients.map(async (c, w) => {
				const h = c.dbProbe.getOrCreate(key);
				for (let i = 0; i < 100 && !killed; i++) {
					try {
						await h.add(`w${w}-${i}`);
						acked++;
						if (acked === KILL_AT) {
							killed = true;
							server.kill(); // inserts of the other clients are in flight
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
		const counts = await withTimeout(client.dbProbe.getOrCreate(key).counts(), 60_000, "counts after the restart");
		assert.equal(counts.rows, counts.state, "rows and state committed together");
		assert.ok(counts.rows >= acked, `${counts.rows} rows, ${acked} acknowledged`);
	}));
});
