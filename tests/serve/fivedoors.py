#!/usr/bin/env python3
"""fivedoors.py WAP TMPDIR WSDIR - one road from every door.  The same ops
(read, stat, ls, grep, write, edit) go through the five doors: the CLI
(--json), MCP over stdio, MCP over HTTP, the Agent Client Protocol over
stdio (acp profile: read and write only) and the Agent Control Protocol
over WebSocket.  Each door gets a fresh copy of one workspace; afterwards
the workspaces must be equal, the servers' audit lines must name the same
ops with the same outcome, and the contents read must be equal.  Then the
hostile half: read-only mode, restrictedPaths and requireApproval with a
refusing approver must refuse the same write the same way on all five
(the same WAP error code, nothing written, the same audit line)."""
import json, os, re, shutil, subprocess, sys, time, urllib.request

wap, tmp, wsdir = sys.argv[1:4]
n = 0
STDERR = tmp + "/stderr.all"	# every door's stderr: sanitizer reports


def keep_err(b):
    with open(STDERR, "ab") as f:
        f.write(b)


def ok(cond, desc, extra=None):
    global n
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {desc}" +
          ("" if cond or extra is None else "\n# " + json.dumps(extra)[:900].replace("\n", "\n# ")))


def make_ws(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d + "/sub")
    open(d + "/a.txt", "w").write("hello\nworld\n")
    open(d + "/sub/b.c", "w").write("int hello;\n")
    open(d + "/secret.key", "w").write("k\n")
    open(d + "/bin.dat", "wb").write(b"\x00\xff\xfe bytes\n")


def tree(d):
    out = {}
    for base, dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(base, f)
            out[os.path.relpath(p, d)] = open(p, "rb").read().decode("utf-8", "replace")
    return out


# the ops, as (name, MCP/applet arguments); CLI argv, ACP stdio and Agent
# Control spellings are mapped below, as a client of each door would
OPS = [
    ("read", {"path": "a.txt"}),
    ("stat", {"path": "a.txt"}),
    ("ls", {"path": "sub"}),
    ("grep", {"pattern": "hello"}),
    ("write", {"path": "new.txt", "content": "fresh\n"}),
    ("edit", {"path": "a.txt", "old": "world", "new": "there"}),
]
ACP_STDIO = {"read", "write", "exec"}
RANGE_WORLD = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}


def cli_argv(op, a):
    if op == "read" and "encoding" in a:
        return [a["path"], "--encoding", a["encoding"]]
    if op == "read" or op == "stat" or op == "ls":
        return [a["path"]]
    if op == "grep":
        return [a["pattern"]]
    if op == "write":
        return [a["path"], "--content", a["content"]]
    if op == "edit":
        return [a["path"], "--old", a["old"], "--new", a["new"]]
    if op == "exec":
        return ["-c", a["command"]]


def ws_call(op, a):
    return {
        "read": lambda: ["fs.readFile", dict(a)],
        "stat": lambda: ["fs.stat", {"path": a["path"]}],
        "ls": lambda: ["fs.listDirectory", {"path": a["path"]}],
        "grep": lambda: ["search.findInFiles", {"query": a["pattern"]}],
        "write": lambda: ["fs.writeFile", {"path": a["path"], "content": a["content"]}],
        "edit": lambda: ["editor.replaceRange", {"path": a["path"], "range": RANGE_WORLD, "text": a["new"]}],
        # a terminal is a session: refused at its creation
        "exec": lambda: ["terminal.create", {}],
    }[op]()


def acp_call(op, a, root):
    # ACP paths are absolute
    if op == "read":
        return ["fs/read_text_file", {"sessionId": "s", "path": os.path.join(root, a["path"])}]
    if op == "exec":
        return ["terminal/create", {"sessionId": "s", "command": "sh", "args": ["-c", a["command"]]}]
    return ["fs/write_text_file", {"sessionId": "s", "path": os.path.join(root, a["path"]), "content": a["content"]}]


def audit_of(path, root):
    """(op, mutating, outcome, error, request.path) per line; an absolute
    path (ACP's) is told relative to the door's root"""
    out = []
    if not os.path.exists(path):
        return out
    for l in open(path):
        j = json.loads(l)
        out.append([j.get("op"), j.get("mutating"), j.get("outcome"), j.get("error"),
                    rel_to((j.get("request") or {}).get("path"), root)])
    return out


