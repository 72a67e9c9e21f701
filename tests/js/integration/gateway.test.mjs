// Gateway and REST details with raw fetch: metadata, health, CORS, query
// gateway errors, direct ids, header routing, actor-router paths, key commas.
// client-protocol.md §3, §4, §5, §6.1, §6.3.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { ENCODING, MODE, localOnly, suiteTimeout, useServer, uniqueKey } from "../lib/server.mjs";
import { directUrl, queryUrl, postAction, fetchText, restApi, serializeKey, encodeActionRequest, contentTypeFor } from "../lib/wire.mjs";

const T = { timeout: 30_000 };

function assertJsonError(r, status, group, code) {
	assert.equal(r.status, status, `status (body: ${r.text?.slice(0, 300)})`);
	assert.match(r.headers.get("content-type") ?? "", /application\/json/, "engine errors are JSON");
	assert.ok(r.json, `JSON body: ${r.text}`);
	assert.equal(`${r.json.group}.${r.json.code}`, `${group}.${code}`, r.text);
	assert.equal(typeof r.json.message, "string");
}

/**
 * A well-formed actor id that no actor has: a real id of this server with one
 * byte of its random part changed. Ids are 30 base-36 digits, least significant
 * first, encoding 19 bytes: version, UUID v4, datacenter label (envoy-protocol.md
 * §4.9). A mangled string would be an unparseable id, which is a 500 (§5.1).
 */
function unknownIdLike(id) {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
	let n = 0n;
	for (const c of [...id].reverse()) n = n * 36n + BigInt(alphabet.indexOf(c));
	n ^= 0x5an << (8n * 9n); // a byte in the middle of the UUID
	let out = "";
	for (let i = 0; i < id.length; i++) {
		out += alphabet[Number(n % 36n)];
		n /= 36n;
	}
	return out;
}

