#!/usr/bin/env python3
"""profiles.py WAP ROOT - each profile is its document: whole reads where
the document reads whole files (never a silent 2,000-line or 2,000-character
cut), ACP's result objects and absolute paths, the limits each profile
carries.  TAP lines."""
import json, os, re, subprocess, sys

wap, root = sys.argv[1:3]
n = 0


def ok(c, d, got=None):
    global n
    n += 1
    print(("ok" if c else "not ok") + f" {n} - {d}" + ("" if c or got is None else f": got {repr(got)[:300]}"))


def session(profile, msgs, config=None):
    """Send MSGS (dicts) to `wap serve --profile PROFILE`; the replies by id."""
    env = dict(os.environ)
    env.pop("WAP_CONFIG", None)
    if config is not None:
        cfg = os.path.join(os.path.dirname(root), "profiles-config.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        env["WAP_CONFIG"] = cfg
    data = "".join(json.dumps(m) + "\n" for m in msgs).encode()
    p = subprocess.run([wap, "serve", "--root", root, "--drain", "--workers", "1", "--profile", profile],
                       input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    out = {}
    err = p.stderr.decode("utf-8", "replace")
    if "Sanitizer" in err or p.returncode not in (0,):
        ok(False, f"wap serve --profile {profile} ends cleanly (status {p.returncode})", err[-1500:])
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if "id" in m:
            out[m["id"]] = m
        else:
            out.setdefault("notes", []).append(m)
    return out


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def rpc(i, method, params):
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def text(r):
    return r.get("result", {}).get("content", [{}])[0].get("text")


long_line = "y" * 10000
lines5000 = "".join(f"line {i:05d} {'z' * 3}\n" for i in range(1, 5001))	# 5000 lines, ~75 KB
with open(os.path.join(root, "five.txt"), "w") as f:
    f.write(lines5000)
with open(os.path.join(root, "long.txt"), "w") as f:
    f.write("short\n" + long_line + "\nend\n")
with open(os.path.join(root, "huge.txt"), "w") as f:
    f.write(("h" * 99 + "\n") * 11000)	# 1.1 MB: over the 1 MiB maxFileSize
with open(os.path.join(root, "bad8.txt"), "wb") as f:
    f.write(b"ok \xff\xfe bad\n")

# ---- langop: read_file reads complete file contents ----
r = session("langop", [call(1, "read_file", {"path": "five.txt"}), call(2, "read_file", {"path": "long.txt"}),
                       call(3, "read_file", {"path": "huge.txt"}), call(4, "read_file", {"path": "bad8.txt"})],
            config={"limits": {"maxFileSize": 1048576}})
ok(text(r[1]) == lines5000, "langop read_file: all 5,000 lines", len((text(r[1]) or "").splitlines()))
ok(text(r[2]) == "short\n" + long_line + "\nend\n", "langop read_file: a 10,000-character line whole")
ok(r[3]["result"].get("isError") and "too large" in text(r[3]).lower() and text(r[3]).startswith("Error: "),
   "langop read_file: over maxFileSize is an Error: text, not a cut", text(r[3]))
ok(r[4]["result"].get("isError") and text(r[4]) == "Error: File contains invalid UTF-8 encoding",
   "langop read_file: invalid UTF-8 is the document's error", text(r[4]))

# ---- acp: fs/read_text_file reads the whole file unless line/limit ----
P = root + "/"
r = session("acp", [rpc(1, "fs/read_text_file", {"sessionId": "s", "path": P + "five.txt"}),
                    rpc(2, "fs/read_text_file", {"sessionId": "s", "path": P + "long.txt"}),
                    rpc(3, "fs/read_text_file", {"sessionId": "s", "path": P + "five.txt", "line": 4990, "limit": 5}),
                    rpc(4, "fs/read_text_file", {"sessionId": "s", "path": P + "five.txt", "line": 4990}),
                    rpc(5, "fs/read_text_file", {"sessionId": "s", "path": P + "huge.txt"}),
                    rpc(6, "fs/write_text_file", {"sessionId": "s", "path": P + "w.txt", "content": "x\n"}),
                    rpc(7, "fs/read_text_file", {"sessionId": "s", "path": "five.txt"}),
                    rpc(8, "fs/write_text_file", {"sessionId": "s", "path": "rel.txt", "content": "x\n"}),
                    rpc(9, "terminal/create", {"sessionId": "s", "command": "true"}),
                    rpc(10, "terminal/kill", {"sessionId": "s", "terminalId": "nope"}),
                    rpc(11, "terminal/release", {"sessionId": "s", "terminalId": "nope"}),
                    rpc(12, "fs/read_text_file", {"sessionId": "s", "path": "/etc/passwd"})])
ok(r[1].get("result", {}).get("content") == lines5000, "acp fs/read_text_file: all 5,000 lines", str(r[1])[:200])
ok(r[2].get("result", {}).get("content") == "short\n" + long_line + "\nend\n", "acp fs/read_text_file: a long line whole")
ok(r[3].get("result", {}).get("content") == "".join(lines5000.splitlines(True)[4989:4994]),
   "acp fs/read_text_file: line and limit", r[3])
ok(r[4].get("result", {}).get("content") == "".join(lines5000.splitlines(True)[4989:]),
   "acp fs/read_text_file: line alone reads to the end", r[4])
ok("error" in r[5] and "maxFileSize" in r[5]["error"]["message"], "acp fs/read_text_file: over maxFileSize is an error", r[5])
ok(r[6].get("result") == {}, "acp fs/write_text_file: the result is {}", r[6])
ok(open(os.path.join(root, "w.txt")).read() == "x\n", "acp fs/write_text_file: written")
ok("error" in r[7] and "absolute" in r[7]["error"]["message"], "acp: a relative path is refused", r[7])
ok("error" in r[8] and not os.path.exists(os.path.join(root, "rel.txt")), "acp: a relative write is refused", r[8])
tid = r[9].get("result", {}).get("terminalId")
ok(tid, "acp terminal/create", r[9])
r2 = session("acp", [rpc(1, "terminal/create", {"sessionId": "s", "command": "sleep", "args": ["5"]})])
tid = r2[1]["result"]["terminalId"]
r2 = session("acp", [rpc(1, "terminal/create", {"sessionId": "s", "command": "sleep", "args": ["5"]}),
                     rpc(2, "terminal/kill", {"sessionId": "s", "terminalId": "$T"}),
                     rpc(3, "terminal/release", {"sessionId": "s", "terminalId": "$T"})])
ok("error" in r[10] and "FILE_NOT_FOUND" not in json.dumps(r[10]) and "erminal" in r[10]["error"]["message"],
   "acp terminal/kill of a missing terminal: not FILE_NOT_FOUND", r[10])
ok("error" in r[11] and "FILE_NOT_FOUND" not in json.dumps(r[11]), "acp terminal/release of a missing terminal", r[11])
ok("error" in r[12], "acp: a path outside the root is refused", r[12])

# terminal/kill and terminal/release answer {} (one session: ids are per session)
p = subprocess.Popen([wap, "serve", "--root", root, "--profile", "acp", "--workers", "1"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
recv = lambda: json.loads(p.stdout.readline())
send(rpc(1, "terminal/create", {"sessionId": "s", "command": "sleep", "args": ["5"]}))
tid = recv()["result"]["terminalId"]
send(rpc(2, "terminal/kill", {"sessionId": "s", "terminalId": tid}))
k = recv()
send(rpc(3, "terminal/release", {"sessionId": "s", "terminalId": tid}))
rel = recv()
p.stdin.close()
p.wait(timeout=10)
ok(k.get("result") == {}, "acp terminal/kill: the result is {}", k)
ok(rel.get("result") == {}, "acp terminal/release: the result is {}", rel)

# ---- wap-1.0: readFile reads the whole file, subject to maxFileSize ----
r = session("wap-1.0", [call(1, "readFile", {"path": "five.txt"}), call(2, "readFile", {"path": "long.txt"}),
                        call(3, "readFile", {"path": "huge.txt"}),
                        call(4, "readFile", {"path": "five.txt", "startLine": 10, "endLine": 20}),
                        call(5, "getWorkspaceInfo", {}),
                        call(6, "executeCommand", {"command": "head -c 600000 /dev/zero | tr '\\0' a"}),
                        call(7, "writeFile", {"path": "nodir/x.txt", "content": "x", "createDirectories": False}),
                        call(8, "writeFile", {"path": "mkdir/x.txt", "content": "x", "createDirectories": True}),
                        call(9, "executeCommand", {"command": "sleep 5", "timeout": 300})])
sc = r[1]["result"].get("structuredContent", {})
ok(sc.get("content") == lines5000 and sc.get("isTruncated") is False and sc.get("returnedLines") == 5000
   and sc.get("totalLines") == 5000, "wap-1.0 readFile: a 75 KB file whole, isTruncated false",
   {k: v for k, v in sc.items() if k != "content"})
ok(r[2]["result"].get("structuredContent", {}).get("content") == "short\n" + long_line + "\nend\n",
   "wap-1.0 readFile: a long line whole")
ok(r[3]["result"].get("isError") and "SIZE_LIMIT_EXCEEDED" in text(r[3]), "wap-1.0 readFile: over maxFileSize is SIZE_LIMIT_EXCEEDED", text(r[3]))
sc = r[4]["result"].get("structuredContent", {})
ok(sc.get("returnedLines") == 11 and sc.get("content", "").startswith("line 00010"), "wap-1.0 readFile: startLine..endLine", sc)
lim = r[5]["result"].get("structuredContent", {}).get("limits", {})
ok(lim.get("maxOutputSize") == 1048576 and lim.get("maxFileSize") == 1048576 and lim.get("maxDirectoryEntries") == 500
   and lim.get("maxSearchResults") == 100, "wap-1.0 getWorkspaceInfo: the document's recommended limits", lim)
sc = r[6]["result"].get("structuredContent", {})
ok(len(sc.get("stdout", "")) == 600000 and sc.get("isOutputTruncated") is False, "wap-1.0 executeCommand: 600 KB output whole",
   len(sc.get("stdout", "")))
ok(r[7]["result"].get("isError") and not os.path.exists(os.path.join(root, "nodir")),
   "wap-1.0 writeFile createDirectories:false creates no parents", r[7])
ok(not r[8]["result"].get("isError") and os.path.exists(os.path.join(root, "mkdir", "x.txt")),
   "wap-1.0 writeFile createDirectories:true creates them", r[8])
ok(r[9]["result"].get("isError") and "TIMEOUT" in text(r[9]), "wap-1.0 executeCommand: a timeout is the TIMEOUT error", r[9])

# a limit the config sets wins over the profile's
r = session("wap-1.0", [call(1, "getWorkspaceInfo", {})], config={"limits": {"maxOutputSize": 4096}})
lim = r[1]["result"].get("structuredContent", {}).get("limits", {})
ok(lim.get("maxOutputSize") == 4096, "wap-1.0: the config's maxOutputSize wins over the document's", lim)
r = session("langop", [call(1, "read_file", {"path": "huge.txt"})])
ok(text(r[1]) == ("h" * 99 + "\n") * 11000, "langop: 10 MiB reads by default (the document: no hard limit)")

# ---- MCP logging: logging/setLevel, notifications/message for the server's warnings ----
p = subprocess.Popen([wap, "serve", "--root", root, "--roots-from-client"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
recv = lambda: json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}}})
init = recv()
ok(init["result"]["capabilities"].get("logging") == {}, "MCP: logging is advertised", init["result"]["capabilities"])
send(rpc(2, "logging/setLevel", {"level": "loud"}))
bad = recv()
ok(bad.get("error", {}).get("code") == -32602, "MCP: logging/setLevel of an unknown level is invalid params", bad)
send(rpc(3, "logging/setLevel", {"level": "warning"}))
lv = recv()
ok(lv.get("result") == {}, "MCP: logging/setLevel answers {}", lv)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
asked = recv()
send({"jsonrpc": "2.0", "id": asked.get("id"), "result": {"roots": [{"uri": "file:///etc"}]}})
send(call(4, "info", {}))
msgs = [recv(), recv()]
note = [m for m in msgs if m.get("method") == "notifications/message"]
ok(note and note[0]["params"]["level"] == "warning" and "/etc" in note[0]["params"]["data"],
   "MCP: a root outside the workspace is a warning notifications/message", msgs)
p.stdin.close()
p.wait(timeout=10)

# ---- langop over HTTP: the document's own examples, as it shows them ----
import time, urllib.request, urllib.error
with open(os.path.join(root, "README.md"), "w") as f:
    f.write("# Readme\n")
with open(os.path.join(root, "notes.txt"), "w") as f:
    f.write("a note\n")
p = subprocess.Popen([wap, "serve", "--http", "127.0.0.1:0", "--no-auth", "--profile", "langop", "--root", root],
                     stderr=subprocess.PIPE, text=True)
port = None
for _ in range(100):
    line = p.stderr.readline()
    mm = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
    if mm:
        port = mm.group(1)
        break
base = f"http://127.0.0.1:{port}"


def http(method, path, body=None, headers=None):
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


st, _, body = http("GET", "/health")
ok(st == 200 and json.loads(body) == {"status": "ok", "service": "workspace-tool", "version": "1.0.0"},
   "langop /health is the document's", body)
st, hdrs, body = http("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1.0"}}})
res = json.loads(body).get("result", {})
ok(st == 200 and res.get("protocolVersion") == "2024-11-05" and res.get("serverInfo") == {"name": "workspace-tool", "version": "1.0.0"}
   and "tools" in res.get("capabilities", {}), "langop initialize: the document's reply", body)
