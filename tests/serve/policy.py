#!/usr/bin/env python3
"""policy.py WAP ROOT - the policy through `wap serve` over stdio: every
profile's writing tools refuse .git (top level, nested, through a symlink)
and .wap; MCP client roots narrow the root but never move the policy:
restrictedPaths stay anchored to the configured root and .git stays
protected when a client names it as its root.  TAP lines."""
import hashlib, json, os, subprocess, sys

wap, root = sys.argv[1:3]
n = 0


def ok(c, d):
    global n
    n += 1
    print(("ok" if c else "not ok") + f" {n} - {d}")


def snap(*dirs):
    out = []
    for d in dirs:
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            out.append(dp)
            for f in fn:
                p = os.path.join(dp, f)
                with open(p, "rb") as fh:
                    out.append(p + " " + hashlib.md5(fh.read()).hexdigest())
    return sorted(out)


def refused(reply):
    if "error" in reply:
        return True
    r = reply.get("result") or {}
    if r.get("isError"):
        return True
    # langop: text-only tools report errors in their text
    t = "".join(c.get("text", "") for c in r.get("content", []))
    return t.startswith("Error") or "restricted" in t.lower()


def serve(args, msgs, roots=None):
    """Run one stdio session: initialize (with roots when given), then MSGS
    (method, params) in order; returns the replies by index."""
    p = subprocess.Popen([wap, "serve", "--root", root] + args, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    send = lambda m: (p.stdin.write(json.dumps(m) + "\n"), p.stdin.flush())
    recv = lambda: json.loads(p.stdout.readline())
    caps = {"roots": {}} if roots is not None else {}
    send({"jsonrpc": "2.0", "id": "i", "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": caps,
                     "clientInfo": {"name": "t", "version": "1"}}})
    recv()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if roots is not None:
        asked = recv()
        send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": roots}})
    out = []
    for i, (method, params) in enumerate(msgs):
        send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        out.append(recv())
    p.stdin.close()
    p.wait(timeout=20)
    return out


def tool(name, args):
    return ("tools/call", {"name": name, "arguments": args})


GIT_SNAP = snap(".git", "sub/nested/.git", ".wap")
HOOK = "#!/bin/sh\necho pwned\n"
profiles = {
    "wap": [
        ("write .git/hooks/pre-commit", tool("write", {"path": ".git/hooks/pre-commit", "content": HOOK})),
        ("write through a symlink to .git", tool("write", {"path": "gitlink/hooks/pre-push", "content": HOOK})),
        ("write a nested repo's config", tool("write", {"path": "sub/nested/.git/config", "content": "[core]\n\tfsmonitor = x\n"})),
        ("edit .git/config adding core.fsmonitor",
         tool("edit", {"path": ".git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = ./payload"})),
        ("mv a file onto .git/config", tool("mv", {"source": "payload", "destination": ".git/config", "force": True})),
        ("cp into .git/hooks", tool("cp", {"source": "payload", "destination": ".git/hooks/pre-commit"})),
        ("rm .git/HEAD", tool("rm", {"path": ".git/HEAD"})),
        ("mkdir .git/hooks/d", tool("mkdir", {"path": ".git/hooks/d"})),
        ("grep --write on .git/config",
         tool("grep", {"pattern": "bare", "replace": "fsmonitor", "write": True, "paths": [".git/config"]})),
        ("write .wap/config.json", tool("write", {"path": ".wap/config.json", "content": "{}"})),
        ("write a .git file", tool("write", {"path": "plain/.git", "content": "gitdir: ../.git\n"})),
    ],
    "wap-1.0": [
        ("writeFile .git/hooks/pre-commit", tool("writeFile", {"path": ".git/hooks/pre-commit", "content": HOOK})),
    ],
    "langop": [
        ("write_file .git/hooks/pre-commit", tool("write_file", {"path": ".git/hooks/pre-commit", "content": HOOK})),
        ("create_directory .git/hooks/x", tool("create_directory", {"path": ".git/hooks/x"})),
    ],
    "opencode": [
        ("write .git/hooks/pre-commit", tool("write", {"filePath": ".git/hooks/pre-commit", "content": HOOK})),
        ("edit .git/config", tool("edit", {"filePath": ".git/config", "oldString": "[core]",
                                            "newString": "[core]\n\thooksPath = /tmp"})),
    ],
    "acp": [
        ("fs/write_text_file .git/hooks/pre-commit",
         ("fs/write_text_file", {"sessionId": "s", "path": os.path.join(root, ".git/hooks/pre-commit"), "content": HOOK})),
        ("fs/write_text_file .wap/config.json",
         ("fs/write_text_file", {"sessionId": "s", "path": os.path.join(root, ".wap/config.json"), "content": "{}"})),
    ],
}
for prof, calls in profiles.items():
    replies = serve(["--profile", prof], [c for _, c in calls])
    for (desc, _), r in zip(calls, replies):
        ok(refused(r), f"{prof}: {desc} is refused ({json.dumps(r)[:160]})")
