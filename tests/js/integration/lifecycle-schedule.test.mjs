// Schedules through the official client (core-semantics.md §5): one-shot
// after/at firing on a sleeping actor (the alarm wakes it), list and cancel,
// retry of a failing scheduled action, and a schedule that falls due while the
// server is down. Fixture `sleepy`: sleep_timeout 1000 ms, schedule retry delay
// 200 ms doubling, at most 4 attempts. Waits are bounded polls on outcomes;
// while waiting for an alarm only the `observer` actor (or the server's output)
// is read, so nothing but the alarm can wake the scheduled actor.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, withServers, uniqueKey, waitFor, sleep, disposeClient } from "../lib/server.mjs";
import { observer } from "../lib/lifecycle.mjs";

const T = { timeout: 60_000 };

/** Polls an action (keeps the actor awake: use only once it is awake anyway). */
async function until(fn, pred, what, timeout = 10_000) {
	let last;
	const box = await waitFor(
		async () => {
			last = await fn();
			return pred(last) ? { value: last } : false;
		},
		{ timeout, interval: 50, what },
	).catch((err) => {
		throw new Error(`${err.message} (last seen: ${JSON.stringify(last)})`);
	});
	return box.value;
}

describe(`lifecycle: schedules [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();
	const obs = () => observer(env.client);

	/**
	 * Puts the actor to sleep with goToSleep, then waits (reading only the
	 * observer) for the alarm to wake it. Returns the log index after the wake.
	 */
	async function sleepThenAlarmWake(h, key) {
		const o = obs();
		const since = await o.mark();
		assert.equal(await h.goToSleep(), true);
		const slept = await o.waitEvent(`sleepy:onSleep:${key}`, { since });
		// No request reaches this actor from here on: a wake can only be the alarm's.
		return o.waitEvent(`sleepy:onWake:${key}`, { since: slept, timeout: 20_000 });
	}

	it("schedule.after: the alarm wakes the sleeping actor and the action runs", T, env.wrap(async () => {
		const key = uniqueKey("after");
		const h = env.client.sleepy.getOrCreate([key]);
		const t0 = await h.now();
		const id = await h.scheduleIncrement(1500, 5);
		assert.equal(typeof id, "string");
		assert.ok(id.length > 0);
		const list = await h.listSchedules();
		assert.equal(list.length, 1, JSON.stringify(list));
		assert.equal(list[0].id, id);
		assert.equal(list[0].action, "increment");
		assert.ok(list[0].at >= t0 + 1500, `at=${list[0].at} is at least now+1500 (now was ${t0})`);
		assert.equal(typeof list[0].attempts, "number");

		await sleepThenAlarmWake(h, key);
		await until(() => h.getCount(), (n) => n === 5, "count 5 from the scheduled increment");
		assert.deepStrictEqual(await h.listSchedules(), [], "a fired one-shot is gone");
		assert.equal(await h.getCount(), 5, "fired once");
	}));

	it("schedule.at: fires at the given wall time on a sleeping actor", T, env.wrap(async () => {
		const key = uniqueKey("at");
		const h = env.client.sleepy.getOrCreate([key]);
		const at = (await h.now()) + 1500;
		const id = await h.scheduleIncrementAt(at, 3);
		const list = await h.listSchedules();
		assert.deepStrictEqual(
			list.map((e) => [e.id, e.at, e.action]),
			[[id, at, "increment"]],
		);
		await sleepThenAlarmWake(h, key);
		await until(() => h.getCount(), (n) => n === 3, "count 3 from the scheduled increment");
		assert.deepStrictEqual(await h.listSchedules(), []);
	}));

	it("listSchedules shows pending ones; a cancelled schedule never fires", T, env.wrap(async () => {
		const key = uniqueKey("cancel");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		const keep = await h.scheduleIncrement(1500, 1);
		const drop = await h.scheduleIncrement(1500, 100);
		const later = await h.scheduleIncrement(60_000, 1000);
		assert.notEqual(keep, drop);
		const list = await h.listSchedules();
		assert.deepStrictEqual(new Set(list.map((e) => e.id)), new Set([keep, drop, later]), JSON.stringify(list));
		assert.equal(list.at(-1).id, later, "ordered by time");
		for (const e of list) assert.equal(e.action, "increment");

		assert.equal(await h.cancelSchedule(drop), true);
		assert.equal(await h.cancelSchedule(drop), false, "a second cancel finds nothing");
		assert.equal(await h.cancelSchedule("no-such-schedule"), false);
		assert.deepStrictEqual((await h.listSchedules()).map((e) => e.id), [keep, later]);

		// `keep` and `drop` were due at the same time: when `keep` has fired, `drop` would have too.
		await sleepThenAlarmWake(h, key);
		await until(() => h.getCount(), (n) => n >= 1, "the kept schedule to fire");
		// Let the actor go idle and sleep again: nothing else may have run meanwhile.
		const since = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since });
		assert.equal(await h.getCount(), 1, "only the kept schedule ran");
		assert.deepStrictEqual((await h.listSchedules()).map((e) => e.id), [later]);
		assert.equal(await h.cancelSchedule(later), true);
		assert.deepStrictEqual(await h.listSchedules(), []);
	}));

	it("a failing scheduled action is retried with backoff until it succeeds", T, env.wrap(async () => {
		const key = uniqueKey("flaky-ok");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		await h.scheduleFlaky(100, 2);
		const life = await until(() => h.getLifecycle(), (l) => l.flaky_successes >= 1, "the flaky schedule to succeed");
		assert.equal(life.flaky_calls, 3, `two failures, then one success: ${JSON.stringify(life)}`);
		assert.equal(life.flaky_successes, 1);
		// Done for good: after the next idle sleep nothing more ran and nothing is pending.
		const since = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since });
		const end = await h.getLifecycle();
		assert.equal(end.flaky_calls, 3, JSON.stringify(end));
		assert.equal(end.flaky_successes, 1);
		assert.deepStrictEqual(await h.listSchedules(), []);
	}));

	it("a scheduled action that keeps failing is dropped after the max attempts (4)", T, env.wrap(async () => {
		const key = uniqueKey("flaky-drop");
		const o = obs();
		const h = env.client.sleepy.getOrCreate([key]);
		await h.scheduleFlaky(100, 10);
		await until(
			async () => ({ life: await h.getLifecycle(), list: await h.listSchedules() }),
			({ life, list }) => life.flaky_calls >= 4 && list.length === 0,
			"4 attempts and the schedule dropped",
			20_000,
		);
		const since = await o.mark();
		await o.waitEvent(`sleepy:onSleep:${key}`, { since });
		const end = await h.getLifecycle();
		assert.equal(end.flaky_calls, 4, `exactly 4 attempts: ${JSON.stringify(end)}`);
		assert.equal(end.flaky_successes, 0);
		assert.deepStrictEqual(await h.listSchedules(), []);
	}));
	it("a delay out of range (from a client) is refused with schedule.invalid_time, not an overflow", T, env.wrap(async () => {
		const h = env.client.sleepy.getOrCreate([uniqueKey("far")]);
		for (const delay of [9e15, -9e15, Number.MAX_SAFE_INTEGER]) {
			await assert.rejects(h.scheduleIncrement(delay, 1), (err) => {
				assert.equal(`${err.group}.${err.code}`, "schedule.invalid_time", err.message);
				return true;
			});
		}
		assert.equal((await h.listSchedules()).length, 0, "nothing was scheduled");
		assert.equal(await h.increment(1), 1, "the actor is unaffected");
	}));
});

describe(`lifecycle: schedules across a restart [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	it("a schedule that fell due while the server was down fires at start", { timeout: 90_000 }, withServers(async (ctx) => {
		const server = await ctx.start();
		const client = ctx.client(server);
		const key = uniqueKey("downtime");
		const h = client.sleepy.getOrCreate([key]);
		const id = await h.resolve();
		assert.equal(await h.increment(1), 1);
		const sid = await h.scheduleIncrement(1500, 5);
		const [entry] = await h.listSchedules();
		assert.equal(entry.id, sid);
		await disposeClient(client);

		const stopped = await server.stop();
		assert.equal(stopped.forced, false, "SIGTERM honoured");
		assert.equal(stopped.code, 0, `clean exit: ${JSON.stringify(stopped)}`);
		// Pace (not an assertion): stay down until the schedule is past due.
		while (Date.now() < entry.at + 500) await sleep(100);

		const logStart = server.log.length;
		await server.start();
		// No client request at all: the start itself must wake the actor for its due alarm.
		await waitFor(() => server.log.slice(logStart).includes(`fixture-event sleepy:onWake:${key}`), {
			timeout: 20_000,
			interval: 50,
			what: `the restarted server to wake ${key} for its overdue schedule (fixture-event in its output)`,
		});
		const after = ctx.client(server);
		const again = after.sleepy.getForId(id);
		await until(() => again.getCount(), (n) => n === 6, "count 6 (1 + the overdue scheduled 5)");
		assert.deepStrictEqual(await again.listSchedules(), []);
	}));
});
