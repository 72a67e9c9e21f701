// Minimal, independent wire codecs for the raw-protocol tests (bad input,
// gateway details, frame ordering). Deliberately NOT the client's own codecs:
// these tests check the server's bytes against the spec, not against the
// client's implementation.
//
// References: client-protocol.md §6.3 (HTTP action bodies), §6.5 (HTTP error
// bodies), §6.8 (/connect messages), §7.2 (CBOR), §7.3 (BARE + version prefix).

import net from "node:net";
import { randomBytes } from "node:crypto";

// ----------------------------------------------------------------------------
// CBOR

/** Forces the 8-byte unsigned form (0x1b), as connection ids must be written. */
export class U64 {
	constructor(value) {
		this.value = BigInt(value);
	}
}

function cborHead(major, n, out) {
	const m = major << 5;
	if (typeof n === "bigint") {
		out.push(m | 27);
		for (let i = 7; i >= 0; i--) out.push(Number((n >> BigInt(i * 8)) & 0xffn));
		return;
	}
	if (n < 24) out.push(m | n);
	else if (n < 0x100) out.push(m | 24, n);
	else if (n < 0x10000) out.push(m | 25, n >> 8, n & 0xff);
	else if (n < 0x100000000) out.push(m | 26, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
	else cborHead(major, BigInt(n), out);
}

function cborEncodeInto(v, out) {
	if (v === null) out.push(0xf6);
	else if (v === undefined) out.push(0xf7);
	else if (v === true) out.push(0xf5);
	else if (v === false) out.push(0xf4);
	else if (v instanceof U64) cborHead(0, v.value, out);
	else if (typeof v === "bigint") {
		if (v >= 0n) cborHead(0, v, out);
		else cborHead(1, -1n - v, out);
	} else if (typeof v === "number") {
		if (Number.isInteger(v) && Math.abs(v) < 2 ** 32 && !Object.is(v, -0)) {
			if (v >= 0) cborHead(0, v, out);
			else cborHead(1, -1 - v, out);
		} else {
			const b = Buffer.alloc(8);
			b.writeDoubleBE(v);
			out.push(0xfb, ...b);
		}
	} else if (typeof v === "string") {
		const b = Buffer.from(v, "utf8");
		cborHead(3, b.length, out);
		for (const x of b) out.push(x);
	} else if (v instanceof Uint8Array) {
		cborHead(2, v.length, out);
		for (const x of v) out.push(x);
	} else if (Array.isArray(v)) {
		cborHead(4, v.length, out);
		for (const x of v) cborEncodeInto(x, out);
	} else if (typeof v === "object") {
		const entries = Object.entries(v);
		cborHead(5, entries.length, out);
		for (const [k, x] of entries) {
			cborEncodeInto(k, out);
			cborEncodeInto(x, out);
		}
	} else {
		throw new TypeError(`cannot CBOR-encode ${typeof v}`);
	}
}

export function cborEncode(value) {
	// Large strings: build with Buffer concat to avoid a huge JS array.
	if (typeof value === "string" && value.length > 4096) {
		const head = [];
		const b = Buffer.from(value, "utf8");
		cborHead(3, b.length, head);
		return Buffer.concat([Buffer.from(head), b]);
	}
	const out = [];
	cborEncodeInto(value, out);
	return Buffer.from(out);
}

/** Array of values, with large string elements encoded efficiently. */
export function cborEncodeArray(values) {
	const head = [];
	cborHead(4, values.length, head);
	return Buffer.concat([Buffer.from(head), ...values.map((v) => cborEncode(v))]);
}

export class CborTag {
	constructor(tag, value) {
		this.tag = tag;
		this.value = value;
	}
}

export function cborDecode(bytes) {
	const buf = Buffer.from(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength ?? bytes.length);
	let pos = 0;
	const need = (n) => {
		if (pos + n > buf.length) throw new Error("CBOR: truncated");
	};
	const readArg = (info) => {
		if (info < 24) return { n: info, wide: false };
		if (info === 24) {
			need(1);
			return { n: buf[pos++], wide: false };
		}
		if (info === 25) {
			need(2);
			const n = buf.readUInt16BE(pos);
			pos += 2;
			return { n, wide: false };
		}
		if (info === 26) {
			need(4);
			const n = buf.readUInt32BE(pos);
			pos += 4;
			return { n, wide: false };
		}
		if (info === 27) {
			need(8);
			const n = buf.readBigUInt64BE(pos);
			pos += 8;
			return { n, wide: true };
		}
		if (info === 31) return { n: -1, wide: false, indefinite: true };
		throw new Error(`CBOR: bad additional info ${info}`);
	};
	const item = () => {
		need(1);
		const ib = buf[pos++];
		const major = ib >> 5;
		const info = ib & 31;
		if (major === 7) {
			if (info === 20) return false;
			if (info === 21) return true;
			if (info === 22) return null;
			if (info === 23) return undefined;
			if (info === 25) {
				need(2);
				const h = buf.readUInt16BE(pos);
				pos += 2;
				const s = h & 0x8000 ? -1 : 1;
				const e = (h >> 10) & 0x1f;
				const f = h & 0x3ff;
				if (e === 0) return s * 2 ** -14 * (f / 1024);
				if (e === 31) return f ? NaN : s * Infinity;
				return s * 2 ** (e - 15) * (1 + f / 1024);
			}
			if (info === 26) {
				need(4);
				const v = buf.readFloatBE(pos);
				pos += 4;
				return v;
			}
			if (info === 27) {
				need(8);
				const v = buf.readDoubleBE(pos);
				pos += 8;
				return v;
			}
			if (info === 31) throw new Error("CBOR: unexpected break");
			return new CborTag(-1, info); // simple value
		}
		const arg = readArg(info);
		switch (major) {
			case 0:
				return arg.wide ? arg.n : arg.n;
			case 1:
				return arg.wide ? -1n - arg.n : -1 - arg.n;
			case 2:
			case 3: {
				let b;
				if (arg.indefinite) {
					const parts = [];
					while (buf[pos] !== 0xff) parts.push(Buffer.from(item()));
					pos++;
					b = Buffer.concat(parts);
				} else {
					const n = Number(arg.n);
					need(n);
					b = buf.subarray(pos, pos + n);
					pos += n;
				}
				return major === 2 ? new Uint8Array(b) : b.toString("utf8");
			}
			case 4: {
				const a = [];
				if (arg.indefinite) {
					while (buf[pos] !== 0xff) a.push(item());
					pos++;
				} else for (let i = 0; i < Number(arg.n); i++) a.push(item());
				return a;
			}
			case 5: {
				const o = {};
				const entry = () => {
					const k = item();
					o[typeof k === "string" ? k : String(k)] = item();
				};
				if (arg.indefinite) {
					while (buf[pos] !== 0xff) entry();
					pos++;
				} else for (let i = 0; i < Number(arg.n); i++) entry();
				return o;
			}
			case 6: {
				const v = item();
				if (Number(arg.n) === 64 && v instanceof Uint8Array) return v;
				return new CborTag(Number(arg.n), v);
			}
		}
		throw new Error("CBOR: unreachable");
	};
	const v = item();
	if (pos !== buf.length) throw new Error(`CBOR: ${buf.length - pos} trailing bytes`);
	return v;
}

// ----------------------------------------------------------------------------
// BARE (client-protocol v4, 2-byte LE version prefix)

export const BARE_VERSION = Buffer.from([0x04, 0x00]);

export function bareUint(n) {
	let v = BigInt(n);
	const out = [];
	do {
		let b = Number(v & 0x7fn);
		v >>= 7n;
		if (v) b |= 0x80;
		out.push(b);
	} while (v);
	return Buffer.from(out);
}
export function bareData(bytes) {
	return Buffer.concat([bareUint(bytes.length), Buffer.from(bytes)]);
}
export function bareStr(s) {
	return bareData(Buffer.from(s, "utf8"));
}
export function bareBool(b) {
	return Buffer.from([b ? 1 : 0]);
}

export class BareReader {
	constructor(bytes) {
		this.buf = Buffer.from(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, bytes.byteLength ?? bytes.length);
		this.pos = 0;
	}
	u8() {
		if (this.pos >= this.buf.length) throw new Error("BARE: truncated");
		return this.buf[this.pos++];
	}
	u16le() {
		return this.u8() | (this.u8() << 8);
	}
	uint() {
		let v = 0n;
		let shift = 0n;
		for (;;) {
			const b = this.u8();
			v |= BigInt(b & 0x7f) << shift;
			if (!(b & 0x80)) break;
			shift += 7n;
		}
		return v;
	}
	data() {
		const n = Number(this.uint());
		if (this.pos + n > this.buf.length) throw new Error("BARE: truncated data");
		const d = this.buf.subarray(this.pos, this.pos + n);
		this.pos += n;
		return d;
	}
	str() {
		return this.data().toString("utf8");
	}
	bool() {
		return this.u8() !== 0;
	}
	optional(read) {
		return this.u8() ? read() : undefined;
	}
	version() {
		return this.u16le();
	}
	end() {
		if (this.pos !== this.buf.length) throw new Error(`BARE: ${this.buf.length - this.pos} trailing bytes`);
	}
}

// ----------------------------------------------------------------------------
// HTTP action bodies (§6.3) and error bodies (§6.5)

/** Request body for POST /action/<name> in the given encoding. */
export function encodeActionRequest(encoding, args) {
	switch (encoding) {
		case "json":
			return Buffer.from(JSON.stringify({ args }), "utf8");
		case "cbor":
			// Map {"args": [...]} written with cbor-x's b9 0001 header (§7.2).
			return Buffer.concat([Buffer.from([0xb9, 0x00, 0x01]), cborEncode("args"), cborEncodeArray(args)]);
		case "bare":
			return Buffer.concat([BARE_VERSION, bareData(cborEncodeArray(args))]);
	}
	throw new Error(`unknown encoding ${encoding}`);
}

export function contentTypeFor(encoding) {
	return encoding === "json" ? "application/json" : "application/octet-stream";
}

function readActorSpecifier(r) {
	return { actorId: r.str(), generation: Number(r.uint()), key: r.optional(() => r.str()) };
}

/**
 * Decodes an actor-router / gateway response body. JSON whenever the
 * content-type says so (engine errors are always JSON, §5.4), otherwise per
 * `encoding`. Returns {output} for successes and {group, code, message,
 * metadata?, actor?} for errors.
 */
export function decodeResponseBody(encoding, { status, contentType, bytes }) {
	if ((contentType ?? "").includes("application/json") || encoding === "json") {
		return JSON.parse(Buffer.from(bytes).toString("utf8"));
	}
	if (encoding === "cbor") return cborDecode(bytes);
	const r = new BareReader(bytes);
	const version = r.version();
	if (version !== 4) throw new Error(`BARE response with version ${version}, expected 4`);
	let out;
	if (status >= 200 && status < 300) {
		out = { output: cborDecode(r.data()) };
	} else {
		out = {
			group: r.str(),
			code: r.str(),
			message: r.str(),
		};
		const metadata = r.optional(() => cborDecode(r.data()));
		if (metadata !== undefined) out.metadata = metadata;
		const actor = r.optional(() => readActorSpecifier(r));
		if (actor !== undefined) out.actor = actor;
	}
	r.end();
	return out;
}

/**
 * POST an action with raw fetch. `body` overrides the encoded args.
 * Returns {status, headers, contentType, bytes, body (decoded or undefined), decodeError}.
 */
export async function postAction(url, { encoding, args = [], body, headers = {}, encodingHeader } = {}) {
	const h = {
		"content-type": contentTypeFor(encoding),
		...headers,
	};
	const encHeader = encodingHeader === undefined ? encoding : encodingHeader;
	if (encHeader !== null) h["x-rivet-encoding"] = encHeader;
	const res = await fetch(url, {
		method: "POST",
		headers: h,
		body: body ?? encodeActionRequest(encoding, args),
		signal: AbortSignal.timeout(20_000),
	});
	return readResponse(res, encHeader === "cbor" || encHeader === "bare" ? encHeader : "json");
}

export async function readResponse(res, encoding) {
	const bytes = new Uint8Array(await res.arrayBuffer());
	const contentType = res.headers.get("content-type") ?? "";
	let decoded;
	let decodeError;
	try {
		decoded = bytes.length ? decodeResponseBody(encoding, { status: res.status, contentType, bytes }) : undefined;
	} catch (err) {
		decodeError = err;
	}
	return { status: res.status, headers: res.headers, contentType, bytes, body: decoded, decodeError };
}

// ----------------------------------------------------------------------------
// Gateway URLs (§5.1, §5.2)

export function directUrl(endpoint, actorId, path) {
	return `${endpoint}/gateway/${encodeURIComponent(actorId)}${path}`;
}

/** Query-gateway URL for getOrCreate/get, built like the client does. */
export function queryUrl(endpoint, name, path, { method = "getOrCreate", key, extra = [], runner = "default" } = {}) {
	const [p, q] = path.split("?");
	const params = new URLSearchParams(q ?? "");
	params.append("rvt-namespace", "default");
	params.append("rvt-method", method);
	if (method === "getOrCreate" && runner !== null) params.append("rvt-runner", runner);
	if (key !== undefined && key.length) params.append("rvt-key", Array.isArray(key) ? key.join(",") : key);
	if (method === "getOrCreate") params.append("rvt-crash-policy", "sleep");
	for (const [k, v] of extra) params.append(k, v);
	return `${endpoint}/gateway/${encodeURIComponent(name)}${p}?${params}`;
}

export function wsUrl(httpUrl) {
	return httpUrl.replace(/^http/, "ws");
}

// ----------------------------------------------------------------------------
// /connect messages (§6.8)

/**
 * ToServer message in the given encoding. msg: {tag:"ActionRequest", id, name, args}
 * or {tag:"SubscriptionRequest", eventName, subscribe}. Returns a string (json)
 * or a Buffer (cbor, bare).
 */
export function encodeToServer(encoding, msg) {
	if (encoding === "json") {
		const val =
			msg.tag === "ActionRequest"
				? { id: ["$BigInt", String(msg.id)], name: msg.name, args: msg.args }
				: { eventName: msg.eventName, subscribe: msg.subscribe };
		return JSON.stringify({ body: { tag: msg.tag, val } });
	}
	if (encoding === "cbor") {
		if (msg.tag === "ActionRequest") return encodeCborAction(msg);
		return cborEncode({ body: { tag: "SubscriptionRequest", val: { eventName: msg.eventName, subscribe: msg.subscribe } } });
	}
	if (encoding === "bare") {
		if (msg.tag === "ActionRequest") {
			return Buffer.concat([BARE_VERSION, Buffer.from([0]), bareUint(msg.id), bareStr(msg.name), bareData(cborEncodeArray(msg.args))]);
		}
		return Buffer.concat([BARE_VERSION, Buffer.from([1]), bareStr(msg.eventName), bareBool(msg.subscribe)]);
	}
	throw new Error(`unknown encoding ${encoding}`);
}

function encodeCborAction(msg) {
	// {body: {tag: "ActionRequest", val: {id: 1b…, name, args}}}, args spliced in.
	const head = [];
	cborHead(5, 1, head);
	return Buffer.concat([
		Buffer.from(head),
		cborEncode("body"),
		Buffer.from([0xa2]),
		cborEncode("tag"),
		cborEncode("ActionRequest"),
		cborEncode("val"),
		Buffer.from([0xa3]),
		cborEncode("id"),
		cborEncode(new U64(msg.id)),
		cborEncode("name"),
		cborEncode(msg.name),
		cborEncode("args"),
		cborEncodeArray(msg.args),
	]);
}

function asNumberId(v) {
	if (v === null || v === undefined) return v ?? null;
	if (Array.isArray(v) && v[0] === "$BigInt") return Number(v[1]);
	return Number(v);
}

/**
 * Decodes a ToClient frame. Returns {tag, ...fields} with ids as numbers and
 * an `idForm` telling how the id was written ("bigint-compat", "u64", "number").
 */
export function decodeToClient(encoding, data) {
	if (encoding === "json") {
		const text = typeof data === "string" ? data : Buffer.from(data).toString("utf8");
		const { body } = JSON.parse(text);
		const val = body.val;
		const out = { tag: body.tag, ...val };
		if ("id" in val) {
			out.idForm = Array.isArray(val.id) ? "bigint-compat" : typeof val.id;
			out.id = asNumberId(val.id);
		}
		if ("actionId" in val) {
			out.actionIdForm = val.actionId === null ? "null" : Array.isArray(val.actionId) ? "bigint-compat" : typeof val.actionId;
			out.actionId = asNumberId(val.actionId);
		}
		return out;
	}
	if (typeof data === "string") throw new Error(`expected a binary frame for ${encoding}, got text: ${data.slice(0, 200)}`);
	if (encoding === "cbor") {
		const { body } = cborDecode(new Uint8Array(data));
		const val = body.val;
		const out = { tag: body.tag, ...val };
		if ("id" in val) {
			out.idForm = typeof val.id === "bigint" ? "u64" : typeof val.id;
			out.id = asNumberId(val.id);
		}
		if ("actionId" in val) {
			out.actionIdForm = val.actionId === null ? "null" : typeof val.actionId === "bigint" ? "u64" : typeof val.actionId;
			out.actionId = asNumberId(val.actionId);
		}
		return out;
	}
	const r = new BareReader(new Uint8Array(data));
	const version = r.version();
	if (version !== 4) throw new Error(`BARE frame with version ${version}, expected 4`);
	const tag = r.u8();
	let out;
	switch (tag) {
		case 0:
			out = { tag: "Init", actorId: r.str(), connectionId: r.str() };
			break;
		case 1: {
			out = { tag: "Error", group: r.str(), code: r.str(), message: r.str() };
			const metadata = r.optional(() => cborDecode(r.data()));
			if (metadata !== undefined) out.metadata = metadata;
			const actionId = r.optional(() => r.uint());
			out.actionId = actionId === undefined ? null : Number(actionId);
			out.actionIdForm = actionId === undefined ? "null" : "uint";
			const actor = r.optional(() => readActorSpecifier(r));
			if (actor !== undefined) out.actor = actor;
			break;
		}
		case 2:
			out = { tag: "ActionResponse", id: Number(r.uint()), idForm: "uint", output: cborDecode(r.data()) };
			break;
		case 3:
			out = { tag: "Event", name: r.str(), args: cborDecode(r.data()) };
			break;
		default:
			throw new Error(`BARE ToClient: unknown tag ${tag}`);
	}
	r.end();
	return out;
}

/** Sec-WebSocket-Protocol list the client offers for /connect (§6.8). */
export function connectProtocols(encoding, params) {
	const p = ["rivet", `rivet_encoding.${encoding}`];
	if (params !== undefined) p.push(`rivet_conn_params.${encodeURIComponent(JSON.stringify(params))}`);
	return p;
}

// ----------------------------------------------------------------------------
// WebSocket helpers (Node 22 global WebSocket)

/**
 * Opens a WebSocket and records every event. All waits are bounded.
 * Returns {ws, protocol, opened, next(ms), nextMessage(ms), closed(ms), send(), close()}.
 */
export function openWs(url, protocols) {
	const ws = new WebSocket(url, protocols);
	ws.binaryType = "arraybuffer";
	const events = [];
	let waiters = [];
	const push = (ev) => {
		events.push(ev);
		const w = waiters;
		waiters = [];
		for (const f of w) f();
	};
	let openResolve;
	let openReject;
	const opened = new Promise((res, rej) => {
		openResolve = res;
		openReject = rej;
	});
	opened.catch(() => {});
	ws.addEventListener("open", () => openResolve());
	ws.addEventListener("message", (ev) => push({ type: "message", data: ev.data }));
	ws.addEventListener("error", () => push({ type: "error" }));
	ws.addEventListener("close", (ev) => {
		openReject(new Error(`closed before open: ${ev.code} ${ev.reason}`));
		push({ type: "close", code: ev.code, reason: ev.reason, wasClean: ev.wasClean });
	});
	let cursor = 0;
	const nextEvent = async (ms, what) => {
		const deadline = Date.now() + ms;
		for (;;) {
			while (cursor < events.length) {
				const ev = events[cursor++];
				if (ev.type !== "error") return ev;
			}
			const left = deadline - Date.now();
			if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
			await new Promise((resolve) => {
				const t = setTimeout(resolve, left);
				waiters.push(() => {
					clearTimeout(t);
					resolve();
				});
			});
		}
	};
	return {
		ws,
		events,
		opened,
		get protocol() {
			return ws.protocol;
		},
		/** Next message or close event. */
		next: (ms = 10_000) => nextEvent(ms, "a WebSocket message or close"),
		/** Next message; throws if the socket closed instead. */
		async nextMessage(ms = 10_000) {
			const ev = await nextEvent(ms, "a WebSocket message");
			if (ev.type === "close") throw new Error(`socket closed (${ev.code} ${JSON.stringify(ev.reason)}) while waiting for a message`);
			return ev.data;
		},
		/** Waits for the close event; returns {code, reason, messages} (messages seen on the way). */
		async closed(ms = 10_000) {
			const messages = [];
			for (;;) {
				const ev = await nextEvent(ms, "the WebSocket to close");
				if (ev.type === "close") return { code: ev.code, reason: ev.reason, wasClean: ev.wasClean, messages };
				messages.push(ev.data);
			}
		},
		send: (data) => ws.send(data),
		close: (code, reason) => {
			try {
				ws.close(code, reason);
			} catch {}
		},
	};
}

/**
 * A /connect session over the given encoding: opens the socket, waits for
 * Init, then offers action()/subscribe() helpers and a typed frame reader.
 */
export async function openConnect(url, encoding, { params, ms = 10_000 } = {}) {
	const sock = openWs(url, connectProtocols(encoding, params));
	let nextId = 0;
	const conn = {
		sock,
		encoding,
		init: undefined,
		async frame(timeout = ms) {
			const data = await sock.nextMessage(timeout);
			return decodeToClient(encoding, data);
		},
		sendAction(name, args = [], id = nextId++) {
			sock.send(encodeToServer(encoding, { tag: "ActionRequest", id, name, args }));
			return id;
		},
		subscribe(eventName, subscribe = true) {
			sock.send(encodeToServer(encoding, { tag: "SubscriptionRequest", eventName, subscribe }));
		},
		/** Sends an action and returns the frames up to and including its response/error. */
		async call(name, args = [], timeout = ms) {
			const id = conn.sendAction(name, args);
			const before = [];
			for (;;) {
				const f = await conn.frame(timeout);
				if ((f.tag === "ActionResponse" && f.id === id) || (f.tag === "Error" && f.actionId === id)) {
					return { id, result: f, before };
				}
				before.push(f);
			}
		},
		close: (code = 1000, reason = "done") => sock.close(code, reason),
	};
	const first = await sock.next(ms);
	if (first.type === "close") {
		const err = new Error(`/connect closed before Init: ${first.code} ${first.reason}`);
		err.close = first;
		throw err;
	}
	conn.init = decodeToClient(encoding, first.data);
	if (conn.init.tag !== "Init") {
		const err = new Error(`first /connect frame was ${conn.init.tag}, expected Init: ${JSON.stringify(conn.init)}`);
		err.frame = conn.init;
		throw err;
	}
	return conn;
}

// ----------------------------------------------------------------------------
// A bare-metal WebSocket client over net.Socket, for what the WHATWG API cannot
// do: vanish without a close handshake, send invalid UTF-8 text, half frames.

export async function rawSocketWs({ host, port, path, protocols = [], ms = 10_000 }) {
	const socket = net.connect({ host, port });
	socket.setNoDelay(true);
	await new Promise((resolve, reject) => {
		const t = setTimeout(() => reject(new Error("raw ws: connect timed out")), ms);
		socket.once("connect", () => {
			clearTimeout(t);
			resolve();
		});
		socket.once("error", (e) => {
			clearTimeout(t);
			reject(e);
		});
	});
	socket.on("error", () => {});
	const key = randomBytes(16).toString("base64");
	const lines = [
		`GET ${path} HTTP/1.1`,
		`Host: ${host}:${port}`,
		"Upgrade: websocket",
		"Connection: Upgrade",
		`Sec-WebSocket-Key: ${key}`,
		"Sec-WebSocket-Version: 13",
	];
	if (protocols.length) lines.push(`Sec-WebSocket-Protocol: ${protocols.join(", ")}`);
	socket.write(`${lines.join("\r\n")}\r\n\r\n`);

	let buf = Buffer.alloc(0);
	let ended = false;
	let wake = () => {};
	socket.on("data", (d) => {
		buf = Buffer.concat([buf, d]);
		wake();
	});
	socket.on("close", () => {
		ended = true;
		wake();
	});
	const waitData = (deadline, what) =>
		new Promise((resolve, reject) => {
			const left = deadline - Date.now();
			if (left <= 0) return reject(new Error(`raw ws: timed out waiting for ${what}`));
			const t = setTimeout(() => reject(new Error(`raw ws: timed out waiting for ${what}`)), left);
			wake = () => {
				clearTimeout(t);
				wake = () => {};
				resolve();
			};
		});

	// Response head.
	const deadline = Date.now() + ms;
	let headEnd;
	while ((headEnd = buf.indexOf("\r\n\r\n")) < 0) {
		if (ended) throw new Error("raw ws: connection closed during handshake");
		await waitData(deadline, "the handshake response");
	}
	const head = buf.subarray(0, headEnd).toString("latin1");
	buf = buf.subarray(headEnd + 4);
	const [statusLine, ...headerLines] = head.split("\r\n");
	const status = Number(statusLine.split(" ")[1]);
	const headers = {};
	for (const l of headerLines) {
		const i = l.indexOf(":");
		headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
	}

	const api = {
		socket,
		status,
		headers,
		sendFrame(opcode, payload, { fin = true } = {}) {
			const data = Buffer.from(payload);
			const mask = randomBytes(4);
			let header;
			if (data.length < 126) header = Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | data.length]);
			else if (data.length < 0x10000) {
				header = Buffer.alloc(4);
				header[0] = (fin ? 0x80 : 0) | opcode;
				header[1] = 0x80 | 126;
				header.writeUInt16BE(data.length, 2);
			} else {
				header = Buffer.alloc(10);
				header[0] = (fin ? 0x80 : 0) | opcode;
				header[1] = 0x80 | 127;
				header.writeBigUInt64BE(BigInt(data.length), 2);
			}
			const masked = Buffer.alloc(data.length);
			for (let i = 0; i < data.length; i++) masked[i] = data[i] ^ mask[i & 3];
			socket.write(Buffer.concat([header, mask, masked]));
		},
		sendText(text) {
			api.sendFrame(0x1, Buffer.from(text, "utf8"));
		},
		sendBinary(bytes) {
			api.sendFrame(0x2, bytes);
		},
		/** Next complete frame from the server: {opcode, payload, code?, reason?}. */
		async nextFrame(timeout = ms) {
			const dl = Date.now() + timeout;
			for (;;) {
				if (buf.length >= 2) {
					let len = buf[1] & 0x7f;
					let off = 2;
					if (len === 126 && buf.length >= 4) {
						len = buf.readUInt16BE(2);
						off = 4;
					} else if (len === 127 && buf.length >= 10) {
						len = Number(buf.readBigUInt64BE(2));
						off = 10;
					} else if (len >= 126) {
						len = -1;
					}
					if (len >= 0 && buf.length >= off + len) {
						const opcode = buf[0] & 0x0f;
						const payload = buf.subarray(off, off + len);
						buf = buf.subarray(off + len);
						const frame = { opcode, payload };
						if (opcode === 0x8) {
							frame.code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
							frame.reason = payload.subarray(2).toString("utf8");
						}
						return frame;
					}
				}
				if (ended) return { opcode: -1, payload: Buffer.alloc(0), eof: true };
				await waitData(dl, "a frame");
			}
		},
		/** Drop the TCP connection without any close handshake. */
		vanish() {
			socket.resetAndDestroy ? socket.resetAndDestroy() : socket.destroy();
		},
		end() {
			socket.destroy();
		},
	};
	return api;
}

