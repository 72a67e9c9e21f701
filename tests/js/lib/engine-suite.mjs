// Engine-only suites (integration/engine-*.test.mjs): useEngine() is lib/server.mjs's
// useServer() in engine mode whatever RIVETKIT_MODE says (one rivet-engine 2.3.19 per test
// file with pool "default", fixture servers connected to it as envoys with
// RIVETKIT_ENGINE_SPAWN=never, official clients on the ENGINE's endpoint), plus helpers for
// recovery scenarios and for reading a server's `fixture-event` lines.
import "./env.mjs";
import { before, after, beforeEach, afterEach } from "node:test";
import { useServer, waitFor, withTimeout, sleep, attachOutput } from "./server.mjs";

export {
	ENGINE_VERSION,
	ENGINE_READY_TIMEOUT_MS,
	checkEngineVersion,
	engineServerEnv,
	suiteEngine,
} from "./server.mjs";

/** Appends the output of `servers` ({name, server}) and the engine's log tails to an error. */
export function attachEngineOutput(err, { servers = [], engine } = {}) {
	return attachOutput(err, { servers, engine });
}

/**
 * useServer() in engine mode: the file's engine and (unless {server:false}) one fixture server
 * connected to it plus one client on the engine. env: engine, endpoint (the engine's), server,
 * client, newClient(options), startServer({name, env}) (another envoy in pool "default"),
 * wrap(fn) (failures carry every server's output and the engine's log tails).
 */
export function useEngine({ server = true, clientOptions = {} } = {}) {
	return useServer({ before, after, beforeEach, afterEach }, { server, clientOptions, mode: "engine" });
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
