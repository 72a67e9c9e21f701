// Harness: start the rivetkit-cpp fixture server in local or engine mode, create
// the official client, and keep everything bounded.
//
// The fixture binary comes from env RIVETKIT_FIXTURE_SERVER. It is started as
//   <bin> --host 127.0.0.1 --port 0 --data-dir <dir>
// and must print `listening on http://HOST:PORT` on stdout or stderr once ready.
//
// Mode (env RIVETKIT_MODE, default local):
// - local: the fixture server is the endpoint (server.endpoint = http://HOST:PORT).
// - engine: one real rivet-engine 2.3.19 per test file (lib/engine.mjs: ephemeral ports,
//   fresh data dir, pool "default"), started on first use and stopped after the file's
//   last test. Fixture servers get RIVET_ENDPOINT=<engine> and RIVETKIT_ENGINE_SPAWN=never
//   and print `envoy connected to <engine endpoint>` instead: server.endpoint is then the
//   engine's (clients talk to the engine's gateway) and server.port is undefined.
//   Disposing an engine-mode server stops it gracefully (SIGTERM, SIGKILL after the bound),
//   so that the engine does not keep later actors for a dead envoy.
// useServer() / withServers() / startFixture() follow the mode; startServer() is the raw
// spawn (the caller gives the environment). A server's output is kept in a buffer and shown
// only when something fails, with the tail of the engine's logs in engine mode.

import "./env.mjs"; // must come first: quiets the client's logger before it loads
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, accessSync, constants as fsConstants } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient as createRivetClient } from "rivetkit/client";
import { execFileSync } from "node:child_process";
import { before, after, beforeEach, afterEach } from "node:test";
import { startEngine, ensurePool, engineBinaryPath } from "./engine.mjs";

const testHooks = { before, after, beforeEach, afterEach };

export { ActorError } from "rivetkit/client";

/** Encoding under test: json | cbor | bare (default bare, like the client). */
export const ENCODING = (() => {
	const e = (process.env.RIVETKIT_ENCODING ?? "bare").trim().toLowerCase();
	if (!["json", "cbor", "bare"].includes(e)) {
		throw new Error(`RIVETKIT_ENCODING must be json, cbor or bare (got ${JSON.stringify(e)})`);
	}
	return e;
})();

/** Mode under test: local (the process is the endpoint) | engine (an envoy of a rivet-engine). */
export const MODE = (() => {
	const m = (process.env.RIVETKIT_MODE ?? "local").trim().toLowerCase();
	if (!["local", "engine"].includes(m)) {
		throw new Error(`RIVETKIT_MODE must be local or engine (got ${JSON.stringify(m)})`);
	}
	return m;
})();

/**
 * For `skip`: false in local mode, `engine mode: <reason>` in engine mode. Only for tests
 * about something rivetkit-cpp does not have in engine mode (its own listening socket).
 */
export function localOnly(reason) {
	return MODE === "engine" ? `engine mode: ${reason}` : false;
}

export const READY_TIMEOUT_MS = Number(process.env.RIVETKIT_READY_TIMEOUT_MS ?? 20_000);
export const STOP_TIMEOUT_MS = Number(process.env.RIVETKIT_STOP_TIMEOUT_MS ?? 10_000);
const MAX_LOG_BYTES = 2 * 1024 * 1024;
const LISTEN_RE = /listening on http:\/\/([\d.]+):(\d+)/;
const ENVOY_RE = /envoy connected to (https?:\/\/[^\s]+)/;

const liveChildren = new Set();
process.on("exit", () => {
	for (const child of liveChildren) {
		try {
			child.kill("SIGKILL");
		} catch {}
	}
});

