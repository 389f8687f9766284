#!/usr/bin/env python3
"""treewait.py WAP ROOT - what only reads holds no tree lock.  The tree lock
(writes shared, mv/cp/rm alone, writers first) was taken by applet: grep,
git and sym are flagged as writing for their writing forms (grep --write,
git commit, sym rename), so a plain search, git status or a symbol lookup
held it shared for as long as it ran.  A search of a big file running, an
rm sent then waited for its end, and every write after the rm waited for
the rm: one slow search stopped all writing.  Now the lock is taken by
what the call does (the policy table's writing ops, the table read-only
mode goes by).  TAP lines."""
import os, sys, time
from wapstdio import Pipelined

wap, root = sys.argv[1], sys.argv[2]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


os.makedirs(os.path.join(root, "gone"), exist_ok=True)
line = b"the quick brown fox jumps over the lazy dog 0123456789\n"
with open(os.path.join(root, "big.txt"), "wb") as f:
    for _ in range(100 * 1024 * 1024 // (len(line) * 1024)):
        f.write(line * 1024)

s = Pipelined([wap, "serve", "--root", root, "--workers", "4"])
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})
# a search that runs for many seconds (backtracking on every line)
seen = {}


def replies(want, timeout):
    """as s.replies, keeping every reply seen, the search's among them, in
    the order they came"""
    end = time.monotonic() + timeout
    while True:
        seen.update(s.replies((want | {g}) - set(seen), 0.2))
        if want <= set(seen) or time.monotonic() > end:
            return {k: v for k, v in seen.items() if k in want}


g = None
g = s.call("tools/call", name="grep", arguments={"pattern": r"(\w+\s)+\d+x", "paths": ["big.txt"], "count": True})
replies(set(), 0.5)
tap(g not in seen, "the search runs (%s)" % str(seen.get(g))[:300])
rm = s.call("tools/call", name="rm", arguments={"path": "gone", "recursive": True})
wr = s.call("tools/call", name="write", arguments={"path": "w.txt", "content": "w\n"})
got = replies({rm, wr}, 60)
order = list(seen)
early = g in order and (rm not in order or order.index(g) < order.index(rm))
tap(len(got) == 2 and not early,
    "an rm and a write sent while a search runs are answered before it ends (%s; search %s)"
    % (sorted(got), "ended first" if early else "running"))
tap(not os.path.exists(os.path.join(root, "gone")) and os.path.exists(os.path.join(root, "w.txt")),
    "the rm and the write were made")
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": g}})
replies({rm, wr}, 60)	# (those not answered yet, once the search is gone)
# the writing form still holds it: a grep --write and an rm of the tree it
# rewrites are one before the other, never interleaved (tests/serve/treerace.py
# has the moves); here only that both are answered
os.makedirs(os.path.join(root, "t"), exist_ok=True)
for i in range(50):
    open(os.path.join(root, "t", "f%d.txt" % i), "w").write("old\n")
gw = s.call("tools/call", name="grep", arguments={"pattern": "old", "path": "t", "replace": "new", "write": True})
rt = s.call("tools/call", name="rm", arguments={"path": "t", "recursive": True})
got = s.replies({gw, rt}, 60)
tap(len(got) == 2, "a grep --write and an rm of its tree are both answered (%s)" % sorted(got))
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
os.unlink(os.path.join(root, "big.txt"))
