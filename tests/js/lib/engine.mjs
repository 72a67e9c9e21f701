// Harness: start a Rivet Engine (rivet-engine 2.3.x) for engine-mode integration tests.
//
// The binary is $RIVET_ENGINE_BINARY_PATH, else this package's
// node_modules/@rivetkit/engine-cli-linux-x64-musl/rivet-engine (tools/install-node-deps.sh).
// Each engine gets three free ephemeral ports (guard, api_peer, metrics), a fresh temp data dir
// and a config like shared/reference/peer-bench/start-engine.sh: file-system storage under
// <dataDir>/engine/db, telemetry off, CPU load shedding off (runtime.worker_cpu_max = 1,000,000;
// the default curve stalls actor creation for seconds on 2-core machines), one datacenter
// "default" with label 1. Output goes to <dataDir>/engine/logs/engine.{stdout,stderr}.log and
// RUST_LOG=warn (override with RIVETKIT_ENGINE_RUST_LOG). The engine runs in its own process
// group; stop() sends SIGTERM to the group, then SIGKILL. Engines still running when this Node
// process exits are killed.

import { spawn } from "node:child_process";
import {
	accessSync,
	appendFileSync,
	closeSync,
	constants as fsConstants,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/** How long one start waits for /health before killing the engine (then one retry on new ports). */
export const ENGINE_HEALTH_TIMEOUT_MS = Number(process.env.RIVETKIT_ENGINE_HEALTH_TIMEOUT_MS ?? 60_000);
/** How long stop() waits after SIGTERM before SIGKILL. */
export const ENGINE_STOP_TIMEOUT_MS = 5_000;
const HEALTH_POLL_MS = 250;
const HEALTH_PROBE_TIMEOUT_MS = 2_000;
const LOG_TAIL_LINES = 30;

const liveEngines = new Set();
process.on("exit", () => {
	for (const engine of liveEngines) {
		try {
			process.kill(-engine.pid, "SIGKILL");
		} catch {}
		if (engine.ownsDataDir && !process.env.RIVETKIT_KEEP_DATA) {
			try {
				rmSync(engine.dataDir, { recursive: true, force: true });
			} catch {}
		}
	}
});

function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The rivet-engine binary (throws with instructions when missing). */
export function engineBinaryPath() {
	const fromEnv = process.env.RIVET_ENGINE_BINARY_PATH;
	const candidates = fromEnv
		? [fromEnv]
		: ["musl", "gnu"].map((libc) =>
				join(HERE, "..", "node_modules", "@rivetkit", `engine-cli-linux-x64-${libc}`, "rivet-engine"),
			);
	for (const path of candidates) {
		try {
			accessSync(path, fsConstants.X_OK);
			return path;
		} catch {}
	}
	throw new Error(
		`rivet-engine binary not found (tried ${candidates.join(", ")}): run tools/install-node-deps.sh ` +
			"(npm install @rivetkit/engine-cli) or set RIVET_ENGINE_BINARY_PATH",
	);
}

/** `count` distinct free TCP ports on `host` (held together while choosing, then released). */
export async function pickFreePorts(count = 3, host = "127.0.0.1") {
	const servers = [];
	try {
		for (let i = 0; i < count; i++) {
			const server = createServer();
			await new Promise((resolve, reject) => {
				server.once("error", reject);
				server.listen(0, host, resolve);
			});
			servers.push(server);
		}
		return servers.map((s) => s.address().port);
	} finally {
		await Promise.all(servers.map((s) => new Promise((resolve) => s.close(() => resolve()))));
	}
}

function engineConfig({ host, ports, dbDir, tcpNodelay }) {
	const guard = { host, port: ports.guard };
	if (tcpNodelay) guard.tcp_nodelay = true;
	return {
		guard,
		api_peer: { host, port: ports.apiPeer },
		metrics: { host, port: ports.metrics },
		file_system: { path: dbDir },
		telemetry: { enabled: false },
		// worker_cpu_max is the millicore count the shedding curve is scaled to; 1,000 cores keeps
		// the measured usage ratio near 0, i.e. no shedding.
		runtime: { worker_cpu_max: 1_000_000 },
		topology: {
			datacenter_label: 1,
			datacenters: {
				default: {
					datacenter_label: 1,
					is_leader: true,
					public_url: `http://${host}:${ports.guard}`,
					peer_url: `http://${host}:${ports.apiPeer}`,
				},
			},
		},
	};
}

function tail(path, lines = LOG_TAIL_LINES) {
	try {
		return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
	} catch {
		return "";
	}
}

async function healthOk(endpoint) {
	try {
		const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(HEALTH_PROBE_TIMEOUT_MS) });
		await res.text();
		return res.ok;
	} catch {
		return false;
	}
}

class EngineProcess {
	constructor({ binary, dataDir, ownsDataDir, host, tcpNodelay }) {
		this.binary = binary;
		this.dataDir = dataDir;
		this.ownsDataDir = ownsDataDir;
		this.host = host;
		this.tcpNodelay = tcpNodelay;
		this.engineDir = join(dataDir, "engine");
		this.logDir = join(this.engineDir, "logs");
		this.configPath = join(this.engineDir, "config.json");
		this.ports = undefined;
		this.child = undefined;
		this.exitInfo = undefined;
		this.exited = undefined;
		this.generation = 0;
	}

