// /proc readings for the benchmark suite: CPU time and resident memory of a process, load
// average, and the machine's details for the results file.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";

const CLK_TCK = 100; // Linux USER_HZ on every supported kernel; /proc/PID/stat counts in it.

/// utime + stime of every thread of `pid` so far, in ms (NaN when the process is gone).
export function cpuMs(pid) {
  if (!pid) return NaN;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/// Resident set size of `pid` in KiB (NaN when the process is gone).
export function rssKiB(pid) {
  if (!pid) return NaN;
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

export function loadAvg() {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return NaN;
  }
}

/// Bytes used on disk under `dir` (du -sk).
export function diskKiB(dir) {
  try {
    return Number(execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split(/\s/)[0]);
  } catch {
    return NaN;
  }
}

function firstMatch(file, re) {
  try {
    return re.exec(readFileSync(file, "utf8"))?.[1]?.trim();
  } catch {
    return undefined;
  }
}

function run(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", cwd, stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

/// What the results file records about the machine and the software under test.
export function machineDetails(root) {
  const pkg = (p) => {
    try {
      return JSON.parse(readFileSync(`${root}/node_modules/${p}/package.json`, "utf8")).version;
    } catch {
      return undefined;
    }
  };
  return {
    cpu: firstMatch("/proc/cpuinfo", /model name\s*:\s*(.*)/) ?? os.cpus()[0]?.model,
    cores: os.cpus().length,
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: firstMatch("/etc/os-release", /PRETTY_NAME="?([^"\n]*)/),
    kernel: os.release(),
    virtualization: run("systemd-detect-virt", []) ?? "unknown",
    load_at_start: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
    node: process.version,
    rivetkit: pkg("rivetkit"),
    engine: pkg("@rivetkit/engine-cli-linux-x64-musl"),
    compiler: run("g++-12", ["--version"])?.split("\n")[0],
    git_commit: run("git", ["rev-parse", "--short", "HEAD"], root),
    date: new Date().toISOString(),
  };
}