ok(snap(".git", "sub/nested/.git", ".wap") == GIT_SNAP, "nothing under .git or .wap changed")
ok(not os.path.exists(os.path.join(root, "plain/.git")), "no .git file was made")

# the work tree is still written
r = serve([], [tool("write", {"path": "sub/ok.txt", "content": "ok"})])[0]
ok(not refused(r) and os.path.exists(os.path.join(root, "sub/ok.txt")), "a work-tree file is written")

# --- client roots narrow, never move the policy (13.6) ---
cfg = os.path.join(os.path.dirname(root), "roots-policy.json")
with open(cfg, "w") as f:
    json.dump({"security": {"restrictedPaths": ["secret/inner/**", "*.key"]}}, f)
uri = lambda p: "file://" + os.path.join(root, p).rstrip("/")
read = lambda p: tool("read", {"path": p})
# narrowed to R/secret: secret/inner/** is judged from R, not from R/secret
r = serve(["--config", cfg, "--roots-from-client"],
          [tool("info", {}), read("inner/z.txt"), tool("write", {"path": "inner/new.txt", "content": "n"}),
           read("x.txt")],
          roots=[{"uri": uri("secret")}])
ok(r[0]["result"]["structuredContent"]["root"] == os.path.realpath(os.path.join(root, "secret")),
   "the client narrowed the root to R/secret")
ok(refused(r[1]) and "PATH_RESTRICTED" in json.dumps(r[1]),
   "secret/inner/** still protects R/secret/inner/z.txt, read as inner/z.txt")
ok(refused(r[2]) and not os.path.exists(os.path.join(root, "secret/inner/new.txt")), "  and refuses writing there")
ok(not refused(r[3]), "  while R/secret/x.txt stays readable")
# a client root inside a restricted tree is not taken
r = serve(["--config", cfg, "--roots-from-client"], [tool("info", {})], roots=[{"uri": uri("secret/inner")}])
ok(r[0]["result"]["structuredContent"]["root"] == os.path.realpath(root),
   "a client root inside a restricted tree is not taken")
# narrowed to R itself
r = serve(["--config", cfg, "--roots-from-client"], [read("secret/inner/z.txt")], roots=[{"uri": uri("")}])
ok(refused(r[0]) and "PATH_RESTRICTED" in json.dumps(r[0]), "narrowed to R itself: secret/inner/z.txt refused")
# narrowed to R/sub: the glob is anchored at R, so sub/secret/inner/y.txt
# is no secret, while a basename glob (*.key) matches at any depth
r = serve(["--config", cfg, "--roots-from-client"],
          [read("secret/inner/y.txt"), read("k.key"), tool("write", {"path": "secret/inner/new.txt", "content": "n"})],
          roots=[{"uri": uri("sub")}])
ok(not refused(r[0]), "narrowed to R/sub: secret/inner/** does not start matching R/sub/secret/inner/y.txt")
ok(refused(r[1]), "narrowed to R/sub: *.key still matches at any depth")
ok(not refused(r[2]), "narrowed to R/sub: writing sub/secret/inner/new.txt is allowed")
# a client root in R/.git is not used (a command rooted there would write
# what the sandbox keeps read-only): calls stay at R, and .git stays
# read-only there
r = serve(["--roots-from-client"],
          [tool("info", {}),
           tool("write", {"path": ".git/hooks/pre-commit", "content": HOOK}),
           tool("edit", {"path": ".git/config", "old": "[core]", "new": "[core]\n\tfsmonitor = x"}),
           tool("read", {"path": ".git/HEAD"})],
          roots=[{"uri": uri(".git")}])
ok(r[0]["result"]["structuredContent"]["root"] == os.path.realpath(root), "a client root in R/.git is not used")
ok(refused(r[1]) and refused(r[2]), "  ... writing hooks and config is refused")
ok(not refused(r[3]), "  ... reading stays allowed")
r = serve(["--roots-from-client"], [tool("info", {})], roots=[{"uri": uri("sub/nested/.git")}])
ok(r[0]["result"]["structuredContent"]["root"] == os.path.realpath(root), "nor one in a nested .git")
ok(snap(".git", "sub/nested/.git", ".wap") == GIT_SNAP, "still nothing under .git or .wap changed")
