// The fixture actors of the rivetkit-cpp integration tests, written for the
// official rivetkit 2.3.19 runtime. Used only by reference/fixture-server.mjs to
// check the tests themselves against the reference implementation.
import { actor, setup, UserError } from "rivetkit";

const counter = actor({
	state: { count: 0 },
	actions: {
		increment: (c, amount) => {
			c.state.count += amount;
			c.broadcast("newCount", c.state.count);
			return c.state.count;
		},
		getCount: (c) => c.state.count,
		echo: (_c, ...args) => args,
		fail: () => {
			throw new UserError("this action always fails", { code: "my_code", metadata: { a: 1 } });
		},
		slow: async (_c, ms) => {
			await new Promise((r) => setTimeout(r, ms));
			return "done";
		},
		big: (_c, n) => "x".repeat(n),
		whisper: (c, msg) => {
			c.conn.send("whisper", msg);
			return true;
		},
	},
	onRequest: async (_c, request) => {
		const url = new URL(request.url);
		const headers = {};
		request.headers.forEach((v, k) => {
			headers[k.toLowerCase()] = v;
		});
		const body = await request.text();
		return new Response(JSON.stringify({ path: url.pathname, search: url.search, method: request.method, headers, body }), {
			headers: { "content-type": "application/json", "x-custom": "1" },
		});
	},
	onWebSocket: (_c, ws) => {
		ws.send("hello from actor");
		ws.addEventListener("message", (ev) => {
			if (typeof ev.data === "string") ws.send(`echo:${ev.data}`);
			else ws.send(ev.data);
		});
	},
});

const guarded = actor({
	state: {},
	onBeforeConnect: (_c, params) => {
		if (params?.token !== "ok") throw new UserError("bad token", { code: "forbidden_token" });
	},
	createConnState: (_c, params) => ({ user: params?.user ?? "anon" }),
	actions: {
		whoami: (c) => c.conn.state.user,
	},
});

const withInput = actor({
	createState: (_c, input) => ({ input }),
	actions: {
		getInput: (c) => c.state.input,
	},
});

const lifecycle = actor({
	state: { created: 0, woken: 0 },
	onCreate: (c) => {
		c.state.created += 1;
	},
	onWake: (c) => {
		c.state.woken += 1;
	},
	actions: {
		getLifecycle: (c) => ({ ...c.state }),
	},
});

export const registry = setup({ use: { counter, guarded, withInput, lifecycle } });
