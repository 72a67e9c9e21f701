#!/usr/bin/env python3
# What holds the resident pages of a live process's glibc heap (2.36, x86_64), for
# bench/idle_memory.mjs (BENCH_PAGEMAP / BENCH_INSPECT) and docs/memory.md.
#
# Walks every malloc heap (the main arena's [heap] and each 64 MiB-aligned thread arena) chunk
# by chunk through /proc/<pid>/mem, marks the chunks cached in each thread's tcache (the
# tcache_perthread_struct is the first chunk of each arena), and classifies each resident page
# (from the pagemap dump) as holding an in-use chunk, only tcache chunks (freed, but cached per
# thread: malloc_trim cannot give these pages back), or only the header of a free chunk (malloc_trim
# keeps the page that holds a free chunk's header). With a heaptrack raw recording of the same
# process (heaptrack's libheaptrack_preload.so with DUMP_HEAPTRACK_OUTPUT=<file>), the in-use
# chunks are attributed to their allocation call stacks (heaptrack's own memory shows as
# "untracked").
#
# Usage (root): heap_pages.py PID PAGES_FILE [HEAPTRACK_RAW]
#   e.g. BENCH_SMAPS=kill BENCH_PAGEMAP=/tmp/pages.txt \
#        BENCH_INSPECT="python3 bench/heap_pages.py {pid} /tmp/pages.txt" node bench/idle_memory.mjs

import bisect
import collections
import struct
import subprocess
import sys

HEAP_MAX = 1 << 26  # thread arenas are 64 MiB-aligned reservations
HEAP_INFO = 48  # sizeof(heap_info)
MALLOC_STATE = 2200  # sizeof(struct malloc_state) in glibc 2.36
TCACHE_STRUCT = 0x290  # chunk size of tcache_perthread_struct (64 u16 counts, 64 pointers)

pid = int(sys.argv[1])
pages = set(int(line, 16) for line in open(sys.argv[2]) if line.strip())
raw = sys.argv[3] if len(sys.argv) > 3 else None
mem = open(f"/proc/{pid}/mem", "rb", buffering=0)


def read(addr, n):
    mem.seek(addr)
    return mem.read(n)


heaps = []  # (first chunk, end of used part, name)
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    name = f[5] if len(f) > 5 else ""
    if name == "[heap]":
        heaps.append((lo, hi, "[heap]"))
    elif name == "" and f[1].startswith("rw") and lo % HEAP_MAX == 0:
        used = struct.unpack("<Q", read(lo + 16, 8))[0]  # heap_info.size
        first = lo + HEAP_INFO + MALLOC_STATE
        first += (-(first + 16)) % 16  # chunk2mem must be 16-aligned
        heaps.append((first, lo + used, f"arena@{lo:x}"))

chunks = []  # [start, size, state, heap]
for first, end, name in heaps:
    buf = read(first, end - first)
    p = first
    while p + 16 <= end:
        size = struct.unpack_from("<Q", buf, p - first + 8)[0] & ~7
        if size == 0 or p + size > end:
            break
        nxt = p + size
        inuse = struct.unpack_from("<Q", buf, nxt - first + 8)[0] & 1 if nxt + 16 <= end else 0
        chunks.append([p, size, "in-use" if inuse else "free", name])
        p = nxt
chunks.sort()
starts = [c[0] for c in chunks]
by_start = {c[0]: c for c in chunks}

tcached = 0
for first, _, name in heaps:
    i = bisect.bisect_left(starts, first)
    c = chunks[i] if i < len(chunks) else None
    if c is None or c[1] != TCACHE_STRUCT:
        print(f"{name}: no tcache struct found")
        continue
    data = read(c[0] + 16, TCACHE_STRUCT - 16)
    counts = struct.unpack_from("<64H", data, 0)
    entries = struct.unpack_from("<64Q", data, 128)
    for b in range(64):
        e, n = entries[b], 0
        while e and n < counts[b]:
            ch = by_start.get(e - 16)
            if ch:
                ch[2] = "tcache"
                tcached += 1
            e = (e >> 12) ^ struct.unpack("<Q", read(e, 8))[0]  # safe-linking
            n += 1

live, traces, modules = {}, [None], []
if raw:
    exe = None
    with open(raw, "rb") as f:
        for line in f:
            k = line[:1]
            if k == b"+":
                _, size, tr, ptr = line.split()
                live[int(ptr, 16)] = int(tr, 16)
            elif k == b"-":
                live.pop(int(line.split()[1], 16), None)
            elif k == b"t":
                _, ip, parent = line.split()
                traces.append((int(ip, 16), int(parent, 16)))
            elif k == b"x":
                exe = line.split()[2].decode()
            elif k == b"m":
                parts = line.split()
                if len(parts) >= 4 and parts[2] != b"-":
                    nm = parts[2].decode()
                    modules.append((int(parts[3], 16), exe if nm == "x" else nm))
    modules.sort()


def stack(tr, depth=6):
    out = []
    while tr and len(out) < depth:
        ip, tr = traces[tr]
        base, name = modules[bisect.bisect_right(modules, (ip, "\xff")) - 1]
        fn = subprocess.run(["addr2line", "-f", "-C", "-e", name, hex(ip - base - 1)],
                            capture_output=True, text=True).stdout.split("\n")[0]
        if not any(x in fn for x in ("operator new", "malloc", "heaptrack", "calloc", "realloc",
                                     "allocate", "sqlite3Malloc", "sqlite3ApiExit")):
            out.append(fn[:100])
    return " <- ".join(out)


kinds, per_heap, owners = collections.Counter(), collections.Counter(), collections.Counter()
for pg in sorted(pages):
    if not any(first - 4096 <= pg < end for first, end, _ in heaps):
        continue
    i = max(0, bisect.bisect_right(starts, pg) - 1)
    on_page = []
    while i < len(chunks) and chunks[i][0] < pg + 4096:
        if chunks[i][0] + chunks[i][1] > pg:
            on_page.append(chunks[i])
        i += 1
    used = [c for c in on_page if c[2] == "in-use"]
    kind = "in-use chunk" if used else (
        "tcache chunks only" if any(c[2] == "tcache" for c in on_page) else "free chunk header")
    kinds[kind] += 1
    per_heap[(on_page[0][3] if on_page else "?", kind)] += 1
    for c in used:
        key = live.get(c[0] + 16, "untracked") if raw else c[3]
        owners[key] += 1 / len(used)

print(f"heaps: {len(heaps)}, chunks: {len(chunks)}, tcache chunks: {tcached}")
print(f"resident heap pages: {sum(kinds.values())}")
for k, v in kinds.most_common():
    print(f"  {k}: {v} pages = {v * 4} KiB")
for (h, k), v in sorted(per_heap.items()):
    print(f"  {h} {k}: {v} pages")
print("pages with in-use chunks, by " + ("allocation call stack" if raw else "heap") + " (top 20):")
for k, v in owners.most_common(20):
    print(f"  {v:7.1f} pages: {stack(k) if raw and isinstance(k, int) else k}")
