// Entry point: ?endpoint=<rivetkit-cpp server> (default http://localhost:6420) and ?key=<counter>.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createCounterApp } from "./App";

const params = new URLSearchParams(window.location.search);
const endpoint = params.get("endpoint") ?? "http://localhost:6420";
const Counter = createCounterApp(endpoint);

createRoot(document.getElementById("root")!).render(
	<StrictMode>
		<Counter counterKey={params.get("key") ?? "react"} />
	</StrictMode>,
);
