// Rivet's own dashboard, as the rivet-engine 2.3.19 binary serves it at /ui/, against actors of
// rivetkit-cpp in engine mode, in Debian's Chromium (playwright-core). The dashboard lists the
// actor types, reads an actor's inspector token from the engine's actor KV (key [3], which
// rivetkit-cpp writes), and shows the actor through its inspector. Its newer inspector UI is a
// page each actor serves itself (`/inspector/ui/`, a bundle rivetkit-cpp does not have), so the
// test takes the dashboard's built-in ("legacy") inspector, which speaks the inspector WebSocket
// and HTTP routes directly: the state appears, changes live, and the connections tab lists the
// open connection.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import { ensurePool, startEngine } from "../lib/engine.mjs";
import { createClient, disposeClient, engineServerEnv, startServer, suiteTimeout, uniqueKey, withTimeout } from "../lib/server.mjs";

const T = { timeout: 180_000 };
const chromiumPath = process.env.RIVETKIT_CHROMIUM ?? "/usr/bin/chromium";

// The ids of the actor's connections, from its inspector (the token from the engine's actor KV).
async function connectionIds(handle) {
	const actorId = await handle.resolve();
	const kv = await fetch(`${currentEndpoint}/actors/${actorId}/kv/keys/${encodeURIComponent("Aw==")}?namespace=default`, {
		headers: { authorization: "Bearer dev" },
	});
	assert.equal(kv.status, 200);
	const token = Buffer.from((await kv.json()).value, "base64").toString("utf8");
	const url = new URL(await handle.getGatewayUrl());
	url.pathname = `${url.pathname.replace(/\/$/, "")}/inspector/connections`;
	const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
	assert.equal(res.status, 200);
	return (await res.json()).connections.map((c) => c.id);
}
let currentEndpoint;

describe("Rivet's dashboard (rivet-engine /ui/) shows a rivetkit-cpp actor through its inspector", { timeout: suiteTimeout(400_000) }, () => {
	let engine;
	let server;
	let client;
	let browser;

	before(async () => {
		if (!existsSync(chromiumPath)) throw new Error(`Chromium is missing at ${chromiumPath}: apt-get install chromium (tools/install-deps.sh --browser)`);
		engine = await startEngine();
		await ensurePool(engine.endpoint, "default", {});
		currentEndpoint = engine.endpoint;
		server = await startServer({ env: engineServerEnv(engine.endpoint, {}), engine });
		client = createClient({ endpoint: engine.endpoint });
		browser = await chromium.launch({
			executablePath: chromiumPath,
			headless: true,
			// No network here: the dashboard's analytics requests fail fast and are ignored.
			args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
		});
	});

	after(async () => {
		await browser?.close().catch(() => {});
		await disposeClient(client);
		await server?.dispose().catch(() => {});
		await engine?.stop().catch(() => {});
	});

	it("state (live) and connections of a counter", T, async () => {
		const key = uniqueKey("dashboard");
		const handle = client.counter.getOrCreate([key]);
		await handle.increment(7);
		const conn = handle.connect();
		await conn.getCount();
		const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
		try {
			await page.goto(`${engine.endpoint}/ui/`);
			// The namespace page lists the pool's actor types (from the envoy's metadata).
			await page.getByText("counter", { exact: true }).first().click({ timeout: 60_000 });
			await page.getByText(key, { exact: true }).first().click({ timeout: 60_000 });
			// The newer inspector UI would come from the actor itself; the dashboard offers its own
			// inspector when that page does not answer (after about 8 s).
			await page.getByText("Use legacy inspector").click({ timeout: 60_000 });
			await withTimeout(page.getByText('"count": 7').first().waitFor({ timeout: 60_000 }), 65_000, "the state in the dashboard");
			// Live: the actor's own change shows without a reload.
			await handle.increment(1);
			await withTimeout(page.getByText('"count": 8').first().waitFor({ timeout: 60_000 }), 65_000, "the state change pushed to the dashboard");
			// The open connection, as the inspector's HTTP route lists it, appears in the tab.
			const connIds = await connectionIds(handle);
			assert.equal(connIds.length, 1, JSON.stringify(connIds));
			await page.getByText("Connections", { exact: true }).first().click();
			await withTimeout(page.getByText(connIds[0]).first().waitFor({ timeout: 60_000 }), 65_000, "the connection in the dashboard");
			assert.match(await page.locator("body").innerText(), /legacy inspector/i);
		} finally {
			await page.close().catch(() => {});
			await conn.dispose();
		}
	});
});
