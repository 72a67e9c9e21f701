// Engine mode, engine process management (RIVETKIT_ENGINE_SPAWN, src/engine/process_manager.hpp):
// - auto: RIVET_ENDPOINT on a free loopback port where nothing answers -> the runtime starts
//   rivet-engine itself (RIVET_ENGINE_BINARY_PATH, files under <data-dir>/engine), creates
//   pool "default", connects, and serves the official client through that engine; a second
//   runtime in auto mode reuses it; the engine goes away with the runtime that started it.
// - never: nothing answers at RIVET_ENDPOINT -> the process exits non-zero with a clear error
//   and starts no engine.
// These do not depend on the client's encoding: they run with bare only (the other encodings
// skip the file, saying so).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	ENCODING,
	suiteTimeout,
	startServer,
	createClient,
	disposeClient,
	fixtureServerPath,
	uniqueKey,
	waitFor,
	withTimeout,
} from "../lib/server.mjs";
import { engineBinaryPath, pickFreePorts } from "../lib/engine.mjs";
import { attachEngineOutput, checkEngineVersion } from "../lib/engine-suite.mjs";
import { disposeConn } from "../lib/lifecycle.mjs";

const T = { timeout: 240_000 };
const ONLY = "bare";
const skip = ENCODING === ONLY ? false : `encoding-independent scenarios: run with RIVETKIT_ENCODING=${ONLY} only`;
/** A runtime in auto mode waits up to 60 s for the engine it starts, then for the pool and link. */
const AUTO_READY_MS = 150_000;

async function portFree(port, host = "127.0.0.1") {
	const server = createServer();
	const ok = await new Promise((resolve) => {
		server.once("error", () => resolve(false));
		server.listen(port, host, () => resolve(true));
	});
	if (ok) await new Promise((resolve) => server.close(() => resolve()));
	return ok;
}

/** A loopback port P with P, P+1 and P+10 free (the spawned engine's guard, api_peer, metrics). */
async function freeEnginePort() {
	for (let i = 0; i < 50; i++) {
		const [p] = await pickFreePorts(1);
		if (p + 10 > 65535) continue;
		if ((await portFree(p + 1)) && (await portFree(p + 10))) return p;
	}
	throw new Error("no loopback port P with P+1 and P+10 free after 50 tries");
}

async function healthOk(endpoint) {
	try {
		const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(2_000) });
		await res.text();
		return res.ok;
	} catch {
		return false;
	}
}

/** Pids of processes whose command line mentions `needle` (e.g. an engine's config path). */
function pidsWith(needle) {
	const out = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
			if (cmd.includes(needle)) out.push(Number(entry));
		} catch {}
	}
	return out;
}

function tail(path, lines = 40) {
	try {
		return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
	} catch {
		return "(none)";
	}
}

