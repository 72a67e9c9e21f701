// Storage faults have one outcome (issue: reliability): a full disk fails the writes it cannot
// make with a server error, nothing reported failed becomes durable later (no phantom writes: a
// client that retries does not apply its change twice), the server recovers once space returns,
// and the database stays intact. Local mode only: in engine mode the engine stores actor data.
// The disk is made full with a file size limit on the server process (scripts/).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ENCODING, MODE, localOnly, startServer, fixtureServerPath, createClient, disposeClient, uniqueKey, suiteTimeout } from "../lib/server.mjs";

const WRAPPER = fileURLToPath(new URL("../scripts/with-file-size-limit.sh", import.meta.url));
const T = { timeout: 180_000, skip: localOnly("the engine stores actor data") };

describe(`storage faults [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(400_000) }, () => {
	it("a full disk: failed writes are 5xx, never become durable later, and the server recovers", T, async () => {
		const server = await startServer({
			binary: WRAPPER,
			env: { RIVETKIT_TEST_FSIZE_KB: "400", RIVETKIT_TEST_WRAPPED_BINARY: fixtureServerPath() },
		});
		let client;
		try {
			client = createClient({ endpoint: server.endpoint });
			const key = uniqueKey("full");
			const counter = client.counter.getOrCreate([key]);
			let acked = 0;
			let failures = 0;
			const createErrors = [];
			// Fill the disk: every round writes the counter and creates an actor.
			for (let i = 0; i < 2000 && failures < 10; i++) {
				try {
					acked = await counter.increment(1);
				} catch (err) {
					failures += 1;
					assert.match(`${err.group}.${err.code}`, /^(actor\.state_save_failed|core\.internal_error|storage\..*)$/, err.message);
				}
				try {
					await client.counter.create([uniqueKey(`fill-${i}`)]);
				} catch (err) {
					createErrors.push(err);
				}
			}
			assert.ok(failures >= 10, "the disk filled up");
			assert.ok(acked > 0, "some writes succeeded first");
			for (const err of createErrors) {
				assert.ok(err.statusCode === undefined || err.statusCode >= 500, `a storage fault is the server's: ${err.statusCode} ${err.group}.${err.code}`);
			}
			assert.match(server.output(), /state save failed|request failed: storage\./, "the cause is logged");

			// Space returns.
			execFileSync("prlimit", ["--pid", String(server.child.pid), "--fsize=unlimited:"]);
			assert.equal(await counter.getCount(), acked, "no failed increment became durable");
			assert.equal(await counter.increment(1), acked + 1, "writes work again");
			await disposeClient(client);
			client = undefined;

			// And after a restart, the database is intact and holds exactly what was acknowledged.
			await server.stop();
			const db = new DatabaseSync(join(server.dataDir, "rivetkit.db"));
			try {
				assert.deepEqual(db.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check), ["ok"]);
			} finally {
				db.close();
			}
			await server.start();
			client = createClient({ endpoint: server.endpoint });
			assert.equal(await client.counter.getOrCreate([key]).getCount(), acked + 1);
		} finally {
			if (client) await disposeClient(client);
			await server.dispose();
		}
	});
});
