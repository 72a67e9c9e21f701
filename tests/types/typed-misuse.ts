// Misuses of typed_actors.d.ts: tsc must reject exactly the lines marked `// error`.
import { createClient } from "rivetkit/client";
import type { Item, Registry } from "./typed_actors";

export async function misuseCart(): Promise<void> {
	const client = createClient<Registry>("http://localhost:6420");
	const cart = client["shopping-cart"].getOrCreate(["typed"]);
	await cart.add({ sku: "a1", quantity: "2", price: null, tags: [] }); // error: quantity is a number
	await cart.add({ sku: "a1", quantity: 2, price: null }); // error: tags is required
	const found: Item = await cart.find("a1"); // error: find may return null
	await cart.list("ten"); // error: the limit is a number
	const token: string = await cart.token(); // error: bytes are a Uint8Array
	await cart.admin.reset("yes"); // error: a boolean
	await cart.admin.wipe(); // error: no such nested action
	await cart.send("orders", { id: 1, items: [] }); // error: the order id is a string
	await cart.send("returns", {}); // error: no such queue
	const conn = cart.connect();
	conn.on("added", (items: Item[]) => console.log(items)); // error: added carries one Item
	console.log(found, token);
}
