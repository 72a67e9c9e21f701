// The inspector's HTTP routes (core-semantics.md §9, docs/inspector.md) as a script or Rivet's
// dashboard uses them: through the gateway URL the official client gives
// (`handle.getGatewayUrl()`), with the actor's own token read from its KV the way the dashboard
// reads it (`GET /actors/{id}/kv/keys/Aw==`: this server in local mode, the engine's API in
// engine mode). Every write is durable before its answer (checked across a SIGKILL), bad input
// is a clear error that changes nothing, and the server runs without the test token.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MODE, createClient, disposeClient, localOnly, suiteTimeout, uniqueKey, useServer, waitFor } from "../lib/server.mjs";
import { inspectorToken } from "../lib/inspector.mjs";

const T = { timeout: 60_000 };

/** The actor's inspector token, read as the dashboard reads it (tests/js/lib/inspector.mjs). */
const readToken = (env, actorId) => inspectorToken(MODE === "engine" ? env.engine.endpoint : env.endpoint, actorId);

function inspectorUrl(gatewayUrl, path, query = {}) {
	const url = new URL(gatewayUrl);
	url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector${path}`;
	for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
	return url.toString();
}

/** One inspector request: {status, body, headers}. */
async function call(gatewayUrl, token, method, path, { body, query, headers = {} } = {}) {
	const res = await fetch(inspectorUrl(gatewayUrl, path, query), {
		method,
		headers: {
			...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
			...(body !== undefined ? { "content-type": "application/json" } : {}),
			...headers,
		},
		body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
	});
	const text = await res.text();
	let parsed;
	try {
		parsed = JSON.parse(text);
	} catch {
		parsed = text;
	}
	return { status: res.status, body: parsed, headers: res.headers };
}

// An action each fixture actor answers without side effects: the actor has started (its token
// is written with its creation, at its first start).
const WARM = { counter: "getCount", guarded: "whoami", queueWorker: "ledgerState" };

/** An actor of `name` that has started, with its gateway URL, id and token. */
async function inspectable(env, client, name, key, opts) {
	const handle = client[name].getOrCreate([key], opts);
	await handle[WARM[name]]();
	const actorId = await handle.resolve();
	const gatewayUrl = await handle.getGatewayUrl();
	const token = await readToken(env, actorId);
	return { handle, actorId, gatewayUrl, token };
}

function assertError(res, status, group, code) {
	assert.equal(res.status, status, JSON.stringify(res.body));
	assert.equal(res.body.group, group, JSON.stringify(res.body));
	assert.equal(res.body.code, code, JSON.stringify(res.body));
	assert.equal(typeof res.body.message, "string");
	assert.ok("metadata" in res.body, "RivetKit's error shape has metadata");
}

describe(`inspector [${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();

	it("each actor has its own token in KV [3]; only it opens the inspector (Bearer, any case)", T, env.wrap(async () => {
		const keyA = uniqueKey("insp-a");
		const a = await inspectable(env, env.client, "counter", keyA);
		const b = await inspectable(env, env.client, "counter", uniqueKey("insp-b"));
		await a.handle.increment(5);
		assert.match(a.token, /^[A-Za-z0-9_-]{43}$/, "32 random bytes, base64url without padding");
		assert.notEqual(a.token, b.token);

		const ok = await call(a.gatewayUrl, a.token, "GET", "/state");
		assert.equal(ok.status, 200);
		assert.deepEqual(ok.body, { state: { count: 5 }, isStateEnabled: true });
		assert.equal(ok.headers.get("referrer-policy"), "no-referrer");
		assert.match(ok.headers.get("content-type"), /application\/json/);
		const anyCase = await call(a.gatewayUrl, undefined, "GET", "/state", { headers: { authorization: `bEaReR   ${a.token}` } });
		assert.equal(anyCase.status, 200);

		for (const res of [
			await call(a.gatewayUrl, undefined, "GET", "/state"),
			await call(a.gatewayUrl, b.token, "GET", "/state"),
			await call(a.gatewayUrl, "token", "GET", "/state"),
			await call(a.gatewayUrl, `${a.token}x`, "GET", "/state"),
			await call(a.gatewayUrl, undefined, "GET", "/state", { headers: { authorization: a.token } }),
			await call(a.gatewayUrl, b.token, "PATCH", "/state", { body: { state: { count: 1 } } }),
		]) {
			assertError(res, 401, "inspector", "unauthorized");
			assert.equal(res.headers.get("referrer-policy"), "no-referrer");
		}
		assert.equal(await a.handle.getCount(), 5, "a refused patch changed nothing");
		// The token is kept: the same after the actor's process restarts.
		await env.server.restart({ hard: true, samePort: true });
		const client = createClient({ endpoint: env.endpoint });
		try {
			assert.equal(await readToken(env, a.actorId), a.token);
			const gatewayUrl = await client.counter.getOrCreate([keyA]).getGatewayUrl();
			const again = await call(gatewayUrl, a.token, "GET", "/state");
			assert.equal(again.status, 200, JSON.stringify(again.body));
			assert.deepEqual(again.body.state, { count: 5 });
		} finally {
			await disposeClient(client);
		}
	}));

	it("PATCH /state is durable before its answer (SIGKILL right after); bad patches change nothing", T, env.wrap(async () => {
		const key = uniqueKey("insp-patch");
		const a = await inspectable(env, env.client, "counter", key);
		await a.handle.increment(2);
		const patched = await call(a.gatewayUrl, a.token, "PATCH", "/state", { body: { state: { count: 42 } } });
		assert.equal(patched.status, 200, JSON.stringify(patched.body));
		assert.deepEqual(patched.body, { ok: true });
		await env.server.restart({ hard: true, samePort: true });
		const client = createClient({ endpoint: env.endpoint });
		try {
			const handle = client.counter.getOrCreate([key]);
			assert.equal(await handle.getCount(), 42, "the patched state survived a SIGKILL");
			const gatewayUrl = await handle.getGatewayUrl();
			for (const [body, what] of [
				[{ state: { count: "many" } }, "a state that does not fit the state type"],
				[{ state: "nope" }, "not an object"],
				[{ notState: 1 }, "no state"],
				["{ not json", "malformed JSON"],
				["[1,2]", "not an object body"],
			]) {
				const res = await call(gatewayUrl, a.token, "PATCH", "/state", { body });
				assertError(res, 400, "actor", "invalid_request");
				assert.equal(await handle.getCount(), 42, `${what} changed nothing`);
			}
		} finally {
			await disposeClient(client);
		}
	}));

	it("connections, rpcs, summary, traces, workflow history; unknown routes are 404", T, env.wrap(async () => {
		const a = await inspectable(env, env.client, "counter", uniqueKey("insp-conns"));
		await a.handle.increment(7);
		const conn = a.handle.connect();
		try {
			await conn.getCount();
			let listed;
			await waitFor(async () => {
				listed = await call(a.gatewayUrl, a.token, "GET", "/connections");
				return listed.body.connections?.some((c) => c.details.params === null || c.details.params === undefined);
			}, { what: "the connection listed" });
			assert.equal(listed.status, 200);
			const c = listed.body.connections.find((x) => typeof x.id === "string" && x.id.length > 0);
			assert.ok(c, JSON.stringify(listed.body));
			assert.equal(c.type, null);
			assert.equal(c.details.type, null);
			assert.equal(c.details.stateEnabled, true);
			assert.equal(typeof c.details.subscriptions, "number");
			assert.equal(typeof c.details.isHibernatable, "boolean");

			const rpcs = await call(a.gatewayUrl, a.token, "GET", "/rpcs");
			assert.deepEqual(rpcs.body.rpcs, [...rpcs.body.rpcs].sort());
			for (const name of ["increment", "getCount", "echo", "fail"]) assert.ok(rpcs.body.rpcs.includes(name), name);

			const summary = await call(a.gatewayUrl, a.token, "GET", "/summary");
			assert.equal(summary.status, 200);
			assert.deepEqual(summary.body.state, { count: 7 });
			assert.equal(summary.body.isStateEnabled, true);
			assert.equal(summary.body.isDatabaseEnabled, false);
			assert.equal(summary.body.isWorkflowEnabled, false);
			assert.equal(summary.body.workflowHistory, null);
			assert.equal(summary.body.queueSize, 0);
			assert.ok(Array.isArray(summary.body.connections) && summary.body.connections.length >= 1);
			assert.deepEqual(summary.body.rpcs, rpcs.body.rpcs);

			assert.deepEqual((await call(a.gatewayUrl, a.token, "GET", "/traces", { query: { startMs: "0", limit: "5" } })).body, { otlp: [], clamped: false });
			const history = await call(a.gatewayUrl, a.token, "GET", "/workflow-history");
			assert.deepEqual(history.body, { history: null, workflowState: null, isWorkflowEnabled: false });
			const replay = await call(a.gatewayUrl, a.token, "POST", "/workflow/replay", { body: {} });
			assert.equal(replay.body.isWorkflowEnabled, false);

			assertError(await call(a.gatewayUrl, a.token, "GET", "/nope"), 404, "actor", "not_found");
			assertError(await call(a.gatewayUrl, a.token, "DELETE", "/state"), 404, "actor", "not_found");
			// A database route on an actor without one: RivetKit's "not enabled".
			assertError(await call(a.gatewayUrl, a.token, "GET", "/database/schema"), 400, "database", "not_enabled");
		} finally {
			await conn.dispose();
		}
	}));

	it("POST /action/{name}: args or properties, hooks of a short-lived connection, errors as RivetKit's", T, env.wrap(async () => {
		const a = await inspectable(env, env.client, "counter", uniqueKey("insp-action"));
		await a.handle.increment(10);
		const ran = await call(a.gatewayUrl, a.token, "POST", "/action/increment", { body: { args: [5] } });
		assert.equal(ran.status, 200, JSON.stringify(ran.body));
		assert.deepEqual(ran.body, { output: 15 });
		assert.equal(await a.handle.getCount(), 15);
		assert.deepEqual((await call(a.gatewayUrl, a.token, "POST", "/action/echo", { body: { properties: { x: 1 } } })).body, { output: [{ x: 1 }] });
		assert.deepEqual((await call(a.gatewayUrl, a.token, "POST", "/action/getCount", { body: {} })).body, { output: 15 });

		assertError(await call(a.gatewayUrl, a.token, "POST", "/action/nope", { body: { args: [] } }), 404, "actor", "action_not_found");
		const failed = await call(a.gatewayUrl, a.token, "POST", "/action/fail", { body: { args: [] } });
		assertError(failed, 400, "user", "my_code");
		assert.deepEqual(failed.body.metadata, { a: 1 });
		assertError(await call(a.gatewayUrl, a.token, "POST", "/action/increment", { body: { args: [1], properties: {} } }), 400, "actor", "invalid_request");
		assertError(await call(a.gatewayUrl, a.token, "POST", "/action/increment", { body: { properties: [1] } }), 400, "actor", "invalid_request");
		assertError(await call(a.gatewayUrl, a.token, "POST", "/action/increment", { body: "{oops" }), 400, "actor", "invalid_request");
		assert.equal(await a.handle.getCount(), 15, "refused calls ran nothing");

		// The connection hooks run: `guarded` refuses connections without its token param.
		const g = await inspectable(env, env.client, "guarded", uniqueKey("insp-guarded"), { params: { token: "ok" } });
		const refused = await call(g.gatewayUrl, g.token, "POST", "/action/whoami", { body: { args: [] } });
		assert.equal(refused.body.code, "forbidden_token", JSON.stringify(refused.body));
		const allowed = await call(g.gatewayUrl, g.token, "POST", "/action/whoami", {
			body: { args: [] },
			headers: { "x-rivet-conn-params": JSON.stringify({ token: "ok", user: "inspector" }) },
		});
		assert.deepEqual(allowed.body, { output: "inspector" });
		const stateless = await call(g.gatewayUrl, g.token, "GET", "/state");
		assert.equal(stateless.status, 200);
		assert.equal(stateless.body.isStateEnabled, false);
		assertError(await call(g.gatewayUrl, g.token, "PATCH", "/state", { body: { state: {} } }), 400, "actor", "state_not_enabled");
	}));

	it("queue: list with limit, send (durable, any name), reset; database: schema, rows, execute", T, env.wrap(async () => {
		const key = uniqueKey("insp-queue");
		const w = await inspectable(env, env.client, "queueWorker", key);
		const sent = await call(w.gatewayUrl, w.token, "POST", "/queue", { body: { name: "jobs", body: { n: 1 } } });
		assert.equal(sent.status, 200, JSON.stringify(sent.body));
		assert.equal(typeof sent.body.id, "string");
		assert.equal(sent.body.name, "jobs");
		assert.equal(typeof sent.body.createdAtMs, "number");
		await call(w.gatewayUrl, w.token, "POST", "/queue", { body: { name: "late", body: null } });
		await call(w.gatewayUrl, w.token, "POST", "/queue", { body: { name: "jobs", body: [1, 2] } });
		const listed = await call(w.gatewayUrl, w.token, "GET", "/queue", { query: { limit: "2" } });
		assert.equal(listed.body.size, 3);
		assert.equal(listed.body.truncated, true);
		assert.equal(listed.body.maxSize > 0, true);
		assert.deepEqual(listed.body.messages.map((m) => m.name), ["jobs", "late"]);
		assert.equal(listed.body.messages[0].id, sent.body.id);
		assert.equal((await call(w.gatewayUrl, w.token, "GET", "/queue", { query: { limit: "-3" } })).body.messages.length, 3, "a bad limit is the default");
		// The actor's own code sees what the inspector sent.
		const taken = await w.handle.take("jobs");
		assert.deepEqual(taken.body, { n: 1 }, JSON.stringify(taken));

		assertError(await call(w.gatewayUrl, w.token, "POST", "/queue", { body: { name: "", body: 1 } }), 400, "actor", "invalid_request");
		assertError(await call(w.gatewayUrl, w.token, "POST", "/queue", { body: "{ not valid json" }), 400, "actor", "invalid_request");

		const reset = await call(w.gatewayUrl, w.token, "DELETE", "/queue");
		assert.deepEqual(reset.body, {});
		assert.equal((await call(w.gatewayUrl, w.token, "GET", "/queue")).body.size, 0);
		const after = await call(w.gatewayUrl, w.token, "POST", "/queue", { body: { name: "jobs", body: 3 } });
		assert.ok(BigInt(after.body.id) > BigInt(sent.body.id), "ids go on after a reset");

		// Database.
		const schema = await call(w.gatewayUrl, w.token, "GET", "/database/schema");
		assert.equal(schema.status, 200, JSON.stringify(schema.body));
		const ledger = schema.body.schema.tables.find((t) => t.table.name === "ledger");
		assert.deepEqual(ledger.table, { schema: "main", name: "ledger", type: "table" });
		assert.deepEqual(ledger.columns.map((c) => c.name), ["id", "amount"]);
		assert.equal(ledger.records, 0);
		assert.ok(!schema.body.schema.tables.some((t) => t.table.name.startsWith("sqlite_")));

		const inserted = await call(w.gatewayUrl, w.token, "POST", "/database/execute", { body: { sql: "INSERT INTO ledger (amount) VALUES (?), (?)", args: [5, 7] } });
		assert.deepEqual(inserted.body, { rows: [] });
		const named = await call(w.gatewayUrl, w.token, "POST", "/database/execute", { body: { sql: "SELECT amount FROM ledger WHERE amount = :amount", properties: { amount: 7 } } });
		assert.deepEqual(named.body, { rows: [{ amount: 7 }] });
		const rows = await call(w.gatewayUrl, w.token, "GET", "/database/rows", { query: { table: "ledger", limit: "1", offset: "1" } });
		assert.deepEqual(rows.body, { rows: [{ id: 2, amount: 7 }] });
		const huge = await call(w.gatewayUrl, w.token, "GET", "/database/rows", { query: { table: "ledger", limit: "100000000000000000000" } });
		assert.equal(huge.body.rows.length, 2, "a huge limit is clamped");
		assert.equal((await w.handle.ledgerState()).rows, 2, "the actor's own code sees the rows");

		// Rows written through the inspector are durable before the answer.
		await call(w.gatewayUrl, w.token, "POST", "/database/execute", { body: { sql: "INSERT INTO ledger (amount) VALUES (100)" } });
		await env.server.restart({ hard: true, samePort: true });
		const client = createClient({ endpoint: env.endpoint });
		try {
			const handle = client.queueWorker.getOrCreate([key]);
			const gatewayUrl = await handle.getGatewayUrl();
			const sum = await call(gatewayUrl, w.token, "POST", "/database/execute", { body: { sql: "SELECT sum(amount) AS total FROM ledger" } });
			assert.deepEqual(sum.body, { rows: [{ total: 112 }] });
			assert.equal((await call(gatewayUrl, w.token, "GET", "/queue")).body.size, 1, "the queue send after the reset survived");

			for (const [body, what] of [
				[{ sql: "SELEKT 1" }, "a syntax error"],
				[{ sql: "INSERT INTO ledger (amount) VALUES (NULL)" }, "a constraint"],
				[{ sql: "ATTACH DATABASE '/tmp/inspector-escape.db' AS x" }, "a file outside the actor"],
				[{ sql: "SELECT ?", args: [1], properties: { a: 1 } }, "args and properties"],
				[{ sql: "   " }, "no sql"],
			]) {
				const res = await call(gatewayUrl, w.token, "POST", "/database/execute", { body });
				assert.ok(res.status === 400 || res.status === 500, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
				assert.equal(typeof res.body.group, "string", what);
				assert.equal(typeof res.body.code, "string", what);
			}
			assertError(await call(gatewayUrl, w.token, "GET", "/database/rows"), 400, "actor", "invalid_request");
			const missing = await call(gatewayUrl, w.token, "GET", "/database/rows", { query: { table: 'no"such' } });
			assert.equal(missing.body.group, "sqlite", JSON.stringify(missing.body));
			const total = await call(gatewayUrl, w.token, "POST", "/database/execute", { body: { sql: "SELECT count(*) AS n FROM ledger" } });
			assert.deepEqual(total.body, { rows: [{ n: 3 }] }, "failed statements wrote nothing");
		} finally {
			await disposeClient(client);
		}
	}));

	it("a sleeping actor is woken for an inspector request and sleeps again after it", T, env.wrap(async () => {
		const key = uniqueKey("insp-sleepy");
		const h = env.client.sleepy.getOrCreate([key]);
		await h.increment(1);
		const actorId = await h.resolve();
		const token = await readToken(env, actorId);
		const gatewayUrl = await h.getGatewayUrl();
		await h.goToSleep();
		// Polled more slowly than the actor's 1 s sleep timeout, so the polls themselves do not keep
		// it awake: each one finds it asleep or about to sleep.
		const sleepsSeen = async () => {
			const res = await call(gatewayUrl, token, "GET", "/state");
			assert.equal(res.status, 200, JSON.stringify(res.body));
			return res.body.state.sleeps;
		};
		let first;
		await waitFor(async () => (first = await sleepsSeen()) >= 1, { timeout: 30_000, interval: 1500, what: "woken by the inspector after its sleep" });
		await waitFor(async () => (await sleepsSeen()) > first, { timeout: 60_000, interval: 4000, what: "asleep again after the inspector's request" });
		assert.equal(await h.getCount(), 1);
	}));

	it("local: RIVET_INSPECTOR_DISABLE=1 serves no inspector; _RIVET_TEST_INSPECTOR_TOKEN overrides every token", { ...T, skip: localOnly("one server per setting") }, env.wrap(async () => {
		const off = await env.startServer({ name: "off", env: { RIVET_INSPECTOR_DISABLE: "1" } });
		const offClient = createClient({ endpoint: off.endpoint });
		const override = await env.startServer({ name: "override", env: { _RIVET_TEST_INSPECTOR_TOKEN: "sekret" } });
		const overrideClient = createClient({ endpoint: override.endpoint });
		try {
			const h = offClient.counter.getOrCreate([uniqueKey("insp-off")]);
			await h.increment(1);
			const res = await call(await h.getGatewayUrl(), "anything", "GET", "/state");
			assertError(res, 404, "inspector", "disabled");

			const o = overrideClient.counter.getOrCreate([uniqueKey("insp-override")]);
			await o.increment(3);
			const url = await o.getGatewayUrl();
			assert.deepEqual((await call(url, "sekret", "GET", "/state")).body.state, { count: 3 });
			assertError(await call(url, "token", "GET", "/state"), 401, "inspector", "unauthorized");
			// No per-actor token is kept while the override is set (as in RivetKit).
			const kv = await fetch(`${override.endpoint}/actors/${await o.resolve()}/kv/keys/${encodeURIComponent("Aw==")}`);
			assert.equal(kv.status, 404);
		} finally {
			await disposeClient(offClient);
			await disposeClient(overrideClient);
		}
	}));
});
