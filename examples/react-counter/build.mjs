// Bundles the page into dist/ (index.html + app.js) with esbuild.
//   node build.mjs            -> dist/
//   node build.mjs --serve    -> dist/ and a static server on http://127.0.0.1:5173
//   node build.mjs --out DIR  -> DIR instead of dist/
import { build, context } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const outdir = resolve(outIndex >= 0 ? args[outIndex + 1] : join(here, "dist"));

mkdirSync(outdir, { recursive: true });
copyFileSync(join(here, "index.html"), join(outdir, "index.html"));
const options = {
	entryPoints: [join(here, "src/main.tsx")],
	outfile: join(outdir, "app.js"),
	bundle: true,
	format: "esm",
	platform: "browser",
	target: "es2022",
	jsx: "automatic",
	minify: true,
	sourcemap: true,
	define: { "process.env.NODE_ENV": '"production"' },
	logLevel: "warning",
};

if (args.includes("--serve")) {
	const ctx = await context(options);
	await ctx.rebuild();
	const { port } = await ctx.serve({ servedir: outdir, host: "127.0.0.1", port: 5173 });
	console.log(`page on http://127.0.0.1:${port}/?endpoint=http://127.0.0.1:6420`);
} else {
	await build(options);
	console.log(`built ${outdir}`);
}
