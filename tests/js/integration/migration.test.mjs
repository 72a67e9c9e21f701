// A data directory written by the last release of local-mode schema version 3 (typed tables for
// the runtime's records: tests/data/local-v3/README.md) is migrated on first open and serves its
// actors unchanged to the official client: same ids, state, input, schedules and alarms.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ENCODING, MODE, localOnly, suiteTimeout, waitFor, withServers } from "../lib/server.mjs";

const T = { timeout: 120_000 };
const saved = join(dirname(fileURLToPath(import.meta.url)), "../../data/local-v3");
const ids = {
	counter: "zh7kjtlchf0njntvihfu9scvozll00",
	withInput: "8l3gfhbtceavmcov9fntf8az3esl00",
	sleepy: "nqdh4r93ndvxm94v8xy46h3y3vsl00",
};

function copyOfSaved() {
	const dir = mkdtempSync(join(tmpdir(), "rivetkit-migration-"));
	cpSync(join(saved, "rivetkit.db"), join(dir, "rivetkit.db"));
	return dir;
}

describe(`migration of a version 3 data directory [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000), skip: localOnly("a local data directory") }, () => {
	it("serves the saved actors by key and id, with their state, input and schedules", T, async (t) => {
		const dataDir = copyOfSaved();
		t.after(() => rmSync(dataDir, { recursive: true, force: true }));
		await withServers(async (ctx) => {
			const server = await ctx.start({ dataDir });
			const client = ctx.client(server);
			const counter = client.counter.getOrCreate(["migrated-counter"]);
			assert.equal(await counter.resolve(), ids.counter);
			assert.equal(await counter.getCount(), 42);
			assert.equal(await counter.increment(1), 43);

			const withInput = client.withInput.getOrCreate(["migrated-input"]);
			assert.equal(await withInput.resolve(), ids.withInput);
			assert.deepStrictEqual(await withInput.getInput(), { name: "from v3", list: [1, 2, 3] });

			const sleepy = client.sleepy.getForId(ids.sleepy);
			const schedules = await sleepy.listSchedules();
			assert.deepStrictEqual(schedules.map((s) => [s.at, s.action]), [[4102444800000, "increment"], [4102444800001, "increment"]]);
			// A schedule due now runs on the migrated actor, next to the two kept ones.
			const before = await sleepy.getCount();
			await sleepy.scheduleIncrement(1, 5);
			await waitFor(async () => (await sleepy.getCount()) === before + 5, { timeout: 30_000, what: "the new schedule's run" });
			assert.equal((await sleepy.listSchedules()).length, 2);

			// Restarted: the migrated file opens as it is now, and what was written since is there.
			await server.restart();
			const again = ctx.client(server);
			assert.equal(await again.counter.getForId(ids.counter).getCount(), 43);
			assert.equal(await again.sleepy.getForId(ids.sleepy).getCount(), before + 5);
			assert.equal((await again.sleepy.getForId(ids.sleepy).listSchedules()).length, 2);
		})(t);
	});
});
