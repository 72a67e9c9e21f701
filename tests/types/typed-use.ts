// typed_actors.d.ts (tests/types/typed_actors.cpp) used as an application would; must compile.
import { createClient } from "rivetkit/client";
import type { Item, Receipt, Registry, ShoppingCartActorConnParams } from "./typed_actors";

export async function useCart(): Promise<void> {
	const client = createClient<Registry>("http://localhost:6420");
	const params: ShoppingCartActorConnParams = { name: "ada" };
	const cart = client["shopping-cart"].getOrCreate(["typed"], { params });
	const item: Item = { sku: "a1", quantity: 2, price: null, tags: ["new"] };
	const state = await cart.add(item);
	const token: Uint8Array = state.token;
	const counts: Record<string, number> = state.counts;
	const found: Item | null = await cart.find("a1");
	const firstTwo: Item[] = await cart.list(2);
	const all: Item[] = await cart.list();
	await cart.clear();
	const tokenAgain: Uint8Array = await cart.token();
	const n: number = await cart.tally(1, "two", { three: 3 });
	const hard: boolean = await cart.admin.reset(true);

	const conn = cart.connect();
	conn.on("added", (added: Item) => console.log(added.sku));
	conn.on("cleared", (items: Item[]) => console.log(items.length));
	conn.on("anything", (value: unknown) => console.log(value));

	const receipt = await cart.send("orders", { id: "o1", items: [item] }, { wait: true });
	const done: Receipt | undefined = receipt.response;
	await cart.send("notes", "leave at the door");
	console.log(token, counts, found, firstTwo, all, tokenAgain, n, hard, done);
}