export function fixtureServerPath() {
	const bin = process.env.RIVETKIT_FIXTURE_SERVER;
	if (!bin) {
		throw new Error(
			"RIVETKIT_FIXTURE_SERVER is not set: it must point at the rivetkit_fixture_server binary " +
				"(ctest sets it to $<TARGET_FILE:rivetkit_fixture_server>)",
		);
	}
	if (!existsSync(bin)) {
		throw new Error(`RIVETKIT_FIXTURE_SERVER=${bin} does not exist (build the rivetkit_fixture_server target)`);
	}
	try {
		accessSync(bin, fsConstants.X_OK);
	} catch {
		throw new Error(`RIVETKIT_FIXTURE_SERVER=${bin} is not executable`);
	}
	return bin;
}

/** Resolves after ms; never used to assert on timing, only to pace bounded loops. */
/**
 * The driver-suite fixture (rivetkit_driver_fixture: the actors of Rivet's own test suite,
 * tests/conformance), from env RIVETKIT_DRIVER_FIXTURE (ctest sets it). Pass it as
 * useServer(..., {binary}) to run a file against those actors.
 */
export function driverFixturePath() {
	const bin = process.env.RIVETKIT_DRIVER_FIXTURE;
	if (!bin || !existsSync(bin)) {
		throw new Error(
			`RIVETKIT_DRIVER_FIXTURE=${bin ?? ""} does not name the built rivetkit_driver_fixture ` +
				"(ctest sets it to $<TARGET_FILE:rivetkit_driver_fixture>)",
		);
	}
	return bin;
}

export function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Races a promise against a bound; rejects with a clear message when the bound is hit. */
export async function withTimeout(promise, ms, what) {
	let timer;
	const timeout = new Promise((_, reject) => {
		timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
	});
	try {
		return await Promise.race([promise, timeout]);
	} finally {
		clearTimeout(timer);
	}
}

