#!/usr/bin/env node
// report.mjs RESULTS_DIR BASELINE_MD KNOWN_FAILURES_JSON > latest.md
//
// Turns one run of Rivet's driver suite against rivetkit_driver_fixture (run.sh's RESULTS_DIR:
// <encoding>/<file>.json vitest reports, <encoding>/walltime.tsv, run-info.txt) into the table
// `make conformance` keeps in tests/conformance/results/latest.md: per file and encoding
// pass/fail/skip beside the official runtime's json baseline, then every failing test with the
// reason for it. A reason comes from known-failures.json (a feature a later issue builds, ...),
// or is "the official runtime fails it too" when the baseline lists it; anything else is marked
// UNEXPLAINED: a defect to fix, not to list.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const [resultsDir, baselinePath, knownPath] = process.argv.slice(2);
if (!resultsDir) {
	console.error("usage: report.mjs RESULTS_DIR [BASELINE_MD] [KNOWN_FAILURES_JSON]");
	process.exit(2);
}

// The baseline's tables: "| file | pass | fail | skip | total | ..." rows and "- file: test" lines.
function readBaseline(path) {
	const files = {};
	const failed = new Set();
	if (!path || !existsSync(path)) return { files, failed };
	for (const line of readFileSync(path, "utf8").split("\n")) {
		const row = line.match(/^\|\s*([a-z0-9-]+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|/);
		if (row) files[row[1]] = { pass: +row[2], fail: +row[3], skip: +row[4], total: +row[5] };
		const f = line.match(/^- ([a-z0-9-]+): (.+)$/);
		if (f) failed.add(`${f[1]}: ${f[2].trim()}`);
	}
	return { files, failed };
}

const baseline = readBaseline(baselinePath);
const known = knownPath && existsSync(knownPath) ? JSON.parse(readFileSync(knownPath, "utf8")) : [];

function reasonFor(file, title) {
	for (const k of known) {
		if (k.file !== file) continue;
		// "*" any test, "prefix*" a title's start, "*part*" anywhere in it.
		const contains = k.test.length > 2 && k.test.startsWith("*") && k.test.endsWith("*");
		if (
			k.test === "*" ||
			k.test === title ||
			(contains && title.includes(k.test.slice(1, -1))) ||
			(!contains && k.test.endsWith("*") && title.startsWith(k.test.slice(0, -1)))
		) {
			return k.reason;
		}
	}
	if (baseline.failed.has(`${file}: ${title}`)) return "the official runtime fails it too (baseline)";
	return undefined;
}

const encodings = readdirSync(resultsDir)
	.filter((d) => statSync(join(resultsDir, d)).isDirectory())
	.sort((a, b) => ["json", "cbor", "bare"].indexOf(a) - ["json", "cbor", "bare"].indexOf(b));
const perFile = {}; // file -> enc -> {pass, fail, skip, total, note, wall}
const failures = {}; // "file\ttitle" -> {file, title, encs: [], message}
let wallTotal = 0;
for (const enc of encodings) {
	const dir = join(resultsDir, enc);
	const rcs = {};
	const walls = {};
	const wt = join(dir, "walltime.tsv");
	if (existsSync(wt)) {
		for (const line of readFileSync(wt, "utf8").split("\n")) {
			const [f, s, rc] = line.split("\t");
			if (f) {
				walls[f] = +s;
				rcs[f] = rc;
				wallTotal += +s;
			}
		}
	}
	for (const f of Object.keys(walls)) {
		const r = { pass: 0, fail: 0, skip: 0, total: 0, note: "", wall: walls[f] };
		const jp = join(dir, `${f}.json`);
		if (!existsSync(jp)) {
			r.note = `no report (rc=${rcs[f]}${rcs[f] === "124" ? ": file timeout" : ""})`;
		} else {
			const report = JSON.parse(readFileSync(jp, "utf8"));
			for (const tr of report.testResults ?? []) {
				for (const a of tr.assertionResults ?? []) {
					r.total++;
					if (a.status === "passed") r.pass++;
					else if (a.status === "failed") {
						r.fail++;
						const key = `${f}\t${a.title}`;
						failures[key] ??= { file: f, title: a.title, encs: [], message: "" };
						failures[key].encs.push(enc);
						failures[key].message ||= (a.failureMessages?.[0] ?? "").split("\n")[0].slice(0, 240);
					} else r.skip++;
				}
			}
		}
		(perFile[f] ??= {})[enc] = r;
	}
}

const out = [];
const info = existsSync(join(resultsDir, "run-info.txt")) ? readFileSync(join(resultsDir, "run-info.txt"), "utf8") : "";
const pick = (k) => (info.match(new RegExp(`^${k}: (.*)$`, "m")) ?? [])[1] ?? "?";
out.push("# Rivet's driver suite against rivetkit_driver_fixture", "");
out.push(
	`Run ${pick("date")}; suite ${pick("suite commit").slice(0, 12)}; rivetkit ${pick("rivetkit")} client and engine; ` +
		`encodings ${encodings.join(", ")}; ${Math.round(wallTotal / 60)} min of test files. ` +
		"Made by `make conformance` (tests/conformance/README.md); the baseline is the official TypeScript runtime, json, on these machines.",
	"",
);
const cell = (r) => (r ? `${r.pass}/${r.fail}/${r.skip}` : "-");
out.push(`| file | ${encodings.map((e) => `${e} pass/fail/skip`).join(" | ")} | baseline (json) | note |`);
out.push(`|---|${encodings.map(() => "---:").join("|")}|---:|---|`);
const totals = Object.fromEntries(encodings.map((e) => [e, { pass: 0, fail: 0, skip: 0 }]));
const btot = { pass: 0, fail: 0, skip: 0 };
for (const f of Object.keys(perFile).sort()) {
	const b = baseline.files[f];
	const notes = encodings.map((e) => perFile[f][e]?.note).filter(Boolean);
	out.push(`| ${f} | ${encodings.map((e) => cell(perFile[f][e])).join(" | ")} | ${b ? `${b.pass}/${b.fail}/${b.skip}` : "-"} | ${[...new Set(notes)].join("; ")} |`);
	for (const e of encodings) {
		for (const k of ["pass", "fail", "skip"]) totals[e][k] += perFile[f][e]?.[k] ?? 0;
	}
	if (b) for (const k of ["pass", "fail", "skip"]) btot[k] += b[k];
}
out.push(`| **total** | ${encodings.map((e) => `**${cell(totals[e])}**`).join(" | ")} | **${cell(btot)}** | |`, "");

const list = Object.values(failures).sort((a, b) => (a.file + a.title).localeCompare(b.file + b.title));
const explained = list.filter((x) => reasonFor(x.file, x.title));
const unexplained = list.filter((x) => !reasonFor(x.file, x.title));
out.push(`## Failures (${list.length}: ${explained.length} with a reason, ${unexplained.length} unexplained)`, "");
if (unexplained.length) {
	out.push("### UNEXPLAINED (defects to fix)", "");
	for (const x of unexplained) out.push(`- ${x.file}: ${x.title} [${x.encs.join(", ")}]`, `  - ${x.message}`);
	out.push("");
}
const byReason = {};
for (const x of explained) (byReason[reasonFor(x.file, x.title)] ??= []).push(x);
for (const [reason, xs] of Object.entries(byReason).sort()) {
	out.push(`### ${reason}`, "");
	for (const x of xs) out.push(`- ${x.file}: ${x.title} [${x.encs.join(", ")}]`);
	out.push("");
}
console.log(out.join("\n"));