def rel_to(p, root):
    if isinstance(p, str) and os.path.isabs(p):
        return os.path.relpath(p, root)
    return p


def wap_code(o):
    """the WAP error code of a door's failed reply, else None"""
    if o is None:
        return None
    if isinstance(o.get("error"), str) and "code" in o:	# CLI --json error
        return o["code"]
    if "error" in o and isinstance(o["error"], dict):	# JSON-RPC error
        d = o["error"].get("data") or {}
        return d.get("code")
    r = o.get("result")
    if isinstance(r, dict) and r.get("isError"):	# MCP tool error
        try:
            return json.loads(r["content"][0]["text"]).get("code")
        except Exception:
            return "?"
    return None


def door_cli(root, cfg, ops):
    res = []
    for op, a in ops:
        argv = [wap, op] + cli_argv(op, a) + ["--json", "--root", root]
        if cfg:
            argv += ["--config", cfg]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        keep_err(p.stderr)
        try:
            res.append(json.loads(p.stdout))
        except Exception:
            res.append({"unparsable": p.stdout.decode(errors="replace")})
    return res


def serve_args(root, cfg, audit):
    a = ["--root", root, "--audit", audit, "--approver", "exit 1"]
    return a + (["--config", cfg] if cfg else [])


def door_stdio(root, cfg, audit, ops, profile="wap"):
    lines = []
    for i, (op, a) in enumerate(ops):
        if profile == "acp":
            m, p = acp_call(op, a, root)
            lines.append({"jsonrpc": "2.0", "id": i, "method": m, "params": p})
        else:
            lines.append({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": op, "arguments": a}})
    res = [None] * len(ops)
    # one at a time, so the audit lines come in the order of the ops
    for i, l in enumerate(lines):
        p = subprocess.run([wap, "serve", "--drain", "--profile", profile] + serve_args(root, cfg, audit),
                           input=(json.dumps(l) + "\n").encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        keep_err(p.stderr)
        for t in p.stdout.decode().splitlines():
            j = json.loads(t)
            if j.get("id") == i:
                res[i] = j
    return res


def stop(p, log):
    p.terminate()
    p.wait()
    keep_err(open(log, "rb").read())


def start(argv, log, pat):
    lf = open(log, "w")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=lf)
    for _ in range(100):
        m = re.search(pat, open(log).read())
        if m:
            return p, m.group(1)
        time.sleep(0.1)
    p.kill()
    raise SystemExit("server did not start: " + open(log).read())


def door_http(root, cfg, audit, ops):
    p, port = start([wap, "serve", "--http", "127.0.0.1:0", "--no-auth"] + serve_args(root, cfg, audit),
                    tmp + "/http.log", r"http://127\.0\.0\.1:(\d+)")
    url = f"http://127.0.0.1:{port}/mcp"

    def post(body, sid=None):
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if sid:
            h["mcp-session-id"] = sid
        r = urllib.request.urlopen(urllib.request.Request(url, data=json.dumps(body).encode(), headers=h, method="POST"))
        return r.headers.get("mcp-session-id"), r.read()
    try:
        sid, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
        res = []
        for i, (op, a) in enumerate(ops):
            _, b = post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": op, "arguments": a}}, sid)
            res.append(json.loads(b))
    finally:
        stop(p, tmp + "/http.log")
    return res


def door_ws(root, cfg, audit, ops, more=()):
    tokf = tmp + "/ws.token"
    p, port = start([wap, "serve", "--ws", "127.0.0.1:0", "--token-file", tokf] + serve_args(root, cfg, audit),
                    tmp + "/ws.log", r"ws://127\.0\.0\.1:(\d+)")
    try:
        calls = [ws_call(op, a) for op, a in ops] + list(more)
        out = subprocess.run(["node", wsdir + "/doors-client.js", port, open(tokf).read().strip(), json.dumps(calls)],
                             stdout=subprocess.PIPE).stdout
        res = json.loads(out)
    finally:
        stop(p, tmp + "/ws.log")
    return res


DOORS = ["cli", "stdio", "http", "acp", "ws"]


def run_all(tag, cfg, ops):
    """every door on a fresh workspace: {door: (results, audit, tree)}"""
    out = {}
    for d in DOORS:
        root = f"{tmp}/{tag}-{d}"
        audit = f"{tmp}/{tag}-{d}.audit"
        make_ws(root)
        if os.path.exists(audit):
            os.unlink(audit)
        dops = [o for o in ops if d != "acp" or o[0] in ACP_STDIO]
        if d == "cli":
            r = door_cli(root, cfg, dops)
        elif d == "stdio":
            r = door_stdio(root, cfg, audit, dops)
        elif d == "acp":
            r = door_stdio(root, cfg, audit, dops, "acp")
        elif d == "http":
            r = door_http(root, cfg, audit, dops)
        else:
            r = door_ws(root, cfg, audit, dops)
        out[d] = (r, audit_of(audit, root), tree(root), dops)
    return out


# ---- the same ops, the same road ----
R = run_all("same", None, OPS)
base_tree = R["stdio"][2]
for d in DOORS:
    want = dict(base_tree)
    if d == "acp":	# only read and write: no edit
        want["a.txt"] = "hello\nworld\n"
    ok(R[d][2] == want, f"{d}: the workspace after the ops is the one MCP stdio left", [R[d][2], want])
    errs = [wap_code(x) for x in R[d][0]]
    ok(not any(errs) and len(R[d][0]) == len(R[d][3]), f"{d}: every op succeeded", R[d][0])

sa = R["stdio"][1]
ok([a[0] for a in sa] == [o for o, _ in OPS], "stdio: one audit line per op, named by the op", sa)
for d in ("http", "acp", "ws"):
    want = [a for a in sa if d != "acp" or a[0] in ACP_STDIO]
    got = R[d][1]
    ok(got == want, f"{d}: the audit lines name the same ops, flags, outcomes and paths as stdio's", [got, want])


def content_of(d, r):
    if d == "cli":
        return r.get("content")
    if d in ("stdio", "http"):
        return r["result"]["structuredContent"].get("content")
    return (r.get("result") or {}).get("content")


reads = {d: content_of(d, R[d][0][0]) for d in DOORS}
ok(len(set(reads.values())) == 1 and reads["cli"] == "hello\nworld\n", "read: the same content through all five", reads)

# ---- whole-file reads: fs.readFile, editor.getContent and
# editor.getDocumentInfo are the read op (--encoding), not a reader of
# their own: the same content, bytes, version, errors and audit lines ----
WHOLE = [
    ("read", {"path": "a.txt", "encoding": "utf-8"}),
    ("read", {"path": "bin.dat", "encoding": "base64"}),
    ("read", {"path": "bin.dat", "encoding": "utf-8"}),
    ("read", {"path": "sub", "encoding": "utf-8"}),
]
WS_MORE = [["editor.getContent", {"path": "a.txt"}], ["editor.getDocumentInfo", {"path": "a.txt"}]]
W = {}
for d in ("cli", "stdio", "http", "ws"):
    root = f"{tmp}/whole-{d}"
    audit = f"{tmp}/whole-{d}.audit"
    make_ws(root)
    if d == "cli":
        W[d] = (door_cli(root, None, WHOLE), [])
    elif d == "stdio":
        W[d] = (door_stdio(root, None, audit, WHOLE), open(audit).read().splitlines())
    elif d == "http":
        W[d] = (door_http(root, None, audit, WHOLE), open(audit).read().splitlines())
    else:
        W[d] = (door_ws(root, None, audit, WHOLE, WS_MORE), open(audit).read().splitlines())


def result_of(d, r):
    if d == "cli":
        return r
    if d in ("stdio", "http"):
        return (r.get("result") or {}).get("structuredContent") or {}
    return r.get("result") or {}


import base64
for i, (what, want) in enumerate([("a.txt as utf-8", "hello\nworld\n"),
                                  ("bin.dat as base64", base64.b64encode(b"\x00\xff\xfe bytes\n").decode())]):
    got = {d: result_of(d, W[d][0][i]).get("content") for d in W}
    ok(all(v == want for v in got.values()), f"whole read of {what}: the same content through CLI, MCP stdio, HTTP and fs.readFile", got)
for i, what in ((2, "bin.dat (not UTF-8) as utf-8"), (3, "a directory")):
    codes = {d: wap_code(W[d][0][i]) for d in W}
    ok(len(set(codes.values())) == 1 and None not in codes.values(), f"whole read of {what}: the same error code through every door", codes)
cli_a = W["cli"][0][0]
gc = result_of("ws", W["ws"][0][4])
ok(gc.get("content") == cli_a.get("content") and gc.get("languageId") == "plaintext",
   "editor.getContent: the read op's content", [gc, cli_a])
di = result_of("ws", W["ws"][0][5])
ok(di.get("contentVersion") == cli_a.get("version") and di.get("size") == cli_a["metadata"]["size"]
   and di.get("lineCount") == cli_a.get("totalLines") == 2,
   "editor.getDocumentInfo: version, size and lines of the read op", [di, cli_a])
lines = {d: [[j.get(k) for k in ("op", "mutating", "outcome", "error", "request")]
             for j in map(json.loads, W[d][1])] for d in ("stdio", "http", "ws")}
ok(lines["ws"][:4] == lines["stdio"] == lines["http"] and [l[2] for l in lines["stdio"]] == ["ok", "ok", "error", "error"],
   "whole reads: the same audit lines (op, outcome, error, request) from every server door", lines)
ok([l[0] for l in lines["ws"]] == ["read"] * 6 and lines["ws"][4][4]["path"] == lines["ws"][5][4]["path"] == "a.txt",
   "editor.getContent and editor.getDocumentInfo: one read op each, audited as read", W["ws"][1])

# ---- hostile: one policy refuses the same op identically on all five ----
WRITE = [("write", {"path": "new.txt", "content": "evil\n"})]
SECRET = [("write", {"path": "secret.key", "content": "evil\n"})]
POLICIES = [
    ("readonly", {"security": {"readOnly": True}}, WRITE, "PATH_RESTRICTED"),
    ("restricted", {"security": {"restrictedPaths": ["*.key"]}}, SECRET, "PATH_RESTRICTED"),
    ("approval", {"security": {"requireApproval": True}}, WRITE, None),
    # commands and terminals (sessions, not ops) pass the same gate
    ("approval-run", {"security": {"requireApproval": True}}, [("exec", {"command": "touch ran.txt"})], None),
]
# the name each door's audit line gives the op (terminals are sessions)
RUN_NAMES = {"exec", "terminal/create", "terminal.create"}
for tag, conf, ops, code in POLICIES:
    cfg = f"{tmp}/{tag}.json"
    json.dump(conf, open(cfg, "w"))
    R = run_all(tag, cfg, ops)
    codes = {d: wap_code(R[d][0][0]) if R[d][0] and R[d][0][0] else "no reply" for d in DOORS}
    what = ops[0][1].get("path") or ops[0][1].get("command")
    ok(len(set(codes.values())) == 1 and None not in codes.values() and (code is None or codes["cli"] == code),
       f"{tag}: every door refuses {ops[0][0]} {what} with the same error code ({codes['cli']})", codes)
    trees = {d: R[d][2] for d in DOORS}
    ok(all(t.get("new.txt") is None and t.get("ran.txt") is None and t.get("secret.key") == "k\n"
           for t in trees.values()),
       f"{tag}: nothing was written or run through any door", trees)
    audits = {d: R[d][1] for d in DOORS if d != "cli"}
    first = audits["stdio"]
    if ops[0][0] == "exec":
        ok(all(len(a) == 1 and a[0][0] in RUN_NAMES and a[0][1:4] == first[0][1:4] for a in audits.values())
           and first[0][2] == "error",
           f"{tag}: the same audit line (mutating, error, code) from every server door", audits)
    else:
        ok(len(first) == 1 and first[0][0] == "write" and first[0][2] == "error" and
           all(a == first for a in audits.values()),
           f"{tag}: the same audit line (write, error) from every server door", audits)

errs = open(STDERR, "rb").read().decode(errors="replace") if os.path.exists(STDERR) else ""
ok("Sanitizer" not in errs and "runtime error" not in errs, "no sanitizer report from any door",
   [l for l in errs.splitlines() if "Sanitizer" in l or "runtime error" in l or "#" in l][:20])
