// Adds lockfile entries for optional platform packages that the package
// registry reachable from this workplace does not serve (e.g. darwin/win32
// builds of @rivetkit/rivetkit-napi). `npm install` silently leaves them out of
// package-lock.json, after which `npm ci` refuses the lock ("Missing: X@ from
// lock file"). A complete lock (as generated against the full registry) has an
// entry with os/cpu for each of them; npm ci then skips them on linux-x64
// without fetching anything.
//
// Usage (after every `npm install` that changes the lock):
//   node scripts/complete-lock.mjs [path/to/package-lock.json]   (default: tests/js's)
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";

const lockPath = process.argv[2]
	? resolve(process.argv[2])
	: join(dirname(fileURLToPath(import.meta.url)), "..", "package-lock.json");
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const pkgs = lock.packages;

// Platform from the package name suffix: <base>-<os>-<cpu>[-<libc>].
function platformOf(name) {
	const m = /-(darwin|linux|win32|freebsd|android)-(x64|arm64|arm|ia32)(?:-(gnu|musl|msvc|gnueabihf))?$/.exec(name);
	if (!m) return null;
	const out = { os: [m[1]], cpu: [m[2]] };
	if (m[3] === "gnu" || m[3] === "musl") out.libc = [m[3] === "gnu" ? "glibc" : "musl"];
	return out;
}

let added = 0;
for (const [path, entry] of Object.entries(pkgs)) {
	if (!entry.optionalDependencies) continue;
	for (const [dep, spec] of Object.entries(entry.optionalDependencies)) {
		const nested = `${path}/node_modules/${dep}`;
		const hoisted = `node_modules/${dep}`;
		if (pkgs[nested] || pkgs[hoisted]) continue;
		const platform = platformOf(dep);
		if (!platform) {
			console.error(`not a platform package, left alone: ${dep}@${spec} (from ${path})`);
			continue;
		}
		if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
			console.error(`not an exact version, left alone: ${dep}@${spec}`);
			continue;
		}
		pkgs[hoisted] = { version: spec, optional: true, ...platform };
		added++;
	}
}

// Keep the key order npm writes (sorted, root "" first).
const sorted = Object.fromEntries(
	Object.keys(pkgs)
		.sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b)))
		.map((k) => [k, pkgs[k]]),
);
lock.packages = sorted;
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} lock entries`);
