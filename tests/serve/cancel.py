#!/usr/bin/env python3
"""Cancellation over stdio: notifications/cancelled and stdin EOF stop a
running grep (inside one big file, and over many files) or exec at once,
and the command's processes die.  Prints TAP-ish "ok"/"not ok" lines with
the measured times.  usage: cancel.py WAP ROOT (ROOT holds big.txt, many/)"""
import json, os, select, subprocess, sys, time

wap, root = sys.argv[1], sys.argv[2]
BOUND = 0.5	# the goal is 100 ms; the bound tolerates a loaded machine


def ok(cond, desc):
    print(("ok - " if cond else "not ok - ") + desc, flush=True)


def start():
    return subprocess.Popen([wap, "serve", "--root", root, "--workers", "1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def reply(p, want, timeout):
    """the reply with id WANT, or None after TIMEOUT seconds"""
    end = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.monotonic()))
        if not r:
            break
        line = p.stdout.readline()
        if not line:
            break
        m = json.loads(line)
        if m.get("id") == want:
            return m
    return None


def pids(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.PIPE)
    return r.stdout.split()


def wait_pids(pattern, present, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if bool(pids(pattern)) == present:
            return True
        time.sleep(0.01)
    return False


def stop(p):
    try:
        p.stdin.close()
    except Exception:
        pass
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# ---- grep: a cancel stops it inside one big file, and across many files ----
for what, args in (("one big file", {"pattern": r"(\w+\s)+\d+x", "paths": ["big.txt"]}),
                   ("many files", {"pattern": r"(\w+\s)+\d+x", "paths": ["many"]})):
    p = start()
    send(p, call(1, "grep", args))
    time.sleep(0.7)
    t0 = time.monotonic()
    send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    # the single worker is free again once the grep stopped
    send(p, call(2, "grep", {"pattern": "needle", "paths": ["small.txt"]}))
    r = reply(p, 2, 30)
    dt = time.monotonic() - t0
    ok(r is not None and "result" in r, f"grep over {what}: the next call is answered after the cancel")
    ok(dt < BOUND, f"grep over {what}: stopped {dt * 1000:.0f} ms after notifications/cancelled")
    stop(p)

# ---- grep: stdin EOF stops it (the server exits) ----
p = start()
send(p, call(1, "grep", {"pattern": r"(\w+\s)+\d+x", "paths": ["big.txt"]}))
time.sleep(0.7)
t0 = time.monotonic()
p.stdin.close()
try:
    p.wait(30)
except subprocess.TimeoutExpired:
    p.kill()
dt = time.monotonic() - t0
ok(dt < BOUND, f"grep over one big file: the server is gone {dt * 1000:.0f} ms after stdin EOF")

# ---- exec: cancel and EOF kill the command ----
for how in ("notifications/cancelled", "stdin EOF"):
    marker = "97.75" if how == "stdin EOF" else "97.5"
    p = start()
    send(p, call(1, "exec", {"command": f"trap '' TERM; sleep {marker} & wait; exec sleep {marker}", "kill_after": 300}))
    ok(wait_pids(f"^sleep {marker}$", True, 5), f"exec ({how}): the command runs")
    t0 = time.monotonic()
    if how == "stdin EOF":
        p.stdin.close()
    else:
        send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    gone = wait_pids(f"^sleep {marker}$", False, 3)
    dt = time.monotonic() - t0
    ok(gone and dt < 1.0, f"exec ({how}): its processes are gone after {dt * 1000:.0f} ms")
    if not gone:
        for pid in pids(f"^sleep {marker}$"):
            os.kill(int(pid), 9)
    stop(p)

# ---- a cancelled grep and a cancelled exec end the same way: the one
# error of a cancel (lib/core/cancel.h), as the audit log records it ----
import tempfile
fd, audit = tempfile.mkstemp(suffix=".jsonl")
os.close(fd)
p = subprocess.Popen([wap, "serve", "--root", root, "--workers", "2", "--audit", audit],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
send(p, call(1, "grep", {"pattern": r"(\w+\s)+\d+x", "paths": ["big.txt"]}))
send(p, call(2, "exec", {"command": "sleep 96.5"}))
wait_pids("^sleep 96.5$", True, 5)
time.sleep(0.5)
for i in (1, 2):
    send(p, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}})
send(p, {"jsonrpc": "2.0", "id": 3, "method": "ping"})
reply(p, 3, 30)
time.sleep(0.5)
stop(p)
lines = [json.loads(l) for l in open(audit) if l.strip()]
os.unlink(audit)
ends = {l["op"]: (l.get("outcome"), l.get("error")) for l in lines if l.get("op") in ("grep", "exec")}
ok(len(ends) == 2 and ends.get("grep") == ends.get("exec") == ("error", "EXECUTION_FAILED"),
   f"a cancelled grep and a cancelled exec end alike: {ends}")
