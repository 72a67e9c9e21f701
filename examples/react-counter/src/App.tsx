// The counter from examples/counter in a React page, through @rivetkit/react: the page keeps one
// connection to the actor, shows the count the actor broadcasts (`newCount`), and increments it.
// Every tab on the same key sees every change live; after a server restart the hook reconnects
// and the count, which the actor persisted, is still there.
import { useEffect, useState } from "react";
import { createRivetKit } from "@rivetkit/react";
// The actors' types, emitted by the C++ build (rivetkit_emit_types / --emit-types).
import type { Registry } from "./counter";

export function createCounterApp(endpoint: string) {
	const { useActor } = createRivetKit<Registry>(endpoint);

	return function Counter({ counterKey }: { counterKey: string }) {
		const counter = useActor({ name: "counter", key: [counterKey] });
		const [count, setCount] = useState<number | null>(null);

		// Live updates from every client of this counter.
		counter.useEvent("newCount", (n) => setCount(n));

		// On every (re)connect, read the count: events sent while disconnected are not replayed.
		useEffect(() => {
			if (!counter.isConnected || !counter.connection) return;
			let current = true;
			counter.connection.getCount().then((n) => {
				if (current) setCount(n);
			});
			return () => {
				current = false;
			};
		}, [counter.isConnected, counter.connection]);

		return (
			<main>
				<h1>Counter “{counterKey}”</h1>
				<p>
					Connection: <span data-testid="status">{counter.connStatus}</span>
				</p>
				<p>
					Count: <output data-testid="count">{count === null ? "…" : count}</output>
				</p>
				<button
					data-testid="increment"
					disabled={!counter.isConnected}
					onClick={() => {
						void counter.connection?.increment(1);
					}}
				>
					+1
				</button>
			</main>
		);
	};
}
