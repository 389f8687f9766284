#!/usr/bin/env python3
"""dirlock.py WAP ROOT - a write waits for its directory's lock (flock, the
lock two writers of one file take), and anyone may hold that lock: another
program, or a command wap runs (`flock dir sleep 600` needs only a read of
the directory).  The wait was a blocking flock: no cancel reached it, the
write held the workspace's tree lock meanwhile (so an mv, rm or cp waited
too, and every write after them), and the server could not exit while the
lock was held.  Now the wait polls the call's cancel.  TAP lines."""
import fcntl, os, sys, time
from wapstdio import Pipelined

wap, root = sys.argv[1], sys.argv[2]


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


os.makedirs(os.path.join(root, "d"), exist_ok=True)
open(os.path.join(root, "d", "f.txt"), "w").write("one\n")
held = os.open(os.path.join(root, "d"), os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(held, fcntl.LOCK_EX)	# held by "another program" for the whole test

s = Pipelined([wap, "serve", "--root", root, "--workers", "2"])
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})
calls = [s.call("tools/call", name="write", arguments={"path": "d/x.txt", "content": "x"}),
         s.call("tools/call", name="edit", arguments={"path": "d/f.txt", "old": "one", "new": "two"}),
         s.call("tools/call", name="edit", arguments={"path": "d/f.txt", "patch":
                "*** Begin Patch\n*** Update File: d/f.txt\n@@\n-one\n+three\n*** End Patch\n"})]
got = s.replies(set(calls), 1)
tap(not got, "a write, an edit and a patch wait while another holds their directory's lock (%s)" % got)
for c in calls:
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": c}})
# the cancelled calls let go of the tree lock: a move of another tree goes through
os.makedirs(os.path.join(root, "m"), exist_ok=True)
mv = s.call("tools/call", name="mv", arguments={"source": "m", "destination": "n"})
r = s.replies({mv}, 60).get(mv)
tap(r is not None and not r["result"].get("isError"),
    "after their cancel, an mv is answered (%s)" % (r and str(r)[:200]))
tap(not os.path.exists(os.path.join(root, "d", "x.txt")) and
    open(os.path.join(root, "d", "f.txt")).read() == "one\n", "the cancelled calls wrote nothing")
# a call still waiting when input ends is cancelled with the rest: the server exits
w = s.call("tools/call", name="write", arguments={"path": "d/y.txt", "content": "y"})
time.sleep(0.2)
s.p.stdin.close()
try:
    rc = s.p.wait(60)
except Exception:
    rc = None
    s.p.kill()
    s.p.wait()
tap(rc == 0, "the server exits at the end of input while the directory is still locked (%s)" % rc)
tap(not os.path.exists(os.path.join(root, "d", "y.txt")), "its write wrote nothing")
# once the lock is let go, writes go through
fcntl.flock(held, fcntl.LOCK_UN)
os.close(held)
s = Pipelined([wap, "serve", "--root", root])
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})
a = s.call("tools/call", name="write", arguments={"path": "d/x.txt", "content": "x"})
r = s.replies({a}, 60).get(a)
tap(r is not None and not r["result"].get("isError") and
    open(os.path.join(root, "d", "x.txt")).read() == "x", "with the lock let go the write is made")
tap(s.close() == 0, "the server exits 0")
