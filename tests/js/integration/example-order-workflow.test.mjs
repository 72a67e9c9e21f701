// The order-workflow example (examples/order-workflow: a durable workflow run handler) with the
// official client: an order sent with {wait: true} is answered once its workflow shipped it, a
// failing payment is retried and then refunded, an order the stock cannot cover is rejected, and
// a SIGKILL in the middle of an order loses no step and repeats none.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, uniqueKey, useServer, waitFor, withServers } from "../lib/server.mjs";
import { examplePath } from "../lib/example.mjs";

const T = { timeout: 60_000 };
const BIN = () => examplePath("RIVETKIT_EXAMPLE_ORDER_WORKFLOW");

describe(`example order-workflow [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer(undefined, { binary: BIN() });

	it("orders are shipped, retried, refunded or rejected, each answered to its sender", T, env.wrap(async () => {
		const shop = env.client.shop.getOrCreate([uniqueKey("shop")]);
		const shipped = await shop.send("orders", { id: "o-1", item: "book", quantity: 2 }, { wait: true, timeout: 30_000 });
		assert.deepEqual(shipped, { status: "completed", response: { id: "o-1", status: "shipped", reason: null } });
		await shop.failNextCharges(2);
		const retried = await shop.send("orders", { id: "o-2", item: "lamp", quantity: 1 }, { wait: true, timeout: 30_000 });
		assert.equal(retried.response.status, "shipped");
		await shop.failNextCharges(10);
		const refunded = await shop.send("orders", { id: "o-3", item: "book", quantity: 1 }, { wait: true, timeout: 30_000 });
		assert.deepEqual(refunded.response, { id: "o-3", status: "rejected", reason: "payment declined" });
		await shop.failNextCharges(0);
		const rejected = await shop.send("orders", { id: "o-4", item: "lamp", quantity: 5 }, { wait: true, timeout: 30_000 });
		assert.deepEqual(rejected.response, { id: "o-4", status: "rejected", reason: "out of stock" });
		const orders = await shop.getOrders();
		assert.deepEqual(orders.map((o) => [o.id, o.status, o.charge_attempts]), [
			["o-1", "shipped", 1],
			["o-2", "shipped", 3],
			["o-3", "rejected", 4],
			["o-4", "rejected", 0],
		]);
		assert.deepEqual(await shop.getStock(), { book: 8, lamp: 1 });
	}));
});

describe(`example order-workflow across a crash [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	it("a SIGKILL during the cooling-off wait: the order ships once, charged once", { ...T, skip: ENCODING !== "json" }, withServers(async (ctx) => {
		const server = await ctx.start({ binary: BIN() });
		let client = ctx.client(server);
		const key = [uniqueKey("shop-kill")];
		await client.shop.getOrCreate(key).send("orders", { id: "k-1", item: "book", quantity: 1 });
		// Usually caught in its 500 ms cooling-off wait (charged, not yet shipped).
		await waitFor(async () => ["charged", "shipped"].includes((await client.shop.getOrCreate(key).getOrders())[0]?.status),
			{ timeout: 30_000, interval: 10, what: "the charge step" });
		await server.restart({ hard: true });
		client = ctx.client(server);
		const shop = client.shop.getOrCreate(key);
		const orders = await waitFor(async () => {
			const o = await shop.getOrders();
			return o[0]?.status === "shipped" ? o : null;
		}, { timeout: 60_000, interval: 100, what: "the order shipped after the restart" });
		assert.equal(orders.length, 1);
		assert.equal(orders[0].charge_attempts, 1, "the charge did not run again");
		assert.deepEqual(await shop.getStock(), { book: 9, lamp: 2 });
	}));
});
