// Helpers for the lifecycle files (integration/lifecycle-*.test.mjs): the fixture's
// `observer` actor (a process-wide log of lifecycle hooks), connection status
// recording and a bounded raw WebSocket reader. Every wait is bounded; nothing
// here asserts on timing.
import assert from "node:assert/strict";
import { ActorError, waitFor, withTimeout } from "./server.mjs";

/** Asserts an ActorError with group.code (for assert.rejects). */
export function isActorError(err, group, code) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.constructor?.name}: ${err?.stack ?? err}`);
	assert.equal(`${err.group}.${err.code}`, `${group}.${code}`, `error: ${err.message}`);
	return true;
}

/**
 * The fixture's `observer` actor: events() lists hook strings such as
 * "sleepy:onSleep:<key>" recorded by the server process (a restarted process
 * starts with an empty list). Reading it never touches the observed actor.
 */
export function observer(client) {
	const handle = client.observer.getOrCreate(["observer"]);
	const obs = {
		handle,
		events: () => handle.events(),
		/** Current length of the log: pass it as `since` to look only at later events. */
		async mark() {
			return (await handle.events()).length;
		},
		/** How many times `event` was recorded (after `since`). */
		async count(event, since = 0) {
			return (await handle.events()).slice(since).filter((e) => e === event).length;
		},
		/** Events recorded for `key` (any actor, any hook), after `since`. */
		async forKey(key, since = 0) {
			return (await handle.events()).slice(since).filter((e) => e.endsWith(`:${key}`));
		},
		/**
		 * Waits until `event` was recorded at least `count` times after `since`.
		 * Returns the index (in the whole log) just after the last matching entry.
		 */
		async waitEvent(event, { since = 0, count = 1, timeout = 15_000 } = {}) {
			let last = -1;
			await waitFor(
				async () => {
					const all = await handle.events();
					let n = 0;
					for (let i = since; i < all.length; i++) {
						if (all[i] === event) {
							n++;
							last = i;
						}
					}
					return n >= count;
				},
				{ timeout, interval: 50, what: `observer event ${JSON.stringify(event)}${count > 1 ? ` x${count}` : ""}` },
			);
			return last + 1;
		},
	};
	return obs;
}

/** Records a connection's status changes, opens, closes and errors. */
export function watchConn(conn) {
	const rec = { statuses: [], opens: 0, closes: 0, errors: [] };
	conn.onStatusChange((s) => rec.statuses.push(s));
	conn.onOpen(() => rec.opens++);
	conn.onClose(() => rec.closes++);
	conn.onError((e) => rec.errors.push(e));
	return rec;
}

/** Disposes a connection without letting a stuck socket hang the test. */
export async function disposeConn(conn, ms = 5_000) {
	if (!conn) return;
	await withTimeout(conn.dispose(), ms, "conn.dispose()").catch(() => {});
}

/** Wraps the client's raw WebSocket (handle.webSocket) with a bounded message queue. */
export function trackWs(ws) {
	ws.binaryType = "arraybuffer";
	const queue = [];
	const seen = [];
	let wake;
	let closeEv;
	ws.addEventListener("message", (ev) => {
		queue.push(ev.data);
		seen.push(ev.data);
		wake?.();
	});
	ws.addEventListener("close", (ev) => {
		closeEv = { code: ev.code, reason: ev.reason };
		wake?.();
	});
	const waitWake = (left) =>
		new Promise((resolve) => {
			const t = setTimeout(resolve, left);
			wake = () => {
				clearTimeout(t);
				wake = undefined;
				resolve();
			};
		});
	return {
		ws,
		/** Every message received so far, in order. */
		seen,
		get closeEvent() {
			return closeEv;
		},
		async next(ms = 10_000) {
			const deadline = Date.now() + ms;
			while (queue.length === 0) {
				if (closeEv) throw new Error(`socket closed (${closeEv.code} ${closeEv.reason}) while waiting for a message`);
				const left = deadline - Date.now();
				if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for a raw WebSocket message`);
				await waitWake(left);
			}
			return queue.shift();
		},
		close() {
			try {
				ws.close();
			} catch {}
		},
	};
}
