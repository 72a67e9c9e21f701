#!/usr/bin/env python3
"""Writes per-target libFuzzer seed corpora from the captured wire vectors.

usage: tools/fuzz-seeds.py VECTORS_DIR OUT_DIR

VECTORS_DIR is tests/data/vectors (copied from shared/vectors); OUT_DIR gets one directory per
fuzz target (OUT_DIR/fuzz_json_decode/...), each file one input named by its content hash. The
seeds are what the official client and engine really sent, so the fuzzers start from inputs that
get past the first checks. Hand-written seeds live in tests/fuzz/seeds/ and are used as well.
"""

import hashlib
import json
import pathlib
import re
import sys
import urllib.parse


def main():
    vectors = pathlib.Path(sys.argv[1])
    out = pathlib.Path(sys.argv[2])
    seeds = {}

    def add(target, data):
        if isinstance(data, str):
            data = data.encode()
        seeds.setdefault(target, set()).add(data)

    client = vectors / "client"
    for path in sorted(client.glob("*.txt")):
        name = path.name
        encoding = next((e for e in ("json", "cbor", "bare") if f"-{e}" in name), None)
        lines = path.read_text(errors="replace").splitlines()
        for i, line in enumerate(lines):
            # Request targets: every path the client used, the gateway ones for the gateway parser.
            m = re.match(r">>> [A-Z]+ (\S+) HTTP/1\.1$", line)
            if m:
                target = m.group(1)
                add("fuzz_url", target)
                if target.startswith("/gateway/"):
                    add("fuzz_gateway_path", target)
                query = urllib.parse.urlsplit(target).query
                for pair in query.split("&"):
                    key, _, value = pair.partition("=")
                    if key == "rvt-input":
                        add("fuzz_base64", urllib.parse.unquote(value))
                    elif key == "rvt-key":
                        add("fuzz_actor_key", urllib.parse.unquote_plus(value))
                continue
            # Bodies in both directions and client frames (the line after a "C->S WS" header).
            m = re.match(r"(?:>>>|<<<) body \d+B (text|hex): (.*)$", line)
            frame = None
            if line.startswith("C->S WS ") and i + 1 < len(lines):
                frame = re.match(r"\s+(text|hex): (.*)$", lines[i + 1])
            for found, is_client in ((m, line.startswith(">>>")), (frame, True)):
                if not found:
                    continue
                kind, payload = found.groups()
                if kind == "text":
                    add("fuzz_json_decode", payload)
                    add("fuzz_utf8", payload)
                    add("fuzz_compat_decode", b"\x00" + payload.encode())
                    if is_client and encoding == "json":
                        add("fuzz_client_json", payload)
                    try:
                        doc = json.loads(payload)
                    except ValueError:
                        continue
                    if isinstance(doc, dict) and isinstance(doc.get("input"), str):
                        add("fuzz_base64", doc["input"])
                    if isinstance(doc, dict) and isinstance(doc.get("key"), str):
                        add("fuzz_actor_key", doc["key"])
                else:
                    try:
                        data = bytes.fromhex(payload.split()[0])
                    except (ValueError, IndexError):
                        continue
                    if encoding == "bare":
                        if is_client:
                            add("fuzz_client_bare", data)
                    else:
                        add("fuzz_cbor_decode", data)
                        add("fuzz_compat_decode", b"\x01" + data)
                        if is_client and encoding == "cbor":
                            add("fuzz_client_cbor", data)

    # Envoy: every decoded frame, in the direction it travelled; the engine -> runtime ones also
    # with the version prefix of the serverless /start body.
    frames = vectors / "envoy" / "frames.jsonl"
    if frames.exists():
        for line in frames.read_text().splitlines():
            try:
                frame = json.loads(line)
                data = bytes.fromhex(frame["hex"])
            except (ValueError, KeyError):
                continue
            add("fuzz_envoy_decode", data)
            if frame.get("top") == "ToEnvoy":
                add("fuzz_envoy_decode", b"\x08\x00" + data)

    total = 0
    for target, items in sorted(seeds.items()):
        directory = out / target
        directory.mkdir(parents=True, exist_ok=True)
        for data in items:
            (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
        total += len(items)
        print(f"fuzz-seeds: {target}: {len(items)} seeds")
    print(f"fuzz-seeds: {total} seeds in {out}")


if __name__ == "__main__":
    main()
