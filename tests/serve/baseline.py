#!/usr/bin/env python3
"""baseline.py WAP ROOT - memory returns to its baseline: the server's RSS
after 10 rounds of 1,000 mixed calls (reads, listings, searches, errors,
bad JSON) does not keep growing over 6 more.  The heap takes some 10
rounds to settle (a run of 40 rounds here: 4.7 MB, 5.2 MB after round 10,
5.1-5.4 MB to the end); measured from round 4 the settling alone came to
536 KiB once.  (Leaks themselves are caught by LeakSanitizer in `make
check ASAN=1`.)  TAP lines."""
import json, os, subprocess, sys

wap, root = sys.argv[1:3]
# one malloc arena: the RSS then measures what the server keeps, not how
# glibc spreads 2 threads over arenas
p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     env=dict(os.environ, MALLOC_ARENA_MAX="1"))
CALLS = [("read", {"path": "a.txt"}), ("ls", {"path": ".", "recursive": True}), ("grep", {"pattern": "hi"}),
         ("read", {"path": "../escape"}), ("glob", {"pattern": "**/*"}), ("stat", {"path": "a.txt"}),
         ("info", {}), ("nope", {})]


def rss():
    with open(f"/proc/{p.pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])


def round_(k):
    lines = []
    for i in range(1000):
        name, args = CALLS[i % len(CALLS)]
        lines.append(json.dumps({"jsonrpc": "2.0", "id": f"{k}-{i}", "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}))
        if i % 100 == 0:
            lines.append('{"jsonrpc":"2.0","id":1,' + "x" * 1000)
    p.stdin.write(("\n".join(lines) + "\n").encode())
    p.stdin.flush()
    for _ in range(len(lines)):
        p.stdout.readline()
    return rss()


sizes = [round_(k) for k in range(16)]
p.stdin.close()
p.wait()
grow = sizes[-1] - sizes[9]
print(("ok" if grow <= 512 else "not ok") + f" 1 - RSS after each 1,000 calls (KiB): {sizes}; growth after warm-up {grow} KiB")
print(("ok" if p.returncode == 0 else "not ok") + " 2 - server exits 0")