describe(`gateway and REST details [${ENCODING}, ${MODE}]`, { timeout: suiteTimeout(300_000) }, () => {
	const env = useServer();

	// ------------------------------------------------------------ metadata

	it(
		"GET /metadata -> 200 JSON with actorNames including the fixture actors",
		{
			...T,
			skip: localOnly("the endpoint's /metadata is the engine's own (runtime \"engine\", no actorNames); the actor's /metadata through the gateway is checked in \"actor router paths\""),
		},
		env.wrap(async () => {
		for (const path of ["/metadata", "/metadata?namespace=default"]) {
			const r = await fetchText(`${env.endpoint}${path}`);
			assert.equal(r.status, 200, r.text);
			assert.match(r.headers.get("content-type") ?? "", /application\/json/);
			assert.ok(r.json, `JSON body: ${r.text}`);
			assert.equal(typeof r.json.runtime, "string");
			assert.equal(typeof r.json.version, "string");
			assert.equal(typeof r.json.actorNames, "object", "actorNames (needed by the Swift client, §3)");
			for (const name of ["counter", "guarded", "withInput", "lifecycle"]) {
				assert.ok(name in r.json.actorNames, `actorNames has ${name}: ${r.text}`);
			}
			// A clientEndpoint would redirect the client elsewhere (§3).
			if ("clientEndpoint" in r.json) assert.equal(r.json.clientEndpoint, env.endpoint);
		}
	}),
	);

	it("GET /health -> 200", T, env.wrap(async () => {
		const r = await fetchText(`${env.endpoint}/health`);
		assert.equal(r.status, 200, r.text);
	}));

	it("GET on an unknown REST path -> 404 api.not_found", T, env.wrap(async () => {
		const r = await fetchText(`${env.endpoint}/definitely/not/a/route`);
		assertJsonError(r, 404, "api", "not_found");
	}));

	// ---------------------------------------------------------------- CORS

	it("OPTIONS preflight on /gateway/... -> 204 with the §5.4 CORS headers", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("cors")]);
		const id = await h.resolve();
		for (const url of [
			queryUrl(env.endpoint, "counter", "/action/increment", { key: ["cors"] }),
			directUrl(env.endpoint, id, "/action/increment"),
		]) {
			let res = await fetch(url, {
				method: "OPTIONS",
				headers: {
					origin: "http://example.com",
					"access-control-request-method": "POST",
					"access-control-request-headers": "content-type,x-rivet-encoding",
				},
				signal: AbortSignal.timeout(10_000),
			});
			assert.equal(res.status, 204, url);
			assert.equal(res.headers.get("access-control-allow-origin"), "http://example.com");
			assert.equal(res.headers.get("access-control-allow-credentials"), "true");
			assert.equal(res.headers.get("access-control-expose-headers"), "*");
			const methods = (res.headers.get("access-control-allow-methods") ?? "").split(",").map((m) => m.trim());
			for (const m of ["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]) assert.ok(methods.includes(m), `allow-methods has ${m}: ${methods}`);
			assert.equal(res.headers.get("access-control-allow-headers"), "content-type,x-rivet-encoding");
			assert.equal(res.headers.get("access-control-max-age"), "86400");

			// Without Origin / requested headers: wildcards.
			res = await fetch(url, { method: "OPTIONS", signal: AbortSignal.timeout(10_000) });
			assert.equal(res.status, 204);
			assert.equal(res.headers.get("access-control-allow-origin"), "*");
			assert.equal(res.headers.get("access-control-allow-headers"), "*");
		}
		// The preflight did not touch the actor.
		assert.equal(await h.getCount(), 0);
	}));

	it("routed responses carry access-control-allow-origin (echoed Origin, or *)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("cors2")]);
		const id = await h.resolve();
		const url = directUrl(env.endpoint, id, "/action/increment");
		let r = await postAction(url, { encoding: ENCODING, args: [1], headers: { origin: "http://example.com" } });
		assert.equal(r.status, 200);
		assert.equal(r.headers.get("access-control-allow-origin"), "http://example.com");
		assert.equal(r.headers.get("access-control-allow-credentials"), "true");
		assert.equal(r.headers.get("access-control-expose-headers"), "*");
		r = await postAction(url, { encoding: ENCODING, args: [1] });
		assert.equal(r.status, 200);
		assert.equal(r.headers.get("access-control-allow-origin"), "*");
		// Raw requests too.
		const res = await h.fetch("cors");
		assert.equal(res.headers.get("access-control-allow-origin"), "*");
		await res.text();
	}));

	// ------------------------------------------------------ actor router (§6)

	it("HTTP action wire vector for the test encoding (§6.3: increment(5) -> 5)", T, env.wrap(async () => {
		const url = queryUrl(env.endpoint, "counter", "/action/increment", { key: [uniqueKey("vec")] });
		const r = await postAction(url, { encoding: ENCODING, args: [5] });
		assert.equal(r.status, 200);
		assert.match(r.contentType, ENCODING === "json" ? /application\/json/ : /application\/octet-stream/);
		assert.deepStrictEqual(r.body, { output: 5 });
		if (ENCODING === "bare") assert.equal(Buffer.from(r.bytes).toString("hex"), "04000105");
		if (ENCODING === "json") assert.deepStrictEqual(JSON.parse(Buffer.from(r.bytes).toString()), { output: 5 });
	}));

	it("action responses carry x-rivet-actor, x-rivet-actor-key, x-rivet-actor-generation (§6.1)", T, env.wrap(async () => {
		const key = uniqueKey("hdrs");
		const h = env.client.counter.getOrCreate([key]);
		const id = await h.resolve();
		const r = await postAction(directUrl(env.endpoint, id, "/action/getCount"), { encoding: ENCODING });
		assert.equal(r.status, 200);
		assert.equal(r.headers.get("x-rivet-actor"), id);
		assert.equal(r.headers.get("x-rivet-actor-key"), serializeKey([key]));
		assert.match(r.headers.get("x-rivet-actor-generation") ?? "", /^[1-9]\d*$/);
		// Error responses from a running actor carry them too.
		const e = await postAction(directUrl(env.endpoint, id, "/action/fail"), { encoding: ENCODING });
		assert.equal(e.status, 500, "user errors are HTTP 500 (§6.5)");
		assert.equal(e.headers.get("x-rivet-actor"), id);
		assert.equal(e.body?.group, "user");
		assert.equal(e.body?.code, "my_code");
		assert.equal(e.body?.message, "this action always fails");
		assert.deepStrictEqual(e.body?.metadata, { a: 1 });
	}));

	it("unknown action over HTTP -> 404 actor.action_not_found in the request encoding", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("nf")]);
		const id = await h.resolve();
		const r = await postAction(directUrl(env.endpoint, id, "/action/nope"), { encoding: ENCODING });
		assert.equal(r.status, 404);
		assert.match(r.contentType, ENCODING === "json" ? /application\/json/ : /application\/octet-stream/);
		assert.ifError(r.decodeError);
		assert.equal(r.body.group, "actor");
		assert.equal(r.body.code, "action_not_found");
	}));

	it("actor router paths: /, /health, /metadata, unknown route, wrong method (§6.1)", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("router")]).resolve();
		let r = await fetchText(directUrl(env.endpoint, id, "/health"));
		assert.equal(r.status, 200);
		assert.equal(r.text, "ok");
		r = await fetchText(directUrl(env.endpoint, id, "/metadata"));
		assert.equal(r.status, 200);
		assert.equal(r.json?.runtime, "rivetkit");
		r = await fetchText(directUrl(env.endpoint, id, "/"));
		assert.equal(r.status, 200);
		r = await fetchText(directUrl(env.endpoint, id, "/nonexistent"));
		assertJsonError(r, 404, "actor", "not_found");
		r = await fetchText(directUrl(env.endpoint, id, "/action/increment"), { method: "GET" });
		assertJsonError(r, 405, "actor", "method_not_allowed");
	}));

	it("percent-encoded action names are decoded (§6.1)", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("pct")]).resolve();
		const r = await postAction(directUrl(env.endpoint, id, "/action/%69ncrement"), { encoding: ENCODING, args: [3] });
		assert.equal(r.status, 200);
		assert.deepStrictEqual(r.body, { output: 3 });
	}));

	// -------------------------------------------------- query gateway (§5.2)

	it("query gateway get on a missing key -> 404 actor.not_found JSON (whatever the encoding)", T, env.wrap(async () => {
		const url = queryUrl(env.endpoint, "counter", "/action/getCount", { method: "get", key: [uniqueKey("missing")] });
		const res = await fetch(url, {
			method: "POST",
			headers: { "content-type": contentTypeFor(ENCODING), "x-rivet-encoding": ENCODING },
			body: encodeActionRequest(ENCODING, []),
			signal: AbortSignal.timeout(10_000),
		});
		const r = { status: res.status, headers: res.headers, text: await res.text() };
		try {
			r.json = JSON.parse(r.text);
		} catch {}
		assertJsonError(r, 404, "actor", "not_found");
		assert.equal(res.headers.get("x-rivet-error"), "actor.not_found");
	}));

	it("query gateway parameter errors -> 400 guard.*", T, env.wrap(async () => {
		const key = [uniqueKey("qp")];
		const post = (url) =>
			fetchText(url, {
				method: "POST",
				headers: { "content-type": "application/json", "x-rivet-encoding": "json" },
				body: '{"args":[]}',
			});
		const base = (extra, opts = {}) => queryUrl(env.endpoint, "counter", "/action/getCount", { key, extra, ...opts });
		assertJsonError(await post(base([["rvt-foo", "1"]])), 400, "guard", "query_invalid_params");
		assertJsonError(await post(base([], { method: "bogus" })), 400, "guard", "query_invalid_params");
		assertJsonError(await post(base([], { runner: null })), 400, "guard", "query_missing_pool");
		assertJsonError(await post(base([["rvt-namespace", "default"]])), 400, "guard", "query_duplicate_param");
		assertJsonError(
			await post(queryUrl(env.endpoint, "counter", "/action/getCount", { method: "get", key, extra: [["rvt-input", "9g"]] })),
			400,
			"guard",
			"query_get_disallowed_params",
		);
		assertJsonError(await post(base([["rvt-input", "!!!not*base64"]])), 400, "guard", "query_invalid_base64_input");
		assertJsonError(await post(base([["rvt-input", "_w"]])), 400, "guard", "query_invalid_cbor_input"); // 0xff
		// None of these created the actor.
		const list = await restApi(env.endpoint).getByKey("counter", serializeKey(key));
		assert.equal(list.json?.actors?.length, 0, list.text);
	}));

	it(
		"invalid UTF-8 in a key, name or other rvt value -> 400 guard.query_invalid_params, REST -> 400 api.bad_request",
		{ ...T, skip: localOnly("in engine mode the engine's own gateway and REST API parse these") },
		env.wrap(async () => {
			const p = uniqueKey("utf8");
			const post = (url) =>
				fetchText(url, {
					method: "POST",
					headers: { "content-type": "application/json", "x-rivet-encoding": "json" },
					body: '{"args":[]}',
				});
			// URLSearchParams would encode the bytes as U+FFFD, so these are written by hand.
			const base = `${env.endpoint}/gateway/counter/action/increment?rvt-namespace=default&rvt-method=getOrCreate&rvt-runner=default&rvt-crash-policy=sleep`;
			for (const key of [`${p}%ff%fe`, `${p}%fe%ff`, `${p}%c0%80`, `${p}%ed%a0%80`]) {
				assertJsonError(await post(`${base}&rvt-key=${key}`), 400, "guard", "query_invalid_params");
			}
			assertJsonError(await post(`${base}&rvt-key=${p}&rvt-token=%ff`), 400, "guard", "query_invalid_params");
			assertJsonError(
				await post(`${env.endpoint}/gateway/count%ffer/action/increment?rvt-namespace=default&rvt-method=get&rvt-key=${p}`),
				400,
				"guard",
				"query_invalid_params",
			);
			// The REST API's query: a key lookup with invalid UTF-8 is refused, not answered.
			const r = await fetchText(`${env.endpoint}/actors?namespace=default&name=counter&key=${p}%ff%fe`);
			assertJsonError(r, 400, "api", "bad_request");
			// A create body whose key is not UTF-8 (raw bytes inside the JSON string) is refused.
			const body = Buffer.concat([
				Buffer.from(`{"name":"counter","key":"${p}`),
				Buffer.from([0xff, 0xfe]),
				Buffer.from('","runner_name_selector":"default","crash_policy":"sleep"}'),
			]);
			for (const method of ["PUT", "POST"]) {
				const c = await fetchText(`${env.endpoint}/actors?namespace=default`, {
					method,
					headers: { "content-type": "application/json" },
					body,
				});
				assert.equal(c.status, 400, `${method} /actors: ${c.text}`);
			}
			// Nothing was created under any spelling of the key.
			const list = await restApi(env.endpoint).list({ name: "counter" });
			assert.equal(list.status, 200, list.text);
			assert.ok(!list.json.actors.some((a) => a.key.startsWith(p)), list.text);
			// Valid non-ASCII keys work (escaped UTF-8).
			const ok = await post(`${base.replace("/action/increment", "/action/getCount")}&rvt-key=${p}%C3%A9t%C3%A9`);
			assert.equal(ok.status, 200, ok.text);
			const got = await restApi(env.endpoint).getByKey("counter", `${p}\u00e9t\u00e9`);
			assert.equal(got.json?.actors?.length, 1, got.text);
		}),
	);

	it("an action name that is not UTF-8 -> 404 actor.not_found (no such route)", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("utf8name")]).resolve();
		const r = await postAction(directUrl(env.endpoint, id, "/action/incr%ff%feement"), { encoding: ENCODING, args: [1] });
		assert.equal(r.status, 404);
		assert.equal(`${r.body?.group}.${r.body?.code}`, "actor.not_found");
		assert.equal(await env.client.counter.getForId(id).getCount(), 0);
	}));

	it("query gateway: rvt-* params are stripped, other query pairs forwarded in order", T, env.wrap(async () => {
		const url = queryUrl(env.endpoint, "counter", "/request/q?b=2&a=1&a=0", { key: [uniqueKey("strip")] });
		const r = await fetchText(url);
		assert.equal(r.status, 200, r.text);
		assert.equal(r.json.path, "/q");
		assert.equal(r.json.search, "?b=2&a=1&a=0");
	}));

	// ---------------------------------------------------- direct ids (§5.1)

	it("/gateway/{unknown id}/action/x -> 404 actor.not_found", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("known")]).resolve();
		const unknown = unknownIdLike(id);
		assert.notEqual(unknown, id);
		const r = await fetchText(directUrl(env.endpoint, unknown, "/action/getCount"), {
			method: "POST",
			headers: { "content-type": "application/json", "x-rivet-encoding": "json" },
			body: '{"args":[]}',
		});
		assertJsonError(r, 404, "actor", "not_found");
	}));

	it("/gateway/{destroyed id}/... -> 404 actor.not_found", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("gone")]).resolve();
		const del = await restApi(env.endpoint).destroy(id);
		assert.equal(del.status, 200, del.text);
		const r = await fetchText(directUrl(env.endpoint, id, "/action/getCount"), {
			method: "POST",
			headers: { "content-type": "application/json", "x-rivet-encoding": "json" },
			body: '{"args":[]}',
		});
		assertJsonError(r, 404, "actor", "not_found");
	}));

	it("/gateway/{id}@{token}/... ignores the token (§5.1)", T, env.wrap(async () => {
		const h = env.client.counter.getOrCreate([uniqueKey("tok")]);
		await h.increment(2);
		const id = await h.resolve();
		const r = await postAction(`${env.endpoint}/gateway/${id}@some-token/action/getCount`, { encoding: ENCODING });
		assert.equal(r.status, 200);
		assert.deepStrictEqual(r.body, { output: 2 });
	}));

	// ------------------------------------------------ header routing (§5.3)

	it("header routing: x-rivet-target: actor + x-rivet-actor for /request/... works", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("hdr")]).resolve();
		const res = await fetch(`${env.endpoint}/request/hello?z=1`, {
			method: "POST",
			headers: { "x-rivet-target": "actor", "x-rivet-actor": id, "content-type": "text/plain" },
			body: "ab",
			signal: AbortSignal.timeout(10_000),
		});
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("x-custom"), "1");
		const body = await res.json();
		assert.equal(body.path, "/hello");
		assert.equal(body.search, "?z=1");
		assert.equal(body.method, "POST");
		assert.equal(body.body, "ab");
	}));

	it("header routing is only for /request paths: POST /action/x -> 404 guard.no_route", T, env.wrap(async () => {
		const id = await env.client.counter.getOrCreate([uniqueKey("hdr2")]).resolve();
		const r = await fetchText(`${env.endpoint}/action/increment`, {
			method: "POST",
			headers: { "x-rivet-target": "actor", "x-rivet-actor": id, "content-type": "application/json", "x-rivet-encoding": "json" },
			body: '{"args":[1]}',
		});
		assertJsonError(r, 404, "guard", "no_route");
		assert.equal(await env.client.counter.getForId(id).getCount(), 0);
	}));

	// ------------------------------------------------------- keys (§4.4, §5.2)

	it("keys with commas: getOrCreate via the gateway vs resolve() via REST address different actors (keys-json.txt)", T, env.wrap(async () => {
		const p = uniqueKey("cm");
		const key = [`${p}a,b`, "c/d", ""];
		const h = env.client.counter.getOrCreate(key);
		// REST get-or-create (PUT /actors) with the §4.4 key `<p>a,b/c\/d/\0`.
		const restId = await h.resolve();
		// Query gateway: rvt-key=<p>a,b,c/d, is split on commas -> [<p>a, b, c/d, ""].
		assert.equal(await h.increment(1), 1);
		const gatewayKey = [`${p}a`, "b", "c/d", ""];
		const viaGateway = await restApi(env.endpoint).getByKey("counter", serializeKey(gatewayKey));
		assert.equal(viaGateway.json?.actors?.length, 1, `the gateway created key ${serializeKey(gatewayKey)}: ${viaGateway.text}`);
		const gatewayId = viaGateway.json.actors[0].actor_id;
		assert.notEqual(gatewayId, restId);
		assert.equal(viaGateway.json.actors[0].key, serializeKey(gatewayKey));

		const viaRest = await restApi(env.endpoint).getByKey("counter", serializeKey(key));
		assert.equal(viaRest.json?.actors?.[0]?.actor_id, restId);
		assert.equal(viaRest.json.actors[0].key, `${p}a,b/c\\/d/\\0`);

		assert.equal(await env.client.counter.getForId(restId).getCount(), 0);
		assert.equal(await env.client.counter.getForId(gatewayId).getCount(), 1);
		// The split form through the gateway reaches the gateway-created actor.
		assert.equal(await env.client.counter.getOrCreate(gatewayKey).getCount(), 1);
	}));

	it("REST key escaping round-trips slashes, backslashes and empty parts (§4.4)", T, env.wrap(async () => {
		const p = uniqueKey("esc");
		const key = [`${p}x/y`, "back\\slash", ""];
		const h = env.client.counter.getOrCreate(key);
		const id = await h.resolve();
		const r = await restApi(env.endpoint).getById(id);
		assert.equal(r.json.actors[0].key, `${p}x\\/y/back\\\\slash/\\0`);
		// This key has no commas, so the gateway addresses the same actor.
		await h.increment(1);
		assert.equal(await env.client.counter.getForId(id).getCount(), 1);
	}));
});
