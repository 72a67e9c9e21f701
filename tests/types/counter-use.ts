// The example counter's generated types (rivetkit_counter --emit-types counter.d.ts) used as a
// TypeScript application would: every line must compile (tsc --strict).
import { createClient } from "rivetkit/client";
import type { CounterActorState, Registry } from "./counter";

export async function useCounter(): Promise<number> {
	const client = createClient<Registry>("http://localhost:6420");
	const counter = client.counter.getOrCreate(["typed"]);
	const afterIncrement: number = await counter.increment(5);
	const count: number = await counter.getCount();

	const conn = counter.connect();
	const unsubscribe = conn.on("newCount", (next: number) => {
		console.log(next.toFixed(0));
	});
	const viaConnection: number = await conn.increment(1);
	unsubscribe();
	await conn.dispose();

	const state: CounterActorState = { count: afterIncrement };
	return state.count + count + viaConnection;
}