/** Polls `predicate` until it returns a truthy value (returned) or the bound is hit. */
export async function waitFor(predicate, { timeout = 10_000, interval = 20, what = "condition" } = {}) {
	const deadline = Date.now() + timeout;
	for (;;) {
		const value = await predicate();
		if (value) return value;
		if (Date.now() >= deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
		await sleep(interval);
	}
}

let keyCounter = 0;
/** A key part unique within this process (tests in one file share a server). */
export function uniqueKey(prefix = "k") {
	keyCounter += 1;
	return `${prefix}-${process.pid}-${keyCounter}`;
}

class FixtureServer {
	constructor({ dataDir, ownsDataDir, host, extraArgs, env, readyTimeoutMs = READY_TIMEOUT_MS, engine, binary }) {
		this.readyTimeoutMs = readyTimeoutMs;
		/** The executable (default: RIVETKIT_FIXTURE_SERVER). */
		this.binary = binary;
		/** The engine this server is an envoy of (started by the harness), or undefined. */
		this.engine = engine;
		this.dataDir = dataDir;
		this.ownsDataDir = ownsDataDir;
		this.host = host;
		this.extraArgs = extraArgs;
		this.env = env;
		this.child = undefined;
		this.endpoint = undefined;
		this.port = undefined;
		this.log = "";
		this.generation = 0; // how many times the process was started
		this.exitInfo = undefined;
		this.exited = undefined;
	}

	#append(prefix, chunk) {
		this.log += chunk
			.toString("utf8")
			.split(/(?<=\n)/)
			.map((line) => `${prefix}${line}`)
			.join("");
		if (this.log.length > MAX_LOG_BYTES) this.log = this.log.slice(-MAX_LOG_BYTES);
	}

	/** Last `lines` lines of the server's stdout/stderr (all starts). */
	output(lines = 200) {
		const all = this.log.split("\n");
		return all.slice(-lines).join("\n");
	}

	get running() {
		return this.child !== undefined && this.exitInfo === undefined;
	}

	async start({ port = 0 } = {}) {
		if (this.running) throw new Error("fixture server already running");
		const bin = this.binary ?? fixtureServerPath();
		this.generation += 1;
		const args = ["--host", this.host, "--port", String(port), "--data-dir", this.dataDir, ...this.extraArgs];
		this.#append("", `---- start #${this.generation}: ${bin} ${args.join(" ")}\n`);
		const child = spawn(bin, args, {
			stdio: ["ignore", "pipe", "pipe"],
			env: { ...process.env, ...this.env },
		});
		this.child = child;
		this.exitInfo = undefined;
		liveChildren.add(child);

		let resolveExit;
		this.exited = new Promise((resolve) => {
			resolveExit = resolve;
		});
		child.on("exit", (code, signal) => {
			this.exitInfo = { code, signal };
			liveChildren.delete(child);
			this.#append("", `---- exit #${this.generation}: code=${code} signal=${signal}\n`);
			resolveExit(this.exitInfo);
		});

		const listening = new Promise((resolve, reject) => {
			let pending = "";
			const onData = (prefix) => (chunk) => {
				this.#append(prefix, chunk);
				pending = (pending + chunk.toString("utf8")).slice(-4096);
				const m = LISTEN_RE.exec(pending);
				if (m) resolve({ host: m[1], port: Number(m[2]) });
				const e = ENVOY_RE.exec(pending);
				if (e) resolve({ engineEndpoint: e[1].replace(/\/+$/, "") });
			};
			child.stdout.on("data", onData("[out] "));
			child.stderr.on("data", onData("[err] "));
			child.on("error", (err) => reject(new Error(`failed to spawn ${bin}: ${err.message}`)));
			child.on("exit", (code, signal) =>
				reject(new Error(`fixture server exited before listening (code=${code} signal=${signal})`)),
			);
		});

		try {
			const ready = await withTimeout(
				listening,
				this.readyTimeoutMs,
				`fixture server to print "listening on http://HOST:PORT" (or "envoy connected to <endpoint>")`,
			);
			if (ready.engineEndpoint !== undefined) {
				this.port = undefined;
				this.endpoint = ready.engineEndpoint;
			} else {
				this.port = ready.port;
				this.endpoint = `http://${ready.host}:${ready.port}`;
			}
		} catch (err) {
			this.kill();
			await withTimeout(this.exited, STOP_TIMEOUT_MS, "fixture server exit after failed start").catch(() => {});
			throw new Error(`${err.message}\n---- fixture server output ----\n${this.output()}`);
		}
		return this;
	}

	/** SIGTERM, then SIGKILL after the bound. Resolves to {code, signal, forced}. */
	async stop() {
		if (!this.running) return { ...(this.exitInfo ?? {}), forced: false };
		this.child.kill("SIGTERM");
		try {
			const info = await withTimeout(this.exited, STOP_TIMEOUT_MS, "fixture server exit after SIGTERM");
			return { ...info, forced: false };
		} catch {
			this.#append("", `---- SIGTERM not honoured within ${STOP_TIMEOUT_MS} ms, sending SIGKILL\n`);
			this.child.kill("SIGKILL");
			const info = await withTimeout(this.exited, STOP_TIMEOUT_MS, "fixture server exit after SIGKILL");
			return { ...info, forced: true };
		}
	}

	/** SIGKILL, synchronously sent. Await `exited` to see the process gone. */
	kill() {
		if (this.running) this.child.kill("SIGKILL");
		return this.exited;
	}

	/**
	 * Stops (SIGTERM, or SIGKILL with {hard:true}) and starts again on the same
	 * data dir. The port is a new ephemeral one unless {samePort:true}; this.endpoint
	 * is updated, so create a new client afterwards.
	 */
	async restart({ hard = false, samePort = false } = {}) {
		const previousPort = this.port;
		let stopInfo;
		if (hard) {
			await withTimeout(this.kill(), STOP_TIMEOUT_MS, "fixture server exit after SIGKILL");
			stopInfo = { ...this.exitInfo, forced: true };
		} else {
			stopInfo = await this.stop();
		}
		await this.start({ port: samePort ? previousPort : 0 });
		return stopInfo;
	}

	/**
	 * Ends the process (if any) and removes a data dir this harness created. SIGKILL, except
	 * for an envoy of a harness engine: SIGTERM first (stop()), so that the engine moves or
	 * sleeps its actors instead of keeping them for a dead envoy.
	 */
	async dispose({ graceful = this.engine !== undefined } = {}) {
		if (this.running && graceful) await this.stop().catch(() => {});
		if (this.running) {
			this.kill();
			await withTimeout(this.exited, STOP_TIMEOUT_MS, "fixture server exit on dispose").catch(() => {});
		}
		if (this.ownsDataDir && !process.env.RIVETKIT_KEEP_DATA) {
			try {
				rmSync(this.dataDir, { recursive: true, force: true });
			} catch {}
		}
	}
}