/** Normalizes values for deep comparison: byte arrays of any class -> {bytes:[...]}. */
export function normalize(v) {
	if (v instanceof Uint8Array) return { bytes: [...v] };
	if (v instanceof ArrayBuffer) return { bytes: [...new Uint8Array(v)] };
	if (Array.isArray(v)) return v.map(normalize);
	if (v && typeof v === "object" && !(v instanceof CborTag)) {
		return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x)]));
	}
	return v;
}

// ----------------------------------------------------------------------------
// Plain HTTP helpers (REST API, metadata, CORS)

/** fetch with a bound; returns {status, headers, text, json (if it parses)}. */
export async function fetchText(url, init = {}) {
	const res = await fetch(url, { signal: AbortSignal.timeout(20_000), ...init });
	const text = await res.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {}
	return { status: res.status, headers: res.headers, text, json };
}

/** The actor REST API, as documented in client-protocol.md §4. */
export function restApi(endpoint, namespace = "default") {
	const q = (params) => {
		const p = new URLSearchParams(params);
		p.append("namespace", namespace);
		return p.toString();
	};
	return {
		list: (params) => fetchText(`${endpoint}/actors?${q(params)}`),
		getById: (id) => fetchText(`${endpoint}/actors?${q({ actor_ids: id })}`),
		getByKey: (name, key) => fetchText(`${endpoint}/actors?${q({ name, key })}`),
		destroy: (id) => fetchText(`${endpoint}/actors/${encodeURIComponent(id)}?${q({})}`, { method: "DELETE" }),
		create: (body) =>
			fetchText(`${endpoint}/actors?${q({})}`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify(body),
			}),
		getOrCreate: (body) =>
			fetchText(`${endpoint}/actors?${q({})}`, {
				method: "PUT",
				headers: { "content-type": "application/json" },
				body: JSON.stringify(body),
			}),
	};
}

/** §4.4 key serialization. */
export function serializeKey(parts) {
	if (parts.length === 0) return "/";
	return parts.map((p) => (p === "" ? "\\0" : p.replace(/\\/g, "\\\\").replace(/\//g, "\\/"))).join("/");
}

/** JSON for assertion messages: bigints and byte arrays printed, never throws. */
export function show(v) {
	try {
		return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? `bytes(${Buffer.from(x).toString("hex")})` : x));
	} catch (e) {
		return String(v);
	}
}