ok("instructions" not in res, "langop initialize: no instructions naming tools it lacks", res.get("instructions"))
sid = {k.lower(): v for k, v in hdrs.items()}.get("mcp-session-id")
# the Testing section's curl lines: no initialize before, no Mcp-Session-Id
st, _, body = http("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
names = [t["name"] for t in json.loads(body).get("result", {}).get("tools", [])] if st == 200 else body
ok(names == ["read_file", "write_file", "list_directory", "create_directory", "get_file_info", "search_files"],
   "langop: curl tools/list without a session", names)
st, _, body = http("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "read_file", "arguments": {"path": "README.md"}}})
ok(st == 200 and json.loads(body)["result"]["content"][0]["text"] == "# Readme\n", "langop: curl read_file without a session", body)
st, _, body = http("POST", "/mcp", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
    "name": "list_directory", "arguments": {"path": "."}}})
ok(st == 200 and "[FILE] README.md" in json.loads(body)["result"]["content"][0]["text"], "langop: curl list_directory without a session", body)
st, _, body = http("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": "read_file", "arguments": {"path": "notes.txt"}}}, {"Mcp-Session-Id": sid} if sid else {})
ok(st == 200 and json.loads(body)["result"]["content"][0]["text"] == "a note\n", "langop: the document's Call Tool in its session", body)
# a session that is gone: GET and POST say 404
st, _, _ = http("DELETE", "/mcp", None, {"Mcp-Session-Id": sid or "x"})
st2, _, _ = http("GET", "/mcp", None, {"Mcp-Session-Id": sid or "x", "Accept": "text/event-stream"})
ok(st == 200 and st2 == 404, f"GET /mcp of a deleted session is 404 (DELETE {st}, GET {st2})")
p.terminate()
rest = p.stderr.read()
p.wait(timeout=20)
ok(p.returncode == 0 and "Sanitizer" not in rest, f"langop --http ends cleanly on SIGTERM (status {p.returncode})", rest[-1500:])