/**
 * Starts the fixture server as given (raw: the caller sets any engine-mode environment).
 * Options: dataDir (reuse a dir to test restarts; default: fresh temp dir, removed on
 * dispose), extraArgs, env, readyTimeoutMs (bound on the ready line, default
 * READY_TIMEOUT_MS), engine (the harness engine it is an envoy of: graceful dispose).
 * Returns a FixtureServer {endpoint, port, dataDir, stop(), kill(), restart(), dispose(), output()}.
 */
export async function startServer({ dataDir, extraArgs = [], env = {}, host = "127.0.0.1", readyTimeoutMs, engine, binary } = {}) {
	if (binary === undefined) fixtureServerPath(); // fail early with a clear message
	const ownsDataDir = dataDir === undefined;
	const dir = dataDir ?? mkdtempSync(join(tmpdir(), "rivetkit-fixture-"));
	const server = new FixtureServer({ dataDir: dir, ownsDataDir, host, extraArgs, env, readyTimeoutMs, engine, binary });
	try {
		await server.start();
	} catch (err) {
		await server.dispose();
		throw err;
	}
	return server;
}

// ------------------------------------------------------------------ engine mode

/** The engine version the suites are written against (the pinned @rivetkit/engine-cli). */
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
/** Bound on starting the engine (engine.mjs retries once on new ports). */
const ENGINE_START_TIMEOUT_MS = 150_000;
/** Bound on creating the pool once the engine answers. */
const ENGINE_POOL_TIMEOUT_MS = 60_000;
/** Bound on the whole of a file's engine setup. */
export const ENGINE_SETUP_TIMEOUT_MS = ENGINE_START_TIMEOUT_MS + ENGINE_POOL_TIMEOUT_MS;
const ENGINE_SERVER_LOG_LEVEL = process.env.RIVETKIT_ENGINE_SERVER_LOG_LEVEL || "info";

/** Env for a fixture server that connects to `endpoint` without ever starting an engine. */
export function engineServerEnv(endpoint, extra = {}) {
	return { RIVET_ENDPOINT: endpoint, RIVETKIT_ENGINE_SPAWN: "never", RIVET_LOG_LEVEL: ENGINE_SERVER_LOG_LEVEL, ...extra };
}

let fileEngine; // the started engine (for teardown and failure reports)
let fileEnginePromise;

/**
 * The test file's engine: started (with pool "default") on first call, the same one after
 * that, stopped after the file's last test. A failed start fails every later call the same way.
 */
export function suiteEngine() {
	fileEnginePromise ??= (async () => {
		checkEngineVersion();
		const engine = await withTimeout(startEngine(), ENGINE_START_TIMEOUT_MS, "rivet-engine start");
		fileEngine = engine;
		try {
			await withTimeout(ensurePool(engine.endpoint, "default"), ENGINE_POOL_TIMEOUT_MS, "runner config `default`");
		} catch (err) {
			throw attachOutput(err, { engine });
		}
		return engine;
	})();
	return fileEnginePromise;
}

/** The file's engine if one was started (synchronous; for failure reports). */
export function currentEngine() {
	return fileEngine;
}

