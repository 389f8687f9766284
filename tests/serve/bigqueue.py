#!/usr/bin/env python3
"""bigqueue.py WAP ROOT - `wap serve` over stdio holds what waits behind a
slow call to the message limit and 8 MiB more: past it the reader stops
reading (as past 256 calls), so big messages sent behind a slow call do not
grow the server (256 of the limit were 4 GB).  Every call is answered once
the slow one ends.  ok/not ok lines (tap_in)."""
import json, os, subprocess, sys, threading, time

wap, root = sys.argv[1], sys.argv[2]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


MAX = 2 << 20		# --max-message: waiting is held to 10 MiB
p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "1", "--max-message", str(MAX)],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def rss():
    with open("/proc/%d/status" % p.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])	# kB
    return 0


answers = []
threading.Thread(target=lambda: answers.extend(json.loads(l) for l in p.stdout), daemon=True).start()


def send(o):
    p.stdin.write(json.dumps(o).encode() + b"\n")
    p.stdin.flush()


send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
time.sleep(0.5)
before = rss()
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "exec", "arguments": {"command": "sleep 4"}}})
time.sleep(0.3)
peak = [before]
done = threading.Event()


def watch():
    while not done.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.02)


threading.Thread(target=watch, daemon=True).start()
pad = "y" * (MAX - 200)
for i in range(40):	# 80 MB behind the sleep
    send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
          "params": {"name": "stat", "arguments": {"path": ".", "pad": pad}}})
done.set()
p.stdin.close()
p.wait(timeout=60)
time.sleep(0.2)
# (under ASan freed memory is held in quarantine: RSS says nothing)
tap(bool(os.environ.get("ASAN")) or peak[0] - before < 40 * 1024, "80 MB sent behind a slow call: the server held at most its cap (%d kB -> %d kB)"
    % (before, peak[0]))
got = sorted(a.get("id") for a in answers if a.get("id", 0) >= 100)
tap(got == list(range(100, 140)), "every call behind it is answered (%d of 40)" % len(got))
tap(p.returncode == 0, "the server exits 0 (%s)" % p.returncode)
