// Helpers shared by the tests of the examples under examples/: where ctest put the built binary,
// and the shape of an error a user's action throws.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { ActorError } from "./server.mjs";

// The path of a built example binary, named by an environment variable ctest sets
// (tests/integration/CMakeLists.txt); a clear failure when it is missing.
export function examplePath(envName) {
	const bin = process.env[envName];
	if (!bin || !existsSync(bin)) {
		throw new Error(`${envName}=${bin ?? ""} does not name a built example binary (ctest sets it)`);
	}
	return bin;
}

// For assert.rejects: the error is the official client's ActorError with group "user" and `code`.
export function isUserError(err, code) {
	assert.ok(err instanceof ActorError, `expected an ActorError, got ${err?.stack ?? err}`);
	assert.equal(`${err.group}.${err.code}`, `user.${code}`, `error: ${err.message}`);
	return true;
}
