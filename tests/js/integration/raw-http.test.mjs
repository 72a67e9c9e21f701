// Raw HTTP to the actor's onRequest via handle.fetch() (client-protocol.md §6.6).
// The fixture answers 200 JSON {path, search, method, headers, body} with
// header x-custom: 1.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, suiteTimeout, useServer, uniqueKey } from "../lib/server.mjs";

const T = { timeout: 30_000 };

async function json(res) {
	const text = await res.text();
	try {
		return JSON.parse(text);
	} catch {
		assert.fail(`response is not JSON (status ${res.status}): ${text.slice(0, 500)}`);
	}
}

describe(`raw HTTP [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(240_000) }, () => {
	const env = useServer();

	it("GET hello/world?x=1 -> 200 JSON with path, search, method and x-custom header", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const res = await h.fetch("hello/world?x=1");
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("x-custom"), "1");
		const body = await json(res);
		assert.equal(body.path, "/hello/world");
		assert.equal(body.search, "?x=1");
		assert.equal(body.method, "GET");
		assert.equal(typeof body.headers, "object");
		for (const name of Object.keys(body.headers)) assert.equal(name, name.toLowerCase(), "header names are lower-cased");
		// The gateway's rvt-* query parameters never reach the actor.
		assert.ok(!body.search.includes("rvt-"), body.search);
	}));

	it("a leading slash in the path is equivalent", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const body = await json(await h.fetch("/hello/world?x=1"));
		assert.equal(body.path, "/hello/world");
		assert.equal(body.search, "?x=1");
	}));

	it("query pairs are kept in order, including repeats", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const body = await json(await h.fetch("a/b?y=2&x=1&x=3&z="));
		assert.equal(body.path, "/a/b");
		assert.equal(body.search, "?y=2&x=1&x=3&z=");
	}));

	it("request headers are forwarded (lower-cased)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const body = await json(await h.fetch("hdr", { headers: { "X-Test-Header": "abc", "X-Other": "1, 2" } }));
		assert.equal(body.headers["x-test-header"], "abc");
		assert.equal(body.headers["x-other"], "1, 2");
	}));

	it("POST with a text body echoes the body", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const payload = "hello body ✓";
		const res = await h.fetch("post/here", { method: "POST", body: payload, headers: { "content-type": "text/plain" } });
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("x-custom"), "1");
		const body = await json(res);
		assert.equal(body.method, "POST");
		assert.equal(body.path, "/post/here");
		assert.equal(body.body, payload);
		assert.match(body.headers["content-type"], /^text\/plain/);
	}));

	it("POST with a JSON body", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const payload = { a: 1, b: [true, null, "x"] };
		const body = await json(
			await h.fetch("json", { method: "POST", body: JSON.stringify(payload), headers: { "content-type": "application/json" } }),
		);
		assert.deepStrictEqual(JSON.parse(body.body), payload);
	}));

	it("raw request bodies are not limited to 64 KiB (core-semantics §3)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const payload = "abcdefgh".repeat(32 * 1024); // 256 KiB
		const res = await h.fetch("large", { method: "POST", body: payload });
		assert.equal(res.status, 200);
		const body = await json(res);
		assert.equal(body.body.length, payload.length);
		assert.equal(body.body, payload);
	}));

	for (const method of ["PUT", "PATCH", "DELETE"]) {
		it(`${method} reaches onRequest`, T, env.wrap(async () => {
			const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
			const body = await json(await h.fetch("m", { method, body: method === "DELETE" ? undefined : "b" }));
			assert.equal(body.method, method);
			assert.equal(body.path, "/m");
		}));
	}

	it("handle params travel as x-rivet-conn-params", T, env.wrap(async () => {
		const key = uniqueKey("raw");
		const h = env.client.counter.getOrCreate([key], { params: { p: 1, s: "x" } });
		const body = await json(await h.fetch("params"));
		assert.deepStrictEqual(JSON.parse(body.headers["x-rivet-conn-params"]), { p: 1, s: "x" });
	}));

	it("getForId handles use the direct path", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		const id = await h.resolve();
		const res = await env.client.counter.getForId(id).fetch("by/id?q=2");
		assert.equal(res.status, 200);
		const body = await json(res);
		assert.equal(body.path, "/by/id");
		assert.equal(body.search, "?q=2");
	}));

	it("raw requests do not disturb actions on the same actor", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("raw")]);
		await Promise.all([h.increment(1), h.fetch("x").then((r) => r.text()), h.increment(1), h.fetch("y", { method: "POST", body: "z" }).then((r) => r.text())]);
		assert.equal(await h.getCount(), 2);
	}));
});
