// The inspector token of an actor, as Rivet's dashboard reads it: its KV key [3] (base64 "Aw=="),
// through the engine's API in engine mode, or the same route of the server in local mode.
import assert from "node:assert/strict";

/** `apiEndpoint`: the engine's endpoint in engine mode, the server's in local mode. */
export async function inspectorToken(apiEndpoint, actorId) {
	const res = await fetch(`${apiEndpoint}/actors/${actorId}/kv/keys/${encodeURIComponent("Aw==")}?namespace=default`, {
		headers: { authorization: "Bearer dev" },
	});
	assert.equal(res.status, 200, `kv get: ${await res.clone().text()}`);
	return Buffer.from((await res.json()).value, "base64").toString("utf8");
}