// Root-level hook: runs after every suite of the file (and their own after hooks).
after(
	async () => {
		if (fileEngine) await fileEngine.stop({ hard: true });
	},
	{ timeout: 30_000 },
);

/**
 * Starts a fixture server in `mode` (default MODE). Engine mode: as an envoy of the file's
 * engine (suiteEngine()), env RIVET_ENDPOINT / RIVETKIT_ENGINE_SPAWN=never added to `env`,
 * ready bound ENGINE_READY_TIMEOUT_MS. Other options as startServer().
 */
export async function startFixture({ mode = MODE, env = {}, ...rest } = {}) {
	if (mode !== "engine") return startServer({ env, ...rest });
	const engine = await suiteEngine();
	try {
		return await startServer({
			env: engineServerEnv(engine.endpoint, env),
			readyTimeoutMs: ENGINE_READY_TIMEOUT_MS,
			engine,
			...rest,
		});
	} catch (err) {
		// startServer already put the server's output in the message.
		throw attachOutput(err, { engine });
	}
}

/** Bound on useServer's setup in `mode`. */
function setUpTimeout(mode) {
	return mode === "engine"
		? ENGINE_SETUP_TIMEOUT_MS + ENGINE_READY_TIMEOUT_MS + STOP_TIMEOUT_MS + 5_000
		: READY_TIMEOUT_MS + STOP_TIMEOUT_MS + 5_000;
}

// ------------------------------------------------------------------ clients, suites

/** The official client, as an application would create it. */
export function createClient({ endpoint, encoding = ENCODING, ...rest }) {
	return createRivetClient({ endpoint, encoding, ...rest });
}

/** Disposes a client without letting a stuck socket hang teardown. */
export async function disposeClient(client, ms = 5_000) {
	if (!client) return;
	await withTimeout(client.dispose(), ms, "client.dispose()").catch(() => {});
}

/** {host, port} of an http endpoint (the local server's, or the engine's guard). */
export function endpointAddress(endpoint) {
	const u = new URL(endpoint);
	return { host: u.hostname, port: Number(u.port || (u.protocol === "https:" ? 443 : 80)) };
}

/**
 * Registers hooks on the current describe(): in local mode one fixture server, in engine mode
 * the file's engine and one fixture server connected to it (unless {server:false}), and one
 * official client on the endpoint (the server's, or the engine's). Use `env.wrap(fn)` for test
 * bodies so that a failure carries the output of every server and the engine's log tails.
 * Options: clientOptions, server (default true), mode (default MODE; engine-* files pass
 * "engine").
 *
 * env: mode, engine (engine mode), endpoint, address ({host, port} of the endpoint),
 *   server, client,
 *   newClient(options)        another client on the endpoint (disposed in teardown)
 *   startServer({name, env})  another fixture server in the same mode (engine mode: another
 *                             envoy in pool "default"; disposed in teardown)
 *   wrap(fn)                  test body wrapper
 */
