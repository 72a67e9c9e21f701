// Harness for the engine-mode files (integration/engine-*.test.mjs): one Rivet Engine per
// test file (lib/engine.mjs: ephemeral ports, fresh data dir, pool "default" created), fixture
// servers connected to it as envoys, and official clients on the ENGINE's endpoint (the
// engine's gateway tunnels every request to the envoy hosting the actor).
//
// A fixture server in engine mode gets env RIVET_ENDPOINT=<engine endpoint> and
// RIVETKIT_ENGINE_SPAWN=never, and prints `envoy connected to <endpoint>` once connected
// (lib/server.mjs waits for that line). Its log level is info (RIVETKIT_ENGINE_SERVER_LOG_LEVEL
// overrides), so that a failure report shows the link's reconnects and the actors' moves.
// A failing test (wrapped with env.wrap) carries the output of every fixture server started in
// the file and the tail of the engine's logs.
import "./env.mjs";
import { before, after } from "node:test";
import { execFileSync } from "node:child_process";
import {
	READY_TIMEOUT_MS,
	STOP_TIMEOUT_MS,
	createClient,
	disposeClient,
	startServer,
	waitFor,
	withTimeout,
	sleep,
} from "./server.mjs";
import { startEngine, ensurePool, engineBinaryPath } from "./engine.mjs";

/** The engine version these suites are written against (the pinned @rivetkit/engine-cli). */
export const ENGINE_VERSION = "2.3.19";

/** Throws unless the rivet-engine binary in use reports ENGINE_VERSION. */
export function checkEngineVersion(binary = engineBinaryPath()) {
	let out;
	try {
		out = execFileSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
	} catch (err) {
		throw new Error(`${binary} --version failed: ${err.message}`);
	}
	const m = /Rivet (\d+\.\d+\.\d+)/.exec(out);
	if (m?.[1] !== ENGINE_VERSION) {
		throw new Error(
			`${binary} is rivet-engine ${m?.[1] ?? `(unknown: ${JSON.stringify(out.slice(0, 200))})`}, ` +
				`the engine-mode suites need ${ENGINE_VERSION} (tools/install-node-deps.sh, or RIVET_ENGINE_BINARY_PATH)`,
		);
	}
	return m[1];
}

/** Bound on one engine-mode server start (the envoy waits up to 30 s for its link). */
export const ENGINE_READY_TIMEOUT_MS = Math.max(READY_TIMEOUT_MS, 45_000);
/** Bound on starting the engine and creating the pool (engine.mjs retries once on new ports). */
const ENGINE_SETUP_TIMEOUT_MS = 150_000;
const SERVER_LOG_LEVEL = process.env.RIVETKIT_ENGINE_SERVER_LOG_LEVEL || "info";

/** Env for a fixture server that connects to `endpoint` without ever starting an engine. */
export function engineServerEnv(endpoint, extra = {}) {
	return { RIVET_ENDPOINT: endpoint, RIVETKIT_ENGINE_SPAWN: "never", RIVET_LOG_LEVEL: SERVER_LOG_LEVEL, ...extra };
}

/** Appends the output of `servers` ({name, server}) and the engine's log tails to an error. */
export function attachEngineOutput(err, { servers = [], engine } = {}) {
	let text = "";
	for (const { name, server } of servers) {
		text += `\n---- fixture server ${name} output (last 200 lines) ----\n${server.output()}\n---- end of ${name} output ----`;
	}
	if (engine) text += `\n---- engine (${engine.endpoint}) logs ----\n${engine.output(60)}\n---- end of engine logs ----`;
	if (err instanceof Error) {
		try {
			err.message += text;
			// An AssertionError's stack (what the reporter prints) was formatted at construction.
			if (typeof err.stack === "string" && !err.stack.includes(text)) err.stack += text;
			return err;
		} catch {}
	}
	const wrapped = new Error(`${String(err)}${text}`);
	wrapped.cause = err;
	return wrapped;
}

/**
 * Registers before/after hooks on the current describe(): one engine for the suite, and
 * (unless {server:false}) one fixture server connected to it plus one client on the engine.
 *
 * Returns env with:
 *   engine, endpoint (the engine's), server, client
 *   newClient(options)          another client on the engine (disposed in teardown)
 *   startServer({name, env})    another engine-mode fixture server in pool "default"
 *                               (disposed in teardown; its output goes into failure reports)
 *   disposeServer(server)       kill it now (idempotent)
 *   wrap(fn)                    test body wrapper: failures carry servers' and engine's output
 */