	get endpoint() {
		return this.ports ? `http://${this.host}:${this.ports.guard}` : undefined;
	}

	get port() {
		return this.ports?.guard;
	}

	get pid() {
		return this.child?.pid;
	}

	get running() {
		return this.child !== undefined && this.exitInfo === undefined;
	}

	/** Last lines of the engine's stderr and stdout logs (all starts). */
	output(lines = LOG_TAIL_LINES) {
		return ["stderr", "stdout"]
			.map((k) => `---- ${k} (${join(this.logDir, `engine.${k}.log`)}) ----\n${tail(join(this.logDir, `engine.${k}.log`), lines)}`)
			.join("\n");
	}

	/** Starts on `ports` and waits for /health; throws (after killing the engine) on failure. */
	async #startOn(ports) {
		if (this.running) throw new Error("engine already running");
		this.ports = ports;
		mkdirSync(join(this.engineDir, "db"), { recursive: true });
		mkdirSync(this.logDir, { recursive: true });
		writeFileSync(
			this.configPath,
			JSON.stringify(
				engineConfig({ host: this.host, ports, dbDir: join(this.engineDir, "db"), tcpNodelay: this.tcpNodelay }),
				null,
				2,
			),
		);
		this.generation += 1;
		const marker = `---- start #${this.generation} on ${this.endpoint} at ${new Date().toISOString()}\n`;
		const outPath = join(this.logDir, "engine.stdout.log");
		const errPath = join(this.logDir, "engine.stderr.log");
		appendFileSync(outPath, marker);
		appendFileSync(errPath, marker);
		const out = openSync(outPath, "a");
		const err = openSync(errPath, "a");
		let child;
		try {
			child = spawn(this.binary, ["start", "--config", this.configPath], {
				detached: true, // own process group, so stop() reaches anything it starts
				stdio: ["ignore", out, err],
				env: { ...process.env, RUST_LOG: process.env.RIVETKIT_ENGINE_RUST_LOG || "warn" },
			});
		} finally {
			closeSync(out);
			closeSync(err);
		}
		// Not referenced: a test that forgets stop() does not keep Node alive, and the exit hook
		// above kills the engine.
		child.unref();
		this.child = child;
		this.exitInfo = undefined;
		liveEngines.add(this);
		let resolveExit;
		this.exited = new Promise((resolve) => {
			resolveExit = resolve;
		});
		let spawnError;
		child.on("error", (e) => {
			spawnError = e;
			this.exitInfo ??= { code: null, signal: null, error: e.message };
			liveEngines.delete(this);
			resolveExit(this.exitInfo);
		});
		child.on("exit", (code, signal) => {
			this.exitInfo = { code, signal };
			liveEngines.delete(this);
			resolveExit(this.exitInfo);
		});

		const deadline = Date.now() + ENGINE_HEALTH_TIMEOUT_MS;
		for (;;) {
			if (!this.running) {
				const why = spawnError
					? `could not be started: ${spawnError.message}`
					: `exited early (code=${this.exitInfo.code} signal=${this.exitInfo.signal})`;
				throw new Error(`rivet-engine on ${this.endpoint} ${why}\n${this.output()}`);
			}
			if (await healthOk(this.endpoint)) return;
			if (Date.now() >= deadline) {
				await this.#stopProcess({ hard: true });
				throw new Error(
					`rivet-engine on ${this.endpoint} did not answer /health within ${ENGINE_HEALTH_TIMEOUT_MS} ms\n${this.output()}`,
				);
			}
			await sleep(HEALTH_POLL_MS);
		}
	}

	/** Fresh ports; one retry on a new port set if the first start fails. */
	async start() {
		let firstError;
		for (let attempt = 0; attempt < 2; attempt++) {
			const [guard, apiPeer, metrics] = await pickFreePorts(3, this.host);
			try {
				await this.#startOn({ guard, apiPeer, metrics });
				return this;
			} catch (err) {
				await this.#stopProcess({ hard: true });
				if (firstError) throw new Error(`${err.message}\n(first attempt: ${firstError.message})`);
				firstError = err;
			}
		}
		throw firstError;
	}

	/** SIGTERM to the process group (SIGKILL with hard), SIGKILL after the bound. */
	async #stopProcess({ hard = false } = {}) {
		if (!this.running) return { ...(this.exitInfo ?? {}), forced: false };
		const pid = this.child.pid;
		const signalGroup = (sig) => {
			try {
				process.kill(-pid, sig);
			} catch {
				try {
					this.child.kill(sig);
				} catch {}
			}
		};
		signalGroup(hard ? "SIGKILL" : "SIGTERM");
		let forced = hard;
		const exited = await Promise.race([this.exited.then(() => true), sleep(ENGINE_STOP_TIMEOUT_MS).then(() => false)]);
		if (!exited) {
			forced = true;
			signalGroup("SIGKILL");
			await Promise.race([this.exited, sleep(ENGINE_STOP_TIMEOUT_MS)]);
		}
		// Anything the engine left in its group goes too (no-op when the group is empty).
		try {
			process.kill(-pid, "SIGKILL");
		} catch {}
		return { ...(this.exitInfo ?? {}), forced };
	}

	/**
	 * Stops the engine (SIGTERM, or SIGKILL with {hard:true}) and starts it again on the same ports
	 * and data dir, so the endpoint and the stored state stay. Resolves to the stop info.
	 */
	async restart({ hard = false } = {}) {
		const info = await this.#stopProcess({ hard });
		await this.#startOn(this.ports);
		return info;
	}

	/** Stops the engine and removes the data dir this harness created (unless RIVETKIT_KEEP_DATA). */
	async stop({ hard = false } = {}) {
		const info = await this.#stopProcess({ hard });
		if (this.ownsDataDir && !process.env.RIVETKIT_KEEP_DATA && existsSync(this.dataDir)) {
			try {
				rmSync(this.dataDir, { recursive: true, force: true });
			} catch {}
		}
		return info;
	}
}

