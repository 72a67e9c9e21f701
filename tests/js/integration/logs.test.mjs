// Structured logs (RIVET_LOG_FORMAT=json): every line the server writes to stderr is one JSON
// object with a UTC timestamp, a level and the message; an actor's c.log() lines carry its name,
// key and id (as RivetKit's c.log does) and the caller's own fields, whatever bytes they hold.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { suiteTimeout, uniqueKey, useServer, waitFor } from "../lib/server.mjs";

const T = { timeout: 30_000 };

/** The JSON objects among the server's output lines (the stdout "listening" line is not one). */
function jsonLines(server) {
	const objects = [];
	for (const line of server.output(100_000).split("\n")) {
		const start = line.indexOf("{\"ts\":");
		if (start < 0) continue;
		objects.push(JSON.parse(line.slice(start)));
	}
	return objects;
}

describe("json logs", { timeout: suiteTimeout(120_000) }, () => {
	const env = useServer(undefined, { serverEnv: { RIVET_LOG_FORMAT: "json", RIVET_LOG_LEVEL: "info" } });

	it("c.log() lines carry the actor's name, key and id, and the caller's fields", T, env.wrap(async () => {
		const key = uniqueKey("log");
		const handle = env.client.counter.getOrCreate([key]);
		const actorId = await handle.resolve();
		const marker = `hello ${key}`;
		const detail = 'quote " backslash \\ newline \n tab \t café 😀';
		assert.equal(await handle.logLine(marker, detail), true);
		let line;
		await waitFor(() => (line = jsonLines(env.server).find((l) => l.msg === marker)), {
			what: "the c.log() line in the server's output",
		});
		assert.equal(line.level, "warn");
		assert.match(line.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
		assert.ok(Math.abs(Date.parse(line.ts) - Date.now()) < 10 * 60_000, `ts ${line.ts} is now, in UTC`);
		assert.equal(line.actor, "counter");
		assert.equal(line.actorId, actorId);
		assert.ok(line.key.includes(key), `key field ${line.key} names ${key}`);
		assert.equal(line.detail, detail);
	}));

	it("every stderr line is a JSON object with ts, level and msg", T, env.wrap(async () => {
		await env.client.counter.getOrCreate([uniqueKey("more")]).increment(1);
		const errLines = env.server
			.output(100_000)
			.split("\n")
			.filter((l) => l.startsWith("[err] ") && l.length > "[err] ".length);
		assert.ok(errLines.length >= 2, `stderr lines: ${errLines.length}`);
		for (const l of errLines) {
			const o = JSON.parse(l.slice("[err] ".length));
			assert.equal(typeof o.ts, "string");
			assert.ok(["trace", "debug", "info", "warn", "error", "fatal"].includes(o.level), o.level);
			assert.equal(typeof o.msg, "string");
		}
	}));
});
