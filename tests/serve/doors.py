#!/usr/bin/env python3
"""doors.py WAP ROOT URL - "same answer on every door": for a fixed set of
calls, `wap APPLET ... --json`, MCP over stdio and MCP over HTTP give equal
result objects (volatile fields such as times removed)."""
import json, os, subprocess, sys, tempfile, urllib.request

wap, root, url = sys.argv[1:4]
# wap serve sandboxes a client's commands by default; the CLI is told to
# by the config, so every door runs under the same policy
cfg = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
cfg.write('{"security": {"sandbox": true}}')
cfg.close()
os.environ["WAP_CONFIG"] = cfg.name
# (applet, CLI argv, MCP arguments)
CALLS = [
    ("info", [], {}),
    ("read", ["a.txt"], {"path": "a.txt"}),
    ("read", ["sub/b.c", "--offset", "1", "--limit", "1"], {"path": "sub/b.c", "offset": 1, "limit": 1}),
    ("ls", ["sub"], {"path": "sub"}),
    ("ls", [".", "--recursive"], {"path": ".", "recursive": True}),
    ("stat", ["a.txt"], {"path": "a.txt"}),
    ("read", ["nope.txt"], {"path": "nope.txt"}),
    ("glob", ["**/*.c"], {"pattern": "**/*.c"}),
    ("grep", ["hello", "."], {"pattern": "hello", "paths": ["."]}),
    ("exec", ["-c", "echo same"], {"command": "echo same"}),
    ("edit", ["a.txt", "--old", "hello", "--new", "bye", "--dry-run"],
     {"path": "a.txt", "old": "hello", "new": "bye", "dry_run": True}),
    ("edit", ["a.txt", "--old", "absent", "--new", "x"], {"path": "a.txt", "old": "absent", "new": "x"}),
    ("git", ["status"], {"action": "status"}),
]
VOLATILE = {"duration_ms", "accessed", "atime"}
applets = subprocess.run([wap, "--list"], stdout=subprocess.PIPE).stdout.decode().split()


def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v


def cli(applet, argv):
    p = subprocess.run([wap, applet] + argv + ["--json", "--root", root], stdout=subprocess.PIPE)
    return json.loads(p.stdout)


def from_result(r):
    r = r["result"]
    if r.get("isError"):
        return json.loads(r["content"][0]["text"])
    return r["structuredContent"]


def stdio(calls):
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": a, "arguments": args}}) for i, (a, _, args) in enumerate(calls)]
    p = subprocess.run([wap, "serve", "--drain", "--root", root], input="\n".join(lines).encode() + b"\n",
                       stdout=subprocess.PIPE)
    out = {}
    for l in p.stdout.decode().splitlines():
        j = json.loads(l)
        out[j["id"]] = from_result(j)
    return out


def http_post(body, sid=None):
    h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if sid:
        h["mcp-session-id"] = sid
    req = urllib.request.Request(url + "/mcp", data=json.dumps(body).encode(), headers=h, method="POST")
    with urllib.request.urlopen(req) as r:
        return r.headers.get("mcp-session-id"), r.read()


sid, _ = http_post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
calls = [c for c in CALLS if c[0] in applets]
s = stdio(calls)
n = 0
for i, (a, argv, args) in enumerate(calls):
    c = clean(cli(a, argv))
    _, body = http_post({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": a, "arguments": args}}, sid)
    h = clean(from_result(json.loads(body)))
    st = clean(s[i])
    n += 1
    same = c == st == h
    print(("ok" if same else "not ok") + f" {n} - {a} {' '.join(argv)}: CLI --json == stdio == HTTP"
          + ("" if same else f"\n# cli   {json.dumps(c)[:300]}\n# stdio {json.dumps(st)[:300]}\n# http  {json.dumps(h)[:300]}"))