# ---- tool definitions: every parameter described, whole, in the caller's words ----
for prof in ("wap", "wap-1.0", "langop", "opencode", "wti"):
    r = session(prof, [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    tools = r[1]["result"]["tools"]
    nodesc = [f"{t['name']}.{k}" for t in tools for k, v in t["inputSchema"].get("properties", {}).items()
              if not v.get("description")]
    ok(not nodesc, f"{prof}: every parameter has a description", nodesc)
    flags = []
    for t in tools:
        keys = set(t["inputSchema"].get("properties", {}))
        for txt in [t["description"]] + [v.get("description", "") for v in t["inputSchema"].get("properties", {}).values()]:
            for f in re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", txt):
                if f.replace("-", "_") in keys or f in keys or f in ("offset", "limit", "max-results", "timeout"):
                    flags.append(f"{t['name']}: --{f}")
    ok(not flags, f"{prof}: no description names a CLI flag for an argument", flags)
r = session("wap", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
props = {t["name"]: t["inputSchema"]["properties"] for t in r[1]["result"]["tools"]}
ok(props["read"]["tail"]["description"].endswith("(-1 is the last)"), "wap: read.tail's description is whole",
   props["read"]["tail"]["description"])
ok(props["edit"]["path"]["description"].endswith("applies to)"), "wap: edit.path's description is whole",
   props["edit"]["path"]["description"])
ok("JSON the text itself" in props["exec"]["stdin"]["description"], "wap: exec.stdin's description is whole",
   props["exec"]["stdin"]["description"])

# ---- langop details ----
os.makedirs(os.path.join(root, "many"), exist_ok=True)
for i in range(600):
    open(os.path.join(root, "many", f"f{i:03d}.txt"), "w").close()
for d in ("node_modules/pkg", "dist", "zz", "aa"):
    os.makedirs(os.path.join(root, "srch", d), exist_ok=True)
    open(os.path.join(root, "srch", d, "x.json"), "w").close()
r = session("langop", [call(1, "list_directory", {"path": "many"}), call(2, "search_files", {"path": "srch", "pattern": "**/*.json"}),
                       call(3, "write_file", {}), call(4, "list_directory", {"path": "many"})])
ok(text(r[1]).count("[FILE]") == 600, "langop list_directory: all 600 entries", text(r[1])[-200:])
ok(text(r[2]).split("\n")[1:] == ["[FILE] srch/aa/x.json", "[FILE] srch/dist/x.json", "[FILE] srch/node_modules/pkg/x.json",
                                   "[FILE] srch/zz/x.json"], "langop search_files: nothing excluded, in path order", text(r[2]))
ok(r[3]["result"].get("isError") and text(r[3]).startswith("Error: ") and "path" in text(r[3]),
   "langop write_file {}: an Error: text", text(r[3]))
r = session("langop", [call(1, "list_directory", {"path": "many"})], config={"limits": {"maxDirectoryEntries": 500}})
ok(text(r[1]).count("[FILE]") == 500 and text(r[1]).endswith("(500 of 600 entries shown: limits.maxDirectoryEntries)"),
   "langop list_directory: a cut says so", text(r[1])[-120:])
r = session("langop", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
d = {t["name"]: t["inputSchema"]["properties"]["path"]["description"] for t in r[1]["result"]["tools"]}
ok(d["list_directory"].startswith("Directory path") and d["create_directory"].startswith("Directory path")
   and d["get_file_info"].startswith("File or directory path") and d["read_file"].startswith("File path"),
   "langop: the path descriptions are the document's", d)

# ---- acp terminals in order: the document's results ----
p = subprocess.Popen([wap, "serve", "--root", root, "--profile", "acp", "--workers", "1"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
recv = lambda: json.loads(p.stdout.readline())
send(rpc(1, "terminal/create", {"sessionId": "s", "command": "sh", "args": ["-c", "printf hi; exit 3"], "cwd": root}))
tid = recv()["result"]["terminalId"]
send(rpc(2, "terminal/wait_for_exit", {"sessionId": "s", "terminalId": tid}))
w = recv()
send(rpc(3, "terminal/output", {"sessionId": "s", "terminalId": tid}))
o = recv()
send(rpc(4, "terminal/create", {"sessionId": "s", "command": "true", "cwd": "many"}))
c = recv()
p.stdin.close()
p.wait(timeout=10)
ok(w.get("result") == {"exitCode": 3, "signal": None}, "acp terminal/wait_for_exit: {exitCode, signal}", w)
ok(o.get("result") == {"output": "hi", "truncated": False, "exitStatus": {"exitCode": 3, "signal": None}},
   "acp terminal/output: {output, truncated, exitStatus}", o)
ok("absolute" in c.get("error", {}).get("message", ""), "acp terminal/create: a relative cwd is refused", c)

# ---- hints and errors name the caller's arguments, never CLI flags ----
r = session("wap", [call(1, "read", {"path": "five.txt"}), call(2, "glob", {"pattern": "many/*", "max_results": 3}),
                    call(3, "read", {"path": "huge.txt", "whole": True})])
ok("read on with offset 2001" in text(r[1]) and "--offset" not in text(r[1]), "wap: read's hint names offset", text(r[1])[-120:])
ok("max_results 0" in text(r[2]) and "--max" not in text(r[2]), "wap: glob's hint names max_results", text(r[2])[-120:])
ok("--" not in text(r[3]) and "offset/limit" in text(r[3]), "wap: the too-large error names offset/limit", text(r[3]))
r = session("wap-1.0", [call(1, "readFile", {"path": "huge.txt"})])
ok("--" not in text(r[1]) and "startLine/endLine" in text(r[1]), "wap-1.0: the too-large error names startLine/endLine", text(r[1]))

# ---- output schemas: every tool's declares its result's keys (git's: every action's) ----
r = session("wap", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
schemas = {t["name"]: t.get("outputSchema", {}) for t in r[1]["result"]["tools"]}
empty = [k for k, o in schemas.items() if not o.get("properties")]
ok(not empty, "wap: every output schema declares properties", empty)
calls = {"read": {"path": "five.txt"}, "write": {"path": "o.txt", "content": "x"}, "ls": {"path": "."},
         "stat": {"path": "five.txt"}, "mkdir": {"path": "od"}, "info": {}, "cp": {"source": "o.txt", "destination": "o2.txt"},
         "mv": {"source": "o2.txt", "destination": "o3.txt"}, "rm": {"path": "o3.txt"}}
r = session("wap", [call(i, k, a) for i, (k, a) in enumerate(calls.items(), 1)])
for i, tn in enumerate(calls, 1):
    sc = r[i]["result"].get("structuredContent", {})
    extra = set(sc) - set(schemas[tn].get("properties", {})) - {"path"}
    ok(sc and not extra, f"wap: {tn}'s result keys are in its output schema", sorted(extra))

# ---- MCP resources: the workspace's files as file:// URIs, read whole ----
from urllib.parse import quote
os.makedirs(os.path.join(root, "res dir"), exist_ok=True)
with open(os.path.join(root, "res dir", "a b.txt"), "w") as f:
    f.write(lines5000)
real = os.path.realpath(root)
uri = "file://" + quote(real + "/res dir/a b.txt")
r = session("wap", [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
                    {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
                    rpc(3, "resources/read", {"uri": uri}),
                    rpc(4, "resources/read", {"uri": "file:///etc/passwd"}),
                    rpc(5, "resources/read", {"uri": "file://" + quote(real + "/huge.txt")}),
                    rpc(6, "resources/read", {"uri": "https://example.invalid/x"}),
                    rpc(7, "completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "b"}})])
caps = r[1]["result"]["capabilities"]
ok("resources" in caps and "completions" in caps, "MCP: resources and completions advertised", caps)
uris, page = [x["uri"] for x in r[2]["result"]["resources"]], r[2]["result"]
for _ in range(20):	# the cursor is an offset: any session continues it
    if "nextCursor" not in page:
        break
    page = session("wap", [rpc(1, "resources/list", {"cursor": page["nextCursor"]})])[1]["result"]
    uris += [x["uri"] for x in page["resources"]]
ok(uri in uris and all(u.startswith("file://" + quote(real) + "/") for u in uris), "MCP resources/list: file:// URIs under the root", uris[:5])
c = r[3].get("result", {}).get("contents", [{}])[0]
ok(c.get("text") == lines5000 and c.get("uri") == uri, "MCP resources/read: the whole file", str(r[3])[:200])
ok(r[4].get("error", {}).get("data", {}).get("code") == "ACCESS_DENIED", "MCP resources/read: outside the root is refused", r[4])
ok(r[5].get("error", {}).get("data", {}).get("code") == "SIZE_LIMIT_EXCEEDED", "MCP resources/read: over maxFileSize is an error, not a cut", r[5])
ok(r[6].get("error", {}).get("code") == -32002, "MCP resources/read: other schemes are not found", r[6])
ok(r[7].get("result") == {"completion": {"values": [], "total": 0, "hasMore": False}}, "MCP completion/complete answers", r[7])
