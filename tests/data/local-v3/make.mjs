// Writes a local-mode data directory with the release before issue 30 step 3 (schema version 3):
// a counter with state, an actor with input, a sleepy actor with two pending schedules and an
// open connection (SIGKILL leaves its row), then SIGKILL.
import { spawn } from "node:child_process";
import { createClient } from "rivetkit/client";
const [bin, dir, port] = process.argv.slice(2);
const child = spawn(bin, ["--host", "127.0.0.1", "--port", port, "--data-dir", dir], { stdio: "inherit" });
const endpoint = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { await fetch(`${endpoint}/metadata`); break; } catch { await new Promise((r) => setTimeout(r, 100)); }
}
const client = createClient({ endpoint, encoding: "json" });
const counter = client.counter.getOrCreate(["migrated-counter"]);
await counter.increment(41);
await counter.increment(1);
const withInput = await client.withInput.create(["migrated-input"], { input: { name: "from v3", list: [1, 2, 3] } });
await withInput.getInput();
const sleepy = client.sleepy.getOrCreate(["migrated-sleepy"]);
await sleepy.scheduleIncrementAt(4102444800000, 5); // 2100-01-01: still pending when read
await sleepy.scheduleIncrementAt(4102444800001, 7);
const conn = sleepy.connect();
await conn.getCount?.().catch(() => {});
const ids = {
  counter: await counter.resolve(),
  withInput: await withInput.resolve(),
  sleepy: await sleepy.resolve(),
};
console.log(JSON.stringify(ids));
await new Promise((r) => setTimeout(r, 500));
child.kill("SIGKILL");
await new Promise((r) => child.on("exit", r));
process.exit(0);
