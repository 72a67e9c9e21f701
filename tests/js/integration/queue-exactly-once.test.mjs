// Exactly-once handling of queue messages (QueueDelivery::exactly_once, docs/queues.md) through
// the official client, in both modes and every encoding: a handler that changes the actor's state
// and its SQLite database in several turns and completes the message, with the process killed at
// each step of the first delivery (after the receive, after the changes, right after complete(),
// once the completion is durable). After the restart every case ends with the message's effects
// applied exactly once: the state, the rows and the queue agree. The actor: queueWorker
// (tests/integration/queue_worker.cpp).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, uniqueKey, waitFor, withServers, withTimeout } from "../lib/server.mjs";

const CRASH_T = { timeout: 360_000 };

describe(`queue exactly-once across crashes [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(900_000) }, () => {
	for (const step of ["start", "mid", "end", "after"]) {
		it(`a crash at "${step}": the message's state and SQL changes are applied exactly once`, CRASH_T, withServers(async (ctx) => {
			const server = await ctx.start();
			const key = [uniqueKey(`q-once-${step}`)];
			let client = ctx.client(server);
			let h = client.queueWorker.getOrCreate(key);
			await h.send("ledger", { amount: 7 });
			const exited = server.exited;
			// The call ends with the process: it is not awaited (the engine may hold it), the exit is.
			h.applyOnce(step).catch(() => {});
			await withTimeout(exited, 90_000, `the crash at ${step}`);
			await server.restart({ hard: true });
			client = ctx.client(server);
			h = client.queueWorker.getOrCreate(key);
			// Handles the message again if it is still queued and not held (the engine may retry the
			// call on the new process: then that call handles it, hidden from this one).
			const again = await withTimeout(h.applyOnce("none"), 60_000, "the handling after the restart");
			if (step === "after") {
				assert.equal(again, null, "a completion that was durable is not delivered again");
			} else if (again !== null) {
				assert.ok(again.deliveries >= 2, JSON.stringify(again));
			}
			const state = await waitFor(
				async () => {
					const s = await h.ledgerState();
					return s.queued === 0 ? s : undefined;
				},
				{ timeout: 60_000, what: "the message handled" },
			);
			assert.deepEqual(state, { applied: 7, rows: 1, sum: 7, queued: 0 });
		}));
	}
});