describe(`engine mode: the runtime's engine process (auto / never) [${ENCODING}]`, { skip, timeout: suiteTimeout(390_000) }, () => {
	it("auto: the runtime starts rivet-engine on its loopback endpoint, serves the client through it, and stops it on exit", T, async () => {
		const binary = engineBinaryPath();
		checkEngineVersion(binary);
		const servers = [];
		const clients = [];
		const conns = [];
		let engineDir;
		let configPath;
		try {
			// A free port can be taken between the check and the engine's bind: one more try then.
			let first;
			for (let attempt = 1; attempt <= 2 && first === undefined; attempt++) {
				const port = await freeEnginePort();
				const endpoint = `http://127.0.0.1:${port}`;
				assert.equal(await healthOk(endpoint), false, `nothing answers at ${endpoint} yet`);
				try {
					first = await startServer({
						env: { RIVET_ENDPOINT: endpoint, RIVETKIT_ENGINE_SPAWN: "auto", RIVET_ENGINE_BINARY_PATH: binary, RIVET_LOG_LEVEL: "info" },
						readyTimeoutMs: AUTO_READY_MS,
					});
				} catch (err) {
					if (attempt < 2 && /port_in_use|is in use/.test(err.message)) continue;
					throw err;
				}
			}
			servers.push({ name: "auto", server: first });
			const endpoint = first.endpoint;
			assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+$/, "envoy connected to the loopback endpoint");
			engineDir = join(first.dataDir, "engine");
			configPath = join(engineDir, "config.json");

			// The engine it started answers there, with its files under <data-dir>/engine.
			assert.equal(await healthOk(endpoint), true, `${endpoint}/health answers`);
			assert.ok(existsSync(configPath), `${configPath} was written`);
			assert.ok(existsSync(join(engineDir, "db")), "the engine's storage is under <data-dir>/engine/db");
			assert.ok(pidsWith(configPath).length >= 1, `a rivet-engine process runs with --config ${configPath}`);

			// The official client, through the engine this runtime started (pool created by the runtime).
			const client = createClient({ endpoint });
			clients.push(client);
			const h = client.counter.getOrCreate([uniqueKey("auto")]);
			assert.equal(await withTimeout(h.increment(5), 60_000, "first action through the spawned engine"), 5);
			assert.equal(await h.increment(2), 7);
			const conn = h.connect();
			conns.push(conn);
			const seen = [];
			conn.on("newCount", (n) => seen.push(n));
			assert.equal(await withTimeout(conn.increment(1), 15_000, "conn.increment(1)"), 8);
			assert.deepStrictEqual(seen, [8]);
			const res = await withTimeout(h.fetch("via/spawned?x=1"), 15_000, "raw request");
			assert.equal(res.status, 200);
			assert.equal((await res.json()).path, "/via/spawned");

			// auto with an engine already answering: a second runtime reuses it (starts none).
			const second = await startServer({
				env: { RIVET_ENDPOINT: endpoint, RIVETKIT_ENGINE_SPAWN: "auto", RIVET_ENGINE_BINARY_PATH: binary, RIVET_LOG_LEVEL: "info" },
				readyTimeoutMs: AUTO_READY_MS,
			});
			servers.push({ name: "auto-reuse", server: second });
			assert.equal(second.endpoint, endpoint);
			assert.equal(existsSync(join(second.dataDir, "engine")), false, "the second runtime started no engine of its own");
			assert.equal(pidsWith(join(second.dataDir, "engine")).length, 0);
			assert.equal(await h.getCount(), 8, "the first runtime's actor is unaffected");
			// Its shutdown is not under test here.
			await second.dispose();

			// The engine goes away with the runtime that started it.
			await disposeConn(conn, 3_000);
			const stopped = await first.stop();
			await waitFor(async () => !(await healthOk(endpoint)), { timeout: 20_000, interval: 100, what: `${endpoint}/health to stop answering after the runtime exited` });
			await waitFor(() => pidsWith(configPath).length === 0, { timeout: 20_000, interval: 100, what: "the spawned rivet-engine process to be gone" });
			assert.equal(stopped.forced, false, "the runtime exited on SIGTERM without needing SIGKILL");
			assert.equal(stopped.code, 0, `the runtime's exit after SIGTERM: ${JSON.stringify(stopped)}`);
		} catch (err) {
			const spawned = engineDir && {
				endpoint: `spawned by the runtime, files in ${engineDir}`,
				output: () =>
					`stderr:\n${tail(join(engineDir, "logs", "engine.stderr.log"))}\nstdout:\n${tail(join(engineDir, "logs", "engine.stdout.log"))}`,
			};
			throw attachEngineOutput(err, { servers, engine: spawned });
		} finally {
			for (const c of conns) await disposeConn(c, 2_000);
			for (const c of clients) await disposeClient(c, 3_000);
			for (const { server } of servers) await server.dispose();
			// An engine left behind by a failure is killed (its process group is its own).
			if (configPath) {
				for (const pid of pidsWith(configPath)) {
					try {
						process.kill(pid, "SIGKILL");
					} catch {}
				}
			}
		}
	});

	it("never: with nothing answering at RIVET_ENDPOINT the process exits non-zero with a clear error and starts no engine", T, async () => {
		const bin = fixtureServerPath();
		const dataDir = mkdtempSync(join(tmpdir(), "rivetkit-never-"));
		const [port] = await pickFreePorts(1);
		const endpoint = `http://127.0.0.1:${port}`;
		let output = "";
		try {
			assert.equal(await healthOk(endpoint), false, `nothing answers at ${endpoint}`);
			const child = spawn(bin, ["--data-dir", dataDir], {
				stdio: ["ignore", "pipe", "pipe"],
				// The binary is available: `never` must refuse to use it.
				env: {
					...process.env,
					RIVET_ENDPOINT: endpoint,
					RIVETKIT_ENGINE_SPAWN: "never",
					RIVET_ENGINE_BINARY_PATH: engineBinaryPath(),
					RIVET_LOG_LEVEL: "info",
				},
			});
			child.stdout.on("data", (d) => (output += `[out] ${d}`));
			child.stderr.on("data", (d) => (output += `[err] ${d}`));
			const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
			let info;
			try {
				info = await withTimeout(exited, 30_000, "the runtime to exit with RIVETKIT_ENGINE_SPAWN=never and no engine");
			} finally {
				try {
					child.kill("SIGKILL");
				} catch {}
			}
			assert.equal(info.signal, null, `exited by itself, not by a signal: ${JSON.stringify(info)}`);
			assert.notEqual(info.code, 0, `non-zero exit code: ${JSON.stringify(info)}`);
			assert.ok(!output.includes("envoy connected"), "it never claimed to be connected");
			assert.ok(output.includes(`no Rivet Engine answers at ${endpoint}`), "the error names the endpoint");
			assert.ok(output.includes("RIVETKIT_ENGINE_SPAWN=never"), "the error names the setting that forbids starting one");
			assert.equal(await healthOk(endpoint), false, "no engine was started at the endpoint");
			assert.equal(existsSync(join(dataDir, "engine")), false, "no engine files under <data-dir>/engine");
			assert.equal(pidsWith(join(dataDir, "engine")).length, 0, "no engine process for this data dir");
		} catch (err) {
			err.message += `\n---- fixture server output ----\n${output}\n---- end ----`;
			if (typeof err.stack === "string" && !err.stack.includes(output)) err.stack += `\n---- fixture server output ----\n${output}`;
			throw err;
		} finally {
			rmSync(dataDir, { recursive: true, force: true });
		}
	});
});
