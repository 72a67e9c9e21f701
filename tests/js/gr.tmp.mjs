import { startServer, createClient, withTimeout } from "./lib/server.mjs";
const t0 = Date.now(); const log = (...a) => console.log(((Date.now()-t0)/1000).toFixed(2), ...a);
const server = await startServer({ env: { RIVET_LOG_LEVEL: "debug" } });
const client = createClient({ endpoint: server.endpoint });
const conn = client.counter.getOrCreate(["live"]).connect();
conn.onOpen?.(() => log("open")); conn.onClose?.(() => log("close")); conn.onError?.((e) => log("error", e?.message));
log("inc", await conn.increment(1));
const st = await server.stop(); log("stopped", JSON.stringify(st));
await server.start({ port: server.port }); log("restarted on", server.port);
try { log("inc2", await withTimeout(conn.increment(1), 30000, "inc2")); } catch (e) { log("inc2 failed", e.message); }
console.log(server.output(400).split("\n").filter(l => /going|close|shutdown|websocket|stopp|connection/i.test(l)).slice(-40).join("\n"));
log("disposing"); await withTimeout(conn.dispose(), 5000, "dispose").catch(e => log(e.message));
await server.dispose(); process.exit(0);
