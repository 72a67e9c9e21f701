// The React example (examples/react-counter) in a real headless browser: Debian's Chromium driven
// by playwright-core, the page bundled from the example's own sources and packages
// (@rivetkit/react), against the C++ counter example in local mode. A click changes the count,
// another tab sees it live, and after a server restart the page reconnects by itself and shows
// the persisted count. Also: the example's types (the counter's emitted .d.ts) are current, and
// tsc accepts the page and rejects a misuse of the typed hooks.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { extname, join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { startServer, suiteTimeout, uniqueKey, withTimeout } from "../lib/server.mjs";

const T = { timeout: 120_000 };
const exampleDir = resolve(process.env.RIVETKIT_REACT_COUNTER_DIR ?? "../../examples/react-counter");
const counterBinary = process.env.RIVETKIT_EXAMPLE_COUNTER;
const emittedTypes = process.env.RIVETKIT_COUNTER_TYPES;
const chromiumPath = process.env.RIVETKIT_CHROMIUM ?? "/usr/bin/chromium";
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

function need(what, ok, how) {
	if (!ok) throw new Error(`${what} is missing: ${how}`);
}

/** Serves `dir` on an ephemeral loopback port (what `node build.mjs --serve` does for users). */
async function serveStatic(dir) {
	const types = { ".html": "text/html", ".js": "text/javascript", ".map": "application/json" };
	const server = createServer((req, res) => {
		const path = new URL(req.url, "http://x").pathname;
		const file = join(dir, path === "/" ? "index.html" : path.slice(1));
		if (!file.startsWith(dir) || !existsSync(file)) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
		createReadStream(file).pipe(res);
	});
	await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
	return { server, url: `http://127.0.0.1:${server.address().port}` };
}

describe("example react-counter in Chromium", { timeout: suiteTimeout(300_000) }, () => {
	let work;
	let site;
	let counter;
	let browser;

	before(async () => {
		need("examples/react-counter/node_modules", existsSync(join(exampleDir, "node_modules/@rivetkit/react")), "make node-deps");
		need("the counter example", counterBinary && existsSync(counterBinary), "RIVETKIT_EXAMPLE_COUNTER (ctest sets it)");
		need("Chromium", existsSync(chromiumPath), "apt-get install chromium (tools/install-deps.sh)");
		work = mkdtempSync(join(tmpdir(), "rivetkit-react-"));
		// Bundled the way the example's README says, with the example's own esbuild.
		execFileSync(process.execPath, [join(exampleDir, "build.mjs"), "--out", join(work, "dist")], { stdio: "pipe", timeout: 120_000 });
		site = await serveStatic(join(work, "dist"));
		counter = await startServer({ binary: counterBinary });
		browser = await chromium.launch({
			executablePath: chromiumPath,
			headless: true,
			// The machine has no network: no background requests, no GPU, no sandbox as root.
			args: [
				"--no-sandbox",
				"--disable-gpu",
				"--disable-quic",
				"--no-first-run",
				"--disable-background-networking",
				"--disable-component-update",
				"--disable-sync",
				"--disable-dev-shm-usage",
			],
		});
	});

	after(async () => {
		await browser?.close().catch(() => {});
		await counter?.dispose().catch(() => {});
		site?.server.close();
		if (work) rmSync(work, { recursive: true, force: true });
	});

	const countOf = (page) => page.getByTestId("count");
	const statusOf = (page) => page.getByTestId("status");

	async function expectText(locator, text, what, timeout = 30_000) {
		await withTimeout(locator.filter({ hasText: new RegExp(`^${text}$`) }).waitFor({ timeout }), timeout + 5_000, what);
	}

	it("a click changes the count, live in another tab, and it survives a server restart", T, async () => {
		const key = uniqueKey("react");
		const url = `${site.url}/?endpoint=${encodeURIComponent(counter.endpoint)}&key=${key}`;
		const context = await browser.newContext();
		const errors = [];
		try {
			const page = await context.newPage();
			page.on("pageerror", (e) => errors.push(e.message));
			await page.goto(url);
			await expectText(statusOf(page), "connected", "the hook to connect");
			await expectText(countOf(page), "0", "the initial count");

			const other = await context.newPage();
			await other.goto(url);
			await expectText(countOf(other), "0", "the second tab's count");

			await page.getByTestId("increment").click();
			await expectText(countOf(page), "1", "the count after one click");
			await expectText(countOf(other), "1", "the other tab to see the click live (newCount)");
			await page.getByTestId("increment").click();
			await page.getByTestId("increment").click();
			await expectText(countOf(other), "3", "three clicks, seen live");

			// Same port, so the page's endpoint stays right; the hook reconnects by itself.
			await counter.restart({ samePort: true });
			await expectText(statusOf(page), "connected", "the page to reconnect after the restart", 60_000);
			await expectText(countOf(page), "3", "the persisted count after the restart");
			await page.getByTestId("increment").click();
			await expectText(countOf(page), "4", "a click after the restart");
			await expectText(countOf(other), "4", "the other tab, reconnected too");
			assert.deepEqual(errors, [], "no errors in the page");
		} finally {
			await context.close().catch(() => {});
		}
	});

	it("the page's types come from the counter's emitted .d.ts, and tsc rejects a misuse", T, async () => {
		need("the emitted counter.d.ts", emittedTypes && existsSync(emittedTypes), "RIVETKIT_COUNTER_TYPES (ctest sets it)");
		assert.equal(
			readFileSync(join(exampleDir, "src/counter.d.ts"), "utf8"),
			readFileSync(emittedTypes, "utf8"),
			"examples/react-counter/src/counter.d.ts is a copy of what `rivetkit_counter --emit-types` writes: copy it again",
		);
		const check = (dir) => spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", timeout: 120_000 });
		const good = check(exampleDir);
		assert.equal(good.status, 0, `tsc on the example:\n${good.stdout}${good.stderr}`);

		// The same page with one misuse of each typed hook must not compile.
		const copy = join(work, "typed");
		cpSync(join(exampleDir, "src"), join(copy, "src"), { recursive: true });
		cpSync(join(exampleDir, "tsconfig.json"), join(copy, "tsconfig.json"));
		symlinkSync(join(exampleDir, "node_modules"), join(copy, "node_modules")); // the example's packages
		const app = readFileSync(join(copy, "src/App.tsx"), "utf8");
		for (const [from, to, wanted] of [
			["increment(1)", 'increment("one")', /TS2345/],
			['"newCount"', '"newCont"', /TS2769|TS2345/],
			['name: "counter"', 'name: "countr"', /TS2322|TS2820/],
		]) {
			assert.ok(app.includes(from), `App.tsx contains ${from}`);
			writeFileSync(join(copy, "src/App.tsx"), app.replace(from, to));
			const bad = check(copy);
			assert.notEqual(bad.status, 0, `tsc must reject ${to}`);
			assert.match(bad.stdout, wanted, `tsc's error for ${to}:\n${bad.stdout}`);
		}
		writeFileSync(join(copy, "src/App.tsx"), app);
		const restored = check(copy);
		assert.equal(restored.status, 0, `the unchanged copy compiles:\n${restored.stdout}`);
	});
});