export function useServer(
	hooks = testHooks,
	{ clientOptions = {}, server: withServer = true, mode = MODE, binary, serverEnv = {} } = {},
) {
	const env = {
		mode,
		engine: undefined,
		server: undefined,
		client: undefined,
		clients: [],
		servers: [], // {name, server}
		get endpoint() {
			return env.server?.endpoint ?? env.engine?.endpoint;
		},
		get address() {
			return endpointAddress(env.endpoint);
		},
		/** An extra client (disposed in teardown). */
		newClient(options = {}) {
			const c = createClient({ endpoint: env.endpoint, ...clientOptions, ...options });
			env.clients.push(c);
			return c;
		},
		async startServer({ name, ...opts } = {}) {
			const label = name ?? `#${env.servers.length + 1}`;
			const s = await startFixture({ mode, binary, ...opts });
			env.servers.push({ name: label, server: s });
			return s;
		},
		wrap(fn) {
			return async (t) => {
				try {
					return await fn(t);
				} catch (err) {
					throw attachOutput(err, { servers: env.servers, engine: env.engine });
				}
			};
		},
	};
	// RIVETKIT_SERVER_PER_TEST=1 gives every test its own fresh server (slower;
	// for isolating a failure, or for the reference fixture whose engine
	// degrades after a few actor creations on a loaded 2-CPU machine).
	const perTest = process.env.RIVETKIT_SERVER_PER_TEST === "1";
	const setUp = async () => {
		if (mode === "engine") env.engine = await suiteEngine();
		if (withServer) {
			env.server = await env.startServer({ name: "main", env: serverEnv });
			env.client = env.newClient();
		}
	};
	const tearDown = async () => {
		const clients = env.clients.splice(0);
		for (const c of clients) await disposeClient(c);
		for (const { server } of env.servers.splice(0)) await server.dispose();
		env.server = undefined;
		env.client = undefined;
	};
	const setUpOpts = { timeout: setUpTimeout(mode) };
	if (perTest) {
		hooks.beforeEach(setUp, setUpOpts);
		hooks.afterEach(tearDown, { timeout: 60_000 });
	} else {
		hooks.before(setUp, setUpOpts);
		hooks.after(tearDown, { timeout: 60_000 });
	}
	return env;
}

/**
 * Appends the output of `servers` (FixtureServers, or {name, server}) and the tail of the
 * engine's logs to an error (for failure reports). Also to an AssertionError's stack, which the
 * reporter prints and which was formatted at construction.
 */
export function attachOutput(err, { servers = [], engine } = {}) {
	let text = "";
	for (const [i, entry] of servers.entries()) {
		const { name, server } = entry instanceof FixtureServer ? { name: `#${i + 1}`, server: entry } : entry;
		if (!server) continue;
		text += `\n---- fixture server ${name} output (last 200 lines) ----\n${server.output()}\n---- end of ${name} output ----`;
	}
	if (engine) text += `\n---- engine (${engine.endpoint}) logs ----\n${engine.output(60)}\n---- end of engine logs ----`;
	if (!text) return err;
	if (err instanceof Error) {
		try {
			err.message += text;
			if (typeof err.stack === "string" && !err.stack.includes(text)) err.stack += text;
			return err;
		} catch {}
	}
	const wrapped = new Error(`${String(err)}${text}`);
	wrapped.cause = err;
	return wrapped;
}

/** Appends one fixture server's recent output to an error. */
export function attachServerOutput(err, server) {
	return attachOutput(err, { servers: server ? [server] : [] });
}

/**
 * Per-test helper for tests that start their own servers (persistence, restarts): runs
 * fn(ctx) with ctx.start(opts) starting servers in the current mode (startFixture) that are
 * always disposed at the end, ctx.client(server) for clients on a server's endpoint, and
 * ctx.engine (engine mode, after the first start). A failure carries every server's output
 * and the engine's log tails.
 */
export function withServers(fn, { mode = MODE } = {}) {
	return async (t) => {
		const servers = [];
		const clients = [];
		const ctx = {
			mode,
			engine: undefined,
			async start(opts) {
				const s = await startFixture({ mode, ...opts });
				ctx.engine = s.engine;
				servers.push(s);
				return s;
			},
			client(server, options = {}) {
				const c = createClient({ endpoint: server.endpoint, ...options });
				clients.push(c);
				return c;
			},
		};
		try {
			return await fn(ctx, t);
		} catch (err) {
			throw attachOutput(err, { servers, engine: ctx.engine ?? (mode === "engine" ? currentEngine() : undefined) });
		} finally {
			for (const c of clients) await disposeClient(c, 3_000);
			for (const s of servers) await s.dispose();
		}
	};
}

/** Suite-level bound; unbounded per suite with RIVETKIT_SERVER_PER_TEST=1 (each test still is). */
export function suiteTimeout(ms) {
	return process.env.RIVETKIT_SERVER_PER_TEST === "1" ? Infinity : ms;
}
