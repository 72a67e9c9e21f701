// Harness: start the rivetkit-cpp fixture server, create the official client,
// and keep everything bounded.
//
// The fixture binary comes from env RIVETKIT_FIXTURE_SERVER. It is started as
//   <bin> --host 127.0.0.1 --port 0 --data-dir <dir>
// and must print `listening on http://HOST:PORT` on stdout or stderr once ready.
// In engine mode (env RIVET_ENDPOINT, see lib/engine-suite.mjs) it prints
// `envoy connected to <engine endpoint>` instead: server.endpoint is then the
// engine's (clients talk to the engine's gateway) and server.port is undefined.
// Its output is kept in a buffer and shown only when something fails.

import "./env.mjs"; // must come first: quiets the client's logger before it loads
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync, accessSync, constants as fsConstants } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient as createRivetClient } from "rivetkit/client";
import { before, after, beforeEach, afterEach } from "node:test";

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
	constructor({ dataDir, ownsDataDir, host, extraArgs, env, readyTimeoutMs = READY_TIMEOUT_MS }) {
		this.readyTimeoutMs = readyTimeoutMs;
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
		const bin = fixtureServerPath();
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

	/** Kills the process (if any) and removes a data dir this harness created. */
	async dispose() {
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
 * Starts the fixture server. Options: dataDir (reuse a dir to test restarts;
 * default: fresh temp dir, removed on dispose), extraArgs, env, readyTimeoutMs
 * (bound on the ready line, default READY_TIMEOUT_MS).
 * Returns a FixtureServer {endpoint, port, dataDir, stop(), kill(), restart(), dispose(), output()}.
 */
export async function startServer({ dataDir, extraArgs = [], env = {}, host = "127.0.0.1", readyTimeoutMs } = {}) {
	fixtureServerPath(); // fail early with a clear message
	const ownsDataDir = dataDir === undefined;
	const dir = dataDir ?? mkdtempSync(join(tmpdir(), "rivetkit-fixture-"));
	const server = new FixtureServer({ dataDir: dir, ownsDataDir, host, extraArgs, env, readyTimeoutMs });
	try {
		await server.start();
	} catch (err) {
		await server.dispose();
		throw err;
	}
	return server;
}

/** The official client, as an application would create it. */
export function createClient({ endpoint, encoding = ENCODING, ...rest }) {
	return createRivetClient({ endpoint, encoding, ...rest });
}

/** Disposes a client without letting a stuck socket hang teardown. */
export async function disposeClient(client, ms = 5_000) {
	if (!client) return;
	await withTimeout(client.dispose(), ms, "client.dispose()").catch(() => {});
}

/**
 * Registers before/after hooks on the current describe(): one fixture server
 * and one official client for the whole suite. Use `env.wrap(fn)` for test
 * bodies so that a failure carries the server's output.
 */
export function useServer(hooks = testHooks, { clientOptions = {} } = {}) {
	const env = {
		server: undefined,
		client: undefined,
		clients: [],
		get endpoint() {
			return env.server.endpoint;
		},
		/** An extra client (disposed in teardown). */
		newClient(options = {}) {
			const c = createClient({ endpoint: env.server.endpoint, ...clientOptions, ...options });
			env.clients.push(c);
			return c;
		},
		wrap(fn) {
			return async (t) => {
				try {
					return await fn(t);
				} catch (err) {
					throw attachServerOutput(err, env.server);
				}
			};
		},
	};
	// RIVETKIT_SERVER_PER_TEST=1 gives every test its own fresh server (slower;
	// for isolating a failure, or for the reference fixture whose engine
	// degrades after a few actor creations on a loaded 2-CPU machine).
	const perTest = process.env.RIVETKIT_SERVER_PER_TEST === "1";
	const setUp = async () => {
		env.server = await startServer();
		env.client = env.newClient();
	};
	const tearDown = async () => {
		const clients = env.clients.splice(0);
		for (const c of clients) await disposeClient(c);
		if (env.server) await env.server.dispose();
	};
	const setUpOpts = { timeout: READY_TIMEOUT_MS + STOP_TIMEOUT_MS + 5_000 };
	if (perTest) {
		hooks.beforeEach(setUp, setUpOpts);
		hooks.afterEach(tearDown, { timeout: 30_000 });
	} else {
		hooks.before(setUp, setUpOpts);
		hooks.after(tearDown, { timeout: 30_000 });
	}
	return env;
}

/** Appends the fixture server's recent output to an error (for failure reports). */
export function attachServerOutput(err, server) {
	if (!server) return err;
	const text = `\n---- fixture server output (last 200 lines) ----\n${server.output()}\n---- end of server output ----`;
	if (err instanceof Error) {
		try {
			err.message += text;
			return err;
		} catch {}
	}
	const wrapped = new Error(`${String(err)}${text}`);
	wrapped.cause = err;
	return wrapped;
}

/**
 * Per-test helper for files that start their own servers (persistence):
 * runs fn(ctx) with ctx.start(opts) registering servers that are always
 * killed at the end, and attaches their output on failure.
 */
export function withServers(fn) {
	return async (t) => {
		const servers = [];
		const clients = [];
		const ctx = {
			async start(opts) {
				const s = await startServer(opts);
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
			let e = err;
			for (const s of servers) e = attachServerOutput(e, s);
			throw e;
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
