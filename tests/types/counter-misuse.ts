// Misuses of the example counter's generated types: tsc must reject exactly the lines marked
// `// error` (tests/types/check_types.cmake compares the lines it reports with the marks).
import { createClient } from "rivetkit/client";
import type { Registry } from "./counter";

export async function misuseCounter(): Promise<void> {
	const client = createClient<Registry>("http://localhost:6420");
	const counter = client.counter.getOrCreate(["typed"]);
	await counter.increment("five"); // error: an int64 parameter is a number
	await counter.increment(); // error: the amount is required
	await counter.increment(1, 2); // error: one parameter
	const label: string = await counter.getCount(); // error: getCount returns a number
	await counter.decrement(1); // error: no such action
	client.countr.getOrCreate(["typed"]); // error: no such actor

	const conn = counter.connect();
	conn.on("newCount", (next: string) => console.log(next)); // error: newCount carries a number
	conn.on("oldCount", () => {}); // error: no such event
	console.log(label);
}
