#!/usr/bin/env python3
"""treerace.py WAP ROOT [SECONDS] - a tree's move and a write into it, two
calls at once over stdio: with restrictedPaths ["vault/**/*.key"], mv big
vault/big is checked file by file and then renamed, and a write of
big/dN/z.key (allowed where it is asked) made between the two landed in
vault/ under the glob that denies it.  Writes hold the workspace's tree
lock shared, a tree's move holds it alone from its check to its rename:
a z.key is either in big/ before the check (the move is refused) or
written after the rename (big/dN is gone: written anew outside vault).  TAP lines."""
import json, os, shutil, sys, time
from wapstdio import Pipelined

wap, root = sys.argv[1], sys.argv[2]
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 4


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


os.makedirs(os.path.join(root, "vault"), exist_ok=True)
cfg = root.rstrip("/") + ".json"	# (outside the root, as a config must be)
with open(cfg, "w") as f:
    json.dump({"security": {"restrictedPaths": ["vault/**/*.key"]}}, f)
big = os.path.join(root, "big")
NDIRS = 40


def make_big():
    for d in range(NDIRS):
        os.makedirs(os.path.join(big, "d%d" % d))
        for i in range(100):
            open(os.path.join(big, "d%d" % d, "f%d.txt" % i), "w").close()


s = Pipelined([wap, "serve", "--root", root, "--config", cfg, "--workers", "4"])


def call(name, args):
    return s.call("tools/call", name=name, arguments=args)


def failed(m):
    return m is None or "error" in m or m.get("result", {}).get("isError")


s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                 clientInfo={"name": "t", "version": "1"})})
tries = moved = landed = refused = 0
make_big()	# (4,000 files: seconds on a loaded machine, before the clock starts)
end = time.monotonic() + secs
# SECONDS of tries, ten at least however slow the machine
while (time.monotonic() < end or tries < 10) and not landed:
    tries += 1
    # in turn a write into the directory the check reads first, sent a
    # little after the move (0-9 ms: once that directory is checked, before
    # the rename) and before it
    key = {"path": "big/%s/z.key" % os.listdir(big)[0], "content": "planted\n"}
    if tries % 2:
        a = call("mv", {"source": "big", "destination": "vault/big"})
        time.sleep(0.001 * (tries // 2 % 10))
        b = [call("write", key)]
    else:
        b = [call("write", key)]
        a = call("mv", {"source": "big", "destination": "vault/big"})
    r = s.replies({a, *b})
    if any(os.path.exists(os.path.join(root, "vault/big/d%d/z.key" % d)) for d in range(NDIRS)):
        landed += 1
        break
    if not failed(r.get(a)):
        moved += 1
        # the keys written after the move made big/dN anew: gone, and
        # the tree moved back (made once: 4,000 files take a second here)
        shutil.rmtree(big, ignore_errors=True)
        os.rename(os.path.join(root, "vault/big"), big)
    else:
        refused += 1
    for d in range(NDIRS):
        try:
            os.unlink(os.path.join(big, "d%d" % d, "z.key"))
        except FileNotFoundError:
            pass
tap(not landed, "no write lands under a denying glob through a tree's move (%d tries: %d moved, %d refused, %d landed)"
    % (tries, moved, refused, landed))
tap(moved > 0 and refused > 0, "the moves without the key went through (%d), those with it were refused (%d)"
    % (moved, refused))
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
