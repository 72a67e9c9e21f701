// The inspector WebSocket (`/inspector/connect`, core-semantics.md §9) as Rivet's dashboard uses
// it, with the official package's own codec (`rivetkit/inspector/client`): Init on open, requests
// answered by id, live pushes in the order things happened, every protocol version (1-6) and the
// legacy framing, and the refusals (bad version 1002, bad token 1008) — in both modes, through the
// gateway URL the official client gives.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decode as cborDecode, encode as cborEncode } from "cbor-x";
import { TO_CLIENT_VERSIONED, TO_SERVER_VERSIONED, CURRENT_VERSION } from "rivetkit/inspector/client";
import { MODE, suiteTimeout, uniqueKey, useServer, waitFor } from "../lib/server.mjs";
import { inspectorToken } from "../lib/inspector.mjs";

const T = { timeout: 60_000 };
/** The actor's inspector token, read as the dashboard reads it (tests/js/lib/inspector.mjs). */
const tokenOf = (env, actorId) => inspectorToken(MODE === "engine" ? env.engine.endpoint : env.endpoint, actorId);

function socketUrl(gatewayUrl, version) {
	const url = new URL(gatewayUrl);
	url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector/connect`;
	if (version !== undefined) url.searchParams.set("protocol_version", String(version));
	url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
	return url.toString();
}

/** An open inspector socket that collects what it receives (decoded for `version`). */
async function openInspector(gatewayUrl, token, { version = CURRENT_VERSION, legacy = false } = {}) {
	const ws = new WebSocket(socketUrl(gatewayUrl, legacy ? undefined : version), ["rivet", `rivet_inspector_token.${token}`]);
	ws.binaryType = "arraybuffer";
	const received = [];
	const closed = new Promise((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
	ws.addEventListener("message", (e) => {
		const bytes = new Uint8Array(e.data);
		received.push(legacy ? TO_CLIENT_VERSIONED.deserializeWithEmbeddedVersion(bytes) : TO_CLIENT_VERSIONED.deserialize(bytes, version));
	});
	const opened = await Promise.race([
		new Promise((resolve) => ws.addEventListener("open", () => resolve(true))),
		closed.then(() => false),
	]);
	const socket = {
		ws,
		received,
		closed,
		opened,
		send(body) {
			const message = { body };
			ws.send(legacy ? TO_SERVER_VERSIONED.serializeWithEmbeddedVersion(message, version) : TO_SERVER_VERSIONED.serialize(message, version));
		},
		async next(tag, predicate = () => true, what = tag) {
			let found;
			await waitFor(() => (found = received.find((m) => m.body.tag === tag && predicate(m.body.val))) !== undefined, { timeout: 15_000, what });
			received.splice(received.indexOf(found), 1);
			return found.body.val;
		},
		close() {
			ws.close();
		},
	};
	return socket;
}

const decodeData = (buf) => cborDecode(new Uint8Array(buf));
// cbor-x may return a view into a larger pooled buffer: copy it into its own ArrayBuffer.
const cborData = (value) => new Uint8Array(cborEncode(value)).buffer;

describe(`inspector websocket [${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();

	async function counter(key) {
		const handle = env.client.counter.getOrCreate([key]);
		await handle.getCount();
		const actorId = await handle.resolve();
		return { handle, actorId, gatewayUrl: await handle.getGatewayUrl(), token: await tokenOf(env, actorId) };
	}

	it("Init, requests by id, and pushes in order (v6)", T, env.wrap(async () => {
		const a = await counter(uniqueKey("ws-insp"));
		await a.handle.increment(5);
		const s = await openInspector(a.gatewayUrl, a.token);
		assert.ok(s.opened);
		try {
			const init = await s.next("Init");
			assert.deepEqual(decodeData(init.state), { count: 5 });
			assert.equal(init.isStateEnabled, true);
			assert.equal(init.isWorkflowEnabled, false);
			assert.equal(init.isDatabaseEnabled, false);
			assert.equal(init.queueSize, 0n);
			assert.ok(init.rpcs.includes("increment"));
			assert.deepEqual(init.schedules, []);

			// State changes by the actor's own code are pushed.
			await a.handle.increment(2);
			await s.next("StateUpdated", (v) => decodeData(v.state).count === 7, "StateUpdated count 7");

			// A connection that opens and closes is pushed.
			const conn = a.handle.connect();
			await conn.getCount();
			const joined = await s.next("ConnectionsUpdated", (v) => v.connections.length >= 1, "a connection listed");
			const details = decodeData(joined.connections[0].details);
			assert.equal(details.stateEnabled, true);
			assert.equal(typeof details.isHibernatable, "boolean");
			await conn.dispose();
			await s.next("ConnectionsUpdated", (v) => v.connections.length === 0, "the connection gone");

			s.send({ tag: "StateRequest", val: { id: 11n } });
			const state = await s.next("StateResponse");
			assert.equal(state.rid, 11n);
			assert.deepEqual(decodeData(state.state), { count: 7 });

			s.send({ tag: "ActionRequest", val: { id: 12n, name: "increment", args: cborData([3]) } });
			const action = await s.next("ActionResponse");
			assert.equal(action.rid, 12n);
			assert.equal(decodeData(action.output), 10);

			s.send({ tag: "ActionRequest", val: { id: 13n, name: "nope", args: cborData([]) } });
			const missing = await s.next("Error");
			assert.match(missing.message, /nope|not found/i);

			s.send({ tag: "PatchStateRequest", val: { state: cborData({ count: 42 }) } });
			const patched = await s.next("StateUpdated", (v) => decodeData(v.state).count === 42, "StateUpdated 42");
			assert.deepEqual(decodeData(patched.state), { count: 42 });
			assert.equal(await a.handle.getCount(), 42);

			s.send({ tag: "RpcsListRequest", val: { id: 14n } });
			assert.ok((await s.next("RpcsListResponse")).rpcs.includes("getCount"));
			s.send({ tag: "ConnectionsRequest", val: { id: 15n } });
			assert.equal((await s.next("ConnectionsResponse")).rid, 15n);
			s.send({ tag: "WorkflowReplayRequest", val: { id: 16n, entryId: null } });
			assert.equal((await s.next("WorkflowReplayResponse")).isWorkflowEnabled, false);
			s.send({ tag: "TraceQueryRequest", val: { id: 17n, startMs: 0n, endMs: 1n, limit: 10n } });
			assert.equal((await s.next("TraceQueryResponse")).rid, 17n);
			s.send({ tag: "DatabaseSchemaRequest", val: { id: 18n } });
			assert.match((await s.next("Error")).message, /database/i);

			// A frame the protocol cannot read is answered with an Error; the socket stays.
			s.ws.send(new Uint8Array([0xff, 0x01, 0x02]));
			await s.next("Error");
			s.send({ tag: "StateRequest", val: { id: 19n } });
			assert.equal((await s.next("StateResponse")).rid, 19n);
		} finally {
			s.close();
		}
	}));

	it("queue and schedules over the socket; QueueUpdated follows the queue", T, env.wrap(async () => {
		const key = uniqueKey("ws-queue");
		const handle = env.client.queueWorker.getOrCreate([key]);
		await handle.ledgerState();
		const actorId = await handle.resolve();
		const s = await openInspector(await handle.getGatewayUrl(), await tokenOf(env, actorId));
		try {
			const init = await s.next("Init");
			assert.equal(init.isDatabaseEnabled, true);
			await handle.send("jobs", { n: 1 });
			await s.next("QueueUpdated", (v) => v.queueSize === 1n, "QueueUpdated 1");
			s.send({ tag: "QueueRequest", val: { id: 1n, limit: 10n } });
			const q = await s.next("QueueResponse");
			assert.equal(q.status.size, 1n);
			assert.equal(q.status.messages[0].name, "jobs");
			s.send({ tag: "DatabaseSchemaRequest", val: { id: 2n } });
			const schema = decodeData((await s.next("DatabaseSchemaResponse")).schema);
			assert.ok(schema.tables.some((t) => t.table.name === "ledger"), JSON.stringify(schema));
			s.send({ tag: "DatabaseTableRowsRequest", val: { id: 3n, table: "ledger", limit: 10n, offset: 0n } });
			assert.deepEqual(decodeData((await s.next("DatabaseTableRowsResponse")).result), []);
			s.send({ tag: "SchedulesRequest", val: { id: 4n } });
			assert.deepEqual((await s.next("SchedulesResponse")).schedules, []);
			s.send({ tag: "ScheduleDeleteRequest", val: { id: 5n, scheduleId: "none", kind: "at" } });
			assert.equal((await s.next("ScheduleDeleteResponse")).deleted, false);
		} finally {
			s.close();
		}
	}));

	it("every version 1-5 and the legacy framing get Init and answers; bad versions and tokens are refused", T, env.wrap(async () => {
		const a = await counter(uniqueKey("ws-versions"));
		await a.handle.increment(4);
		for (const version of [1, 2, 3, 4, 5]) {
			const s = await openInspector(a.gatewayUrl, a.token, { version });
			try {
				const init = await s.next("Init", () => true, `Init v${version}`);
				assert.deepEqual(decodeData(init.state), { count: 4 }, `v${version}`);
				s.send({ tag: "StateRequest", val: { id: 7n } });
				assert.equal((await s.next("StateResponse")).rid, 7n, `v${version}`);
			} finally {
				s.close();
			}
		}
		const legacy = await openInspector(a.gatewayUrl, a.token, { version: 5, legacy: true });
		try {
			await legacy.next("Init");
			legacy.send({ tag: "RpcsListRequest", val: { id: 9n } });
			assert.equal((await legacy.next("RpcsListResponse")).rid, 9n);
		} finally {
			legacy.close();
		}

		for (const bad of ["0", "7", "wat", ""]) {
			const ws = new WebSocket(socketUrl(a.gatewayUrl, bad), ["rivet", `rivet_inspector_token.${a.token}`]);
			const closed = await new Promise((resolve) => ws.addEventListener("close", (e) => resolve(e)));
			assert.equal(closed.code, 1002, `protocol_version=${bad}`);
			assert.equal(closed.reason, "inspector.invalid_protocol_version");
		}
		for (const token of ["wrong", ""]) {
			const ws = new WebSocket(socketUrl(a.gatewayUrl, CURRENT_VERSION), token ? ["rivet", `rivet_inspector_token.${token}`] : ["rivet"]);
			const closed = await new Promise((resolve) => ws.addEventListener("close", (e) => resolve(e)));
			assert.equal(closed.code, 1008, `token ${token}`);
			assert.equal(closed.reason, "inspector.unauthorized");
		}
	}));
});
