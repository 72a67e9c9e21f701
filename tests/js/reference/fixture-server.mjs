#!/usr/bin/env node
// Reference fixture server: the same fixture actors on the official rivetkit
// 2.3.19 runtime with a locally spawned Rivet Engine, behind the same CLI as
// the C++ fixture (--host, --port, --data-dir; prints "listening on ...").
// Lets the JS tests be checked against the reference implementation:
//   RIVETKIT_FIXTURE_SERVER=$PWD/reference/fixture-server.sh node --test integration/x.test.mjs
import { parseArgs } from "node:util";
import net from "node:net";
import { mkdirSync } from "node:fs";

const { values } = parseArgs({
	options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string", default: "0" }, "data-dir": { type: "string" } },
});
async function freePort(host) {
	return await new Promise((resolve, reject) => {
		const s = net.createServer();
		s.listen(0, host, () => {
			const p = s.address().port;
			s.close(() => resolve(p));
		});
		s.on("error", reject);
	});
}
const port = Number(values.port) || (await freePort(values.host));
if (values["data-dir"]) {
	mkdirSync(values["data-dir"], { recursive: true });
	process.env.HOME = values["data-dir"];
	process.env.XDG_DATA_HOME = `${values["data-dir"]}/share`;
}
process.env.RIVET_RUN_ENGINE = "1";
process.env.RIVET_RUN_ENGINE_HOST = values.host;
process.env.RIVET_RUN_ENGINE_PORT = String(port);

const { registry } = await import("./fixture-actors.mjs");
registry.start();
// Ready when the engine answers and the default pool takes actors.
const endpoint = `http://${values.host}:${port}`;
for (let i = 0; i < 600; i++) {
	try {
		const r = await fetch(`${endpoint}/gateway/counter/action/getCount?rvt-namespace=default&rvt-method=getOrCreate&rvt-runner=default&rvt-key=__ready&rvt-crash-policy=sleep`, {
			method: "POST",
			headers: { "content-type": "application/json", "x-rivet-encoding": "json" },
			body: JSON.stringify({ args: [] }),
			signal: AbortSignal.timeout(5000),
		});
		if (r.ok) break;
	} catch {}
	await new Promise((r) => setTimeout(r, 200));
}
// The runtime spawns the engine in its own process group, so a SIGKILL of this
// process would orphan it (holding the data dir). A detached watchdog kills
// our engine children once this process is gone.
import { readdirSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";
function childPids(ppid) {
	const out = [];
	for (const d of readdirSync("/proc")) {
		if (!/^\d+$/.test(d)) continue;
		try {
			const stat = readFileSync(`/proc/${d}/stat`, "utf8");
			const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			if (Number(fields[1]) === ppid) out.push(Number(d));
		} catch {}
	}
	return out;
}
const watched = childPids(process.pid);
const watchdog = spawn(
	process.execPath,
	[
		"-e",
		`const [parent, ...pids] = process.argv.slice(1).map(Number);
		 const alive = (p) => { try { process.kill(p, 0); return true; } catch { return false; } };
		 const t = setInterval(() => {
		   if (alive(parent)) return;
		   for (const p of pids) { try { process.kill(p, "SIGKILL"); } catch {} }
		   clearInterval(t);
		 }, 100);`,
		String(process.pid),
		...watched.map(String),
	],
	{ detached: true, stdio: "ignore" },
);
watchdog.unref();
console.log(`listening on ${endpoint}`);
