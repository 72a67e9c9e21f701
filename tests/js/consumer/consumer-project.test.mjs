// The consumer project (tests/consumer/app/guestbook.cpp), built outside the tree from the
// installed library with find_package and with pkg-config (ctest consumer.build), serving the
// official client: typed rows from SQLite, state, events, a coroutine that waits, a user error,
// and data that survives a restart. RIVETKIT_CONSUMER_DIR: consumer.build's work directory.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
	ActorError,
	attachServerOutput,
	createClient,
	disposeClient,
	startServer,
	suiteTimeout,
	uniqueKey,
	waitFor,
} from "../lib/server.mjs";

function consumerBinary(kind) {
	const dir = process.env.RIVETKIT_CONSUMER_DIR;
	const bin = dir && join(dir, kind, "guestbook");
	if (!bin || !existsSync(bin)) {
		throw new Error(
			`RIVETKIT_CONSUMER_DIR=${dir ?? ""}: no ${kind}/guestbook (ctest consumer.build builds it)`,
		);
	}
	return bin;
}

for (const kind of ["find_package", "pkg-config"]) {
	describe(`consumer project built with ${kind}`, { timeout: suiteTimeout(120_000) }, () => {
		it("serves the official client; its data survives a restart", { timeout: 90_000 }, async () => {
			const server = await startServer({ binary: consumerBinary(kind) });
			let client = createClient({ endpoint: server.endpoint });
			try {
				const key = [uniqueKey(kind)];
				const book = client.guestbook.getOrCreate(key);
				const conn = book.connect();
				const seen = [];
				conn.on("signed", (entry) => seen.push(entry));
				assert.deepEqual(await conn.sign("ada", "hello"), { id: 1, author: "ada", text: "hello" });
				assert.deepEqual(await book.sign("grace", "hi"), { id: 2, author: "grace", text: "hi" });
				await waitFor(() => seen.length === 2, { what: "two signed events" });
				assert.equal(seen[1].author, "grace");
				await assert.rejects(book.sign("", "anonymous"), (err) => {
					assert.ok(err instanceof ActorError, `expected an ActorError, got ${err}`);
					assert.equal(`${err.group}.${err.code}`, "user.author_missing");
					return true;
				});
				assert.equal(await book.pause(20), 20);
				await conn.dispose();

				await disposeClient(client);
				await server.stop();
				await server.start({ port: server.port });
				client = createClient({ endpoint: server.endpoint });
				const again = client.guestbook.getOrCreate(key);
				assert.equal(await again.signatures(), 2);
				assert.deepEqual(
					(await again.entries()).map((e) => `${e.id}:${e.author}:${e.text}`),
					["1:ada:hello", "2:grace:hi"],
				);
			} catch (err) {
				throw attachServerOutput(err, server);
			} finally {
				await disposeClient(client);
				await server.dispose();
			}
		});
	});
}