export function useEngine({ server: withServer = true, clientOptions = {} } = {}) {
	const env = {
		engine: undefined,
		server: undefined,
		client: undefined,
		clients: [],
		servers: [], // {name, server}
		get endpoint() {
			return env.engine.endpoint;
		},
		newClient(options = {}) {
			const c = createClient({ endpoint: env.engine.endpoint, ...clientOptions, ...options });
			env.clients.push(c);
			return c;
		},
		async startServer({ name, env: extraEnv = {}, ...rest } = {}) {
			const label = name ?? `#${env.servers.length + 1}`;
			try {
				const s = await startServer({
					env: engineServerEnv(env.engine.endpoint, extraEnv),
					readyTimeoutMs: ENGINE_READY_TIMEOUT_MS,
					...rest,
				});
				env.servers.push({ name: label, server: s });
				return s;
			} catch (err) {
				// startServer already put the server's output in the message.
				throw attachEngineOutput(err, { engine: env.engine });
			}
		},
		async disposeServer(s) {
			await s.dispose();
		},
		wrap(fn) {
			return async (t) => {
				try {
					return await fn(t);
				} catch (err) {
					throw attachEngineOutput(err, { servers: env.servers, engine: env.engine });
				}
			};
		},
	};

	before(
		async () => {
			checkEngineVersion();
			env.engine = await withTimeout(startEngine(), ENGINE_SETUP_TIMEOUT_MS, "rivet-engine start");
			try {
				await withTimeout(ensurePool(env.engine.endpoint, "default"), 60_000, "runner config `default`");
				if (withServer) {
					env.server = await env.startServer({ name: "main" });
					env.client = env.newClient();
				}
			} catch (err) {
				throw attachEngineOutput(err, { engine: env.engine });
			}
		},
		{ timeout: ENGINE_SETUP_TIMEOUT_MS + 60_000 + ENGINE_READY_TIMEOUT_MS + STOP_TIMEOUT_MS },
	);
	after(
		async () => {
			const clients = env.clients.splice(0);
			for (const c of clients) await disposeClient(c, 3_000);
			for (const { server } of env.servers.splice(0)) await server.dispose();
			if (env.engine) await env.engine.stop({ hard: true });
		},
		{ timeout: 60_000 },
	);
	return env;
}

/**
 * Retries `fn` (each try bounded by `tryMs`) until it resolves and `accept(value)` holds, for
 * calls that may fail while the system recovers (failover, engine restart). Returns the value;
 * on timeout, the error says what the last try saw.
 */
export async function eventually(fn, { accept = () => true, timeout = 60_000, tryMs = 10_000, interval = 250, what = "call" } = {}) {
	let last = "no try finished";
	let value;
	try {
		await waitFor(
			async () => {
				try {
					value = await withTimeout(Promise.resolve().then(fn), Math.min(tryMs, timeout), what);
				} catch (err) {
					last = `error: ${err?.group ? `${err.group}.${err.code}: ` : ""}${err?.message ?? err}`;
					return false;
				}
				if (accept(value)) return true;
				last = `value: ${JSON.stringify(value)}`;
				return false;
			},
			{ timeout, interval, what },
		);
	} catch (err) {
		err.message += ` (last try: ${last})`;
		throw err;
	}
	return value;
}

/** `fixture-event <event>` lines a fixture server printed so far (its hook log, on stdout). */
export function fixtureEvents(server) {
	const out = [];
	for (const line of server.log.split("\n")) {
		const m = /^\[out\] fixture-event (.*)$/.exec(line);
		if (m) out.push(m[1].trimEnd());
	}
	return out;
}

/** Waits until `server` printed `fixture-event <event>` (after the first `since` events). */
export async function waitServerEvent(server, event, { since = 0, timeout = 30_000 } = {}) {
	await waitFor(() => fixtureEvents(server).slice(since).includes(event), {
		timeout,
		interval: 50,
		what: `fixture-event ${event} from the fixture server`,
	});
}

export { sleep };
