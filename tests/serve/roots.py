#!/usr/bin/env python3
"""roots.py WAP ROOT - `wap serve --roots-from-client`: the server asks the
client for roots/list after notifications/initialized, and the first root
inside the workspace becomes the root of later calls; a root outside never
widens it.  TAP lines."""
import json, os, subprocess, sys, time

wap, root = sys.argv[1:3]
n = 0


def ok(c, d):
    global n
    n += 1
    print(("ok" if c else "not ok") + f" {n} - {d}")


def session(roots, caps=True):
    p = subprocess.Popen([wap, "serve", "--root", root, "--roots-from-client"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
    recv = lambda: json.loads(p.stdout.readline())
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}} if caps else {}}})
    recv()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    asked = None
    if caps:
        asked = recv()
        send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": roots}})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "info", "arguments": {}}})
    info = recv()
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "../a.txt"}}})
    esc = recv()
    p.stdin.close()
    p.wait(timeout=10)
    return asked, info["result"]["structuredContent"]["root"], esc["result"], p.returncode


sub = os.path.join(root, "sub")
asked, r, esc, rc = session([{"uri": "file://" + sub.replace(" ", "%20"), "name": "sub"}])
ok(asked and asked.get("method") == "roots/list", "the server asks roots/list after initialized")
ok(r == os.path.realpath(sub), f"a root inside the workspace narrows it ({r})")
ok(esc.get("isError") and "ACCESS_DENIED" in esc["content"][0]["text"], "the old root is now outside")
ok(rc == 0, "exits 0")
asked, r, esc, rc = session([{"uri": "file:///etc"}, {"uri": "file://" + root + "/../.."}])
ok(r == os.path.realpath(root), f"roots outside the workspace never widen it ({r})")
asked, r, esc, rc = session([], caps=False)
ok(asked is None and r == os.path.realpath(root), "a client without the roots capability is not asked")

# a client that declares roots but never answers roots/list: the first call
# waits 2 s for it, later calls do not; a late answer still narrows the root
p = subprocess.Popen([wap, "serve", "--root", root, "--roots-from-client"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
recv = lambda: json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}}})
recv()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
asked = recv()
times = []
for i in range(3):
    t = time.monotonic()
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "info", "arguments": {}}})
    r = recv()
    times.append(time.monotonic() - t)
ok(1.5 < times[0] < 5, f"unanswered roots/list: the first call waits about 2 s ({times[0]:.2f} s)")
ok(times[1] < 1 and times[2] < 1, f"later calls do not wait ({times[1]:.2f} s, {times[2]:.2f} s)")
ok(r["result"]["structuredContent"]["root"] == os.path.realpath(root), "they run in the whole root")
send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file://" + sub}]}})
time.sleep(0.3)
send({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "info", "arguments": {}}})
r = recv()
ok(r["result"]["structuredContent"]["root"] == os.path.realpath(sub), "a late answer still narrows the root")
p.stdin.close()
p.wait(timeout=10)

# a root in .git or .wap is never used: the sandbox keeps ROOT/.git read-
# only, and a command rooted in .git wrote hooks and config there
os.makedirs(os.path.join(root, ".git", "hooks"), exist_ok=True)
for bad in (".git", ".git/hooks", ".wap", ".GIT"):
    os.makedirs(os.path.join(root, bad), exist_ok=True)
    asked, r, esc, rc = session([{"uri": "file://" + os.path.join(root, bad)}])
    ok(r == os.path.realpath(root), f"a client root in {bad} is not used ({r})")

# the same roots answered again and again: one narrowed root kept, not one
# (and a descriptor) an answer; at most 16 different ones
p = subprocess.Popen([wap, "serve", "--root", root, "--roots-from-client"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
n_id = [10]


def call_after(roots):
    """roots/list_changed, answer ROOTS, then an info call: its root"""
    send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    n_id[0] += 1
    send({"jsonrpc": "2.0", "id": n_id[0], "method": "tools/call", "params": {"name": "info", "arguments": {}}})
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("method") == "roots/list":
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"roots": roots}})
        elif m.get("id") == n_id[0]:
            return m["result"]["structuredContent"]["root"]


send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}}}})
json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
fds = lambda: len(os.listdir(f"/proc/{p.pid}/fd"))
call_after([{"uri": "file://" + sub}])
before = fds()
for _ in range(40):
    call_after([{"uri": "file://" + sub}])
ok(fds() == before, f"the same root answered 40 times: no descriptor more ({before} -> {fds()})")
for i in range(20):
    os.makedirs(os.path.join(root, "many", str(i)), exist_ok=True)
got = [call_after([{"uri": "file://" + os.path.join(root, "many", str(i))}]) for i in range(20)]
ok(got[14] == os.path.realpath(os.path.join(root, "many", "14")) and got[19] == got[14],
   f"16 different roots kept, the 17th and later not used ({got[14]}, {got[19]})")
ok(fds() <= before + 15, f"  ... nor a descriptor held for them ({fds()})")
p.stdin.close()
p.wait(timeout=10)
