// System (c) of the benchmark suite: the official rivetkit 2.3.19 TypeScript runtime, connected to
// a Rivet Engine as an envoy, serving the suite's fixture actors (the same as
// bench/server/bench_server.cpp):
//   counter        state {count}; increment(by) -> count and broadcasts `newCount`; getCount();
//                  stamp(t) broadcasts `stamp`; goToSleep(); startId() (changes on every start)
//   counterUnheld  the same counter (the official runtime never holds replies for the save)
//   echo           echo(x) -> x
//   caller         callEcho(key, n): n sequential echo(i) calls to echo[key] through c.client(),
//                  each timed here; returns the n durations in ms
//   sql            a SQLite table rows(id, v) through c.db: insertEach(n, size), insertBatch(n,
//                  size), selectEach(n) (each returns the milliseconds it took inside the actor),
//                  count(), goToSleep()
//   worker         queue `jobs`, consumed by its run loop: each message taken as completable and
//                  completed with its body (a sender that waits gets it back)
// Run by bench/run.mjs with Node 22 (type stripping):  node bench/official/server.ts
// Env: RIVET_ENDPOINT (engine guard URL), RIVETKIT_ENGINE_SPAWN=never, RIVET_RUN_SERVICES=0,
//      BENCH_SLEEP_TIMEOUT_MS (counter idle sleep timeout, default 30000),
//      BENCH_MAX_MESSAGE_BYTES (message limits, default 1 MiB: the 64 KiB echo needs more than the
//      65,536-byte default once framed).
import { actor, queue, setup } from "rivetkit";
import { db } from "rivetkit/db";
import { Loop, workflow } from "rivetkit/workflow";

const sleepTimeout = Number(process.env.BENCH_SLEEP_TIMEOUT_MS ?? 30_000);
let starts = 0;

function counterActor() {
	return actor({
		state: { count: 0 },
		options: { sleepTimeout },
		createVars: () => ({ startId: ++starts }),
		actions: {
			increment: (c, by: number) => {
				c.state.count += by;
				c.broadcast("newCount", c.state.count);
				return c.state.count;
			},
			getCount: (c) => c.state.count,
			startId: (c) => c.vars.startId,
			stamp: (c, t: number) => {
				c.broadcast("stamp", t);
				return t;
			},
			goToSleep: (c) => {
				c.sleep();
				return true;
			},
		},
	});
}

export const counter = counterActor();
export const counterUnheld = counterActor();

export const echo = actor({
	state: {},
	actions: {
		echo: (_c, x: unknown) => x,
	},
});

export const caller = actor({
	state: {},
	actions: {
		callEcho: async (c, key: string, n: number) => {
			const handle = c.client<typeof registry>().echo.getOrCreate([key]);
			const took: number[] = [];
			for (let i = 0; i < n; i++) {
				const t = performance.now();
				await handle.echo(i);
				took.push(performance.now() - t);
			}
			return took;
		},
	},
});

export const worker = actor({
	state: {},
	options: { sleepTimeout },
	queues: {
		jobs: queue<unknown>(),
	},
	run: async (c) => {
		for await (const message of c.queue.iter({ names: ["jobs"], completable: true })) {
			await message.complete(message.body);
		}
	},
	actions: {
		ping: () => true,
	},
});

// wf / wfLong: bench/workflow.mjs (the same as bench/server/bench_server.cpp).
export const wf = actor({
	state: { count: 0 },
	options: { sleepTimeout },
	queues: {
		runs: queue<{ steps: number }, { ms: number }>(),
	},
	run: workflow(async (ctx) => {
		await ctx.loop("runs", async (lc) => {
			const message = await lc.queue.next<{ steps: number }>("run", {
				names: ["runs"],
				completable: true,
			});
			const t = performance.now();
			let i = 0;
			await lc.loop("steps", async (sc) => {
				if (i >= message.body.steps) return Loop.break(undefined);
				await sc.step("s", async (c) => {
					c.state.count += 1;
				});
				i += 1;
				return Loop.continue(undefined);
			});
			await message.complete?.({ ms: performance.now() - t });
			return Loop.continue(undefined);
		});
	}),
	actions: {
		count: (c) => c.state.count,
		goToSleep: (c) => {
			c.sleep();
			return true;
		},
	},
});

export const wfLong = actor({
	state: { count: 0 },
	options: { sleepTimeout },
	queues: {
		go: queue<unknown, unknown>(),
	},
	run: workflow(async (ctx) => {
		for (let i = 0; i < 1000; i++) {
			await ctx.step(`s${i}`, async (c) => {
				c.state.count += 1;
			});
		}
		await ctx.loop("serve", async (lc) => {
			const message = await lc.queue.next("go", { names: ["go"], completable: true });
			await message.complete?.(true);
			return Loop.continue(undefined);
		});
	}),
	actions: {
		done: (c) => c.state.count,
		goToSleep: (c) => {
			c.sleep();
			return true;
		},
	},
});

export const sql = actor({
	state: {},
	options: { sleepTimeout },
	db: db({
		onMigrate: async (d) => {
			await d.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
		},
	}),
	actions: {
		insertEach: async (c, n: number, size: number) => {
			const v = "x".repeat(size);
			const t = performance.now();
			for (let i = 0; i < n; i++) await c.db.execute("INSERT INTO rows (v) VALUES (?)", v);
			return performance.now() - t;
		},
		insertBatch: async (c, n: number, size: number) => {
			const v = "x".repeat(size);
			const t = performance.now();
			await c.db.transaction(async (tx) => {
				for (let i = 0; i < n; i++) await tx.execute("INSERT INTO rows (v) VALUES (?)", v);
			});
			return performance.now() - t;
		},
		selectEach: async (c, n: number) => {
			const t = performance.now();
			for (let i = 0; i < n; i++) await c.db.execute("SELECT v FROM rows WHERE id = ?", 1 + (i % 100));
			return performance.now() - t;
		},
		count: async (c) => {
			const r = await c.db.execute<{ n: number }>("SELECT count(*) AS n FROM rows");
			return r[0].n;
		},
		goToSleep: (c) => {
			c.sleep();
			return true;
		},
	},
});

const maxMessage = Number(process.env.BENCH_MAX_MESSAGE_BYTES ?? 1_048_576);

export const registry = setup({
	use: { counter, counterUnheld, echo, caller, sql, worker, wf, wfLong },
	noWelcome: true,
	maxIncomingMessageSize: maxMessage,
	maxOutgoingMessageSize: maxMessage,
});

if (process.env.RIVETKIT_RUNTIME_MODE === "serverless") {
	// Serverless (bench/serverless.mjs): listens on RIVET_PORT; the engine starts actors per request.
	registry.start();
} else {
	await registry.startAndWait();
}
console.log(`READY pid=${process.pid}`);
