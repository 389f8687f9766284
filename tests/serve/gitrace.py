#!/usr/bin/env python3
"""gitrace.py WAP ROOT [ROUNDS [pull]] - a git checkout and an edit of a file it
changes, two calls at once over stdio (--workers 4).  Both held the tree
lock shared, so they ran side by side: the checkout's safe-mode test
(no local change it would overwrite) and its writes on one side, the
edit's read, version check and rename on the other; both said they
succeeded and one's change was lost: HEAD on b2 with f.txt the edit of
b1's text, or the edit's change overwritten by b2's (36 of 100 rounds).
A checkout (and a pull, which checks out) rewrites files across the
tree, so it holds the tree lock alone, as mv does: the edit is before it
(then the checkout refuses, a local change in its way) or after it (then
the text it replaces is gone).  With "pull" the call is a pull that
fast-forwards to b2's commit (from a remote beneath the root): it fetches
with the lock shared, and is alone from its fast-forward on.  TAP lines."""
import os, subprocess, sys, time
from wapstdio import Pipelined, git_repo

wap, root = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 60
pull = len(sys.argv) > 4 and sys.argv[4] == "pull"


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


git = git_repo(root, "b1")
# (files beside it make the checkout take a little while)
for i in range(200):
    open(os.path.join(root, "pad%d.txt" % i), "w").write("p%d\n" % i)
open(os.path.join(root, "f.txt"), "w").write("A\n")
git("add", "-A")
git("commit", "-qm", "a")
git("checkout", "-qb", "b2")
for i in range(200):
    open(os.path.join(root, "pad%d.txt" % i), "w").write("q%d\n" % i)
open(os.path.join(root, "f.txt"), "w").write("B\n")
git("commit", "-qam", "b")
git("checkout", "-q", "b1")
if pull:	# b1's upstream is at b2's commit: a pull fast-forwards to it
    subprocess.run(["git", "clone", "-q", "--bare", root, os.path.join(root, "up.git")], check=True)
    subprocess.run(["git", "-C", os.path.join(root, "up.git"), "update-ref", "refs/heads/b1",
                    "refs/heads/b2"], check=True)
    open(os.path.join(root, ".git", "info", "exclude"), "a").write("up.git/\n")
    git("remote", "add", "origin", os.path.join(root, "up.git"))
    git("config", "branch.b1.remote", "origin")
    git("config", "branch.b1.merge", "refs/heads/b1")
    a_commit = git("rev-parse", "b1").strip()

s = Pipelined([wap, "serve", "--root", root, "--workers", "4"])
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})


def ok(m):
    return m is not None and not m["result"].get("isError")


both = lost = answered = oka = oke = 0
for r in range(rounds):
    a = s.call("tools/call", name="git", arguments={"action": "pull"} if pull else
               {"action": "checkout", "args": ["b2"]})
    time.sleep((r % 10) * 0.0005)	# the edit sent 0-4.5 ms after
    e = s.call("tools/call", name="edit", arguments={"path": "f.txt", "old": "A", "new": "A2", "exact": True})
    got = s.replies({a, e}, 60)
    answered += len(got)
    head = git("rev-parse", "--abbrev-ref", "HEAD").strip()
    f = open(os.path.join(root, "f.txt")).read()
    oka += ok(got.get(a))
    oke += ok(got.get(e))
    if ok(got.get(a)) and ok(got.get(e)):
        both += 1	# no order of the two lets both succeed
        if head == "b2" and f in ("A2\n", "B\n") or pull:
            lost += 1
    if pull:
        git("reset", "-q", "--hard", a_commit)
    git("checkout", "-qf", "b1")
what = "pull" if pull else "checkout"
print("# %d %ss and %d edits succeeded" % (oka, what, oke), flush=True)
tap(answered == 2 * rounds, "every " + what + " and edit answered (%d of %d)" % (answered, 2 * rounds))
tap(both == 0 and lost == 0,
    "a " + what + " and an edit of a file it changes never both succeed (%d rounds: %d both, %d lost a change)"
    % (rounds, both, lost))
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