/**
 * Starts a rivet-engine on free ephemeral ports and waits until /health answers.
 * Options: tcpNodelay (guard.tcp_nodelay, default true), dataDir (default: a fresh temp dir,
 * removed by stop()), host (default 127.0.0.1).
 * Returns {endpoint, port, pid, dataDir, ports, stop({hard}), restart({hard}), output()}.
 */
export async function startEngine({ tcpNodelay = true, dataDir, host = "127.0.0.1" } = {}) {
	const binary = engineBinaryPath();
	const ownsDataDir = dataDir === undefined;
	const dir = dataDir ?? mkdtempSync(join(tmpdir(), "rivetkit-engine-"));
	const engine = new EngineProcess({ binary, dataDir: dir, ownsDataDir, host, tcpNodelay });
	try {
		await engine.start();
	} catch (err) {
		await engine.stop({ hard: true });
		throw err;
	}
	return engine;
}

/**
 * Creates (or updates) the runner config `pool` in `namespace` (envoy-protocol.md §1.1):
 * GET /datacenters, then PUT /runner-configs/{pool} with every datacenter as a normal pool.
 * Retries (attempts x delayMs) on network errors, 404/429/5xx and bodies with code "not_found".
 */
/**
 * Creates (or replaces) a serverless pool: the engine starts actors of `pool` by opening
 * `POST {url}/start` (envoy-protocol.md §5), after polling `{url}/metadata`. Retries while the
 * engine comes up, as ensurePool.
 */
export async function ensureServerlessPool(endpoint, pool, url, { requestLifespan = 300, drainGrace = 5, ...rest } = {}) {
	return ensurePool(endpoint, pool, {
		...rest,
		datacenterConfig: {
			serverless: {
				url,
				headers: {},
				request_lifespan: requestLifespan,
				drain_grace_period: drainGrace,
				metadata_poll_interval: 1000,
				max_runners: 100000,
				min_runners: 0,
				runners_margin: 0,
				slots_per_runner: 1,
			},
			drain_on_version_upgrade: true,
		},
	});
}

export async function ensurePool(
	endpoint,
	pool = "default",
	{ namespace = "default", token = "dev", attempts = 60, delayMs = 500, datacenterConfig = { normal: {}, drain_on_version_upgrade: true } } = {},
) {
	const base = endpoint.replace(/\/+$/, "");
	const ns = encodeURIComponent(namespace);
	const headers = { authorization: `Bearer ${token || "dev"}`, "content-type": "application/json" };
	const call = async (method, path, body) => {
		const res = await fetch(`${base}${path}`, {
			method,
			headers,
			body: body === undefined ? undefined : JSON.stringify(body),
			signal: AbortSignal.timeout(10_000),
		});
		const text = await res.text();
		let json;
		try {
			json = JSON.parse(text);
		} catch {}
		const retry = res.status === 404 || res.status === 429 || res.status >= 500 || json?.code === "not_found";
		if (res.ok && !retry) return json;
		const err = new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
		err.retry = retry;
		throw err;
	};
	let last;
	for (let i = 1; i <= attempts; i++) {
		try {
			const dcs = await call("GET", `/datacenters?namespace=${ns}`);
			const names = (dcs?.datacenters ?? []).map((d) => d.name).filter(Boolean);
			if (names.length === 0) throw Object.assign(new Error("GET /datacenters: no datacenter yet"), { retry: true });
			const datacenters = Object.fromEntries(
				names.map((name) => [name, datacenterConfig]),
			);
			return await call("PUT", `/runner-configs/${encodeURIComponent(pool)}?namespace=${ns}`, { datacenters });
		} catch (err) {
			last = err;
			if (err.retry === false) break;
			if (i < attempts) await sleep(delayMs);
		}
	}
	throw new Error(`could not create runner config ${pool} in namespace ${namespace} at ${base}: ${last?.message}`);
}
