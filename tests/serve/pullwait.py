#!/usr/bin/env python3
"""pullwait.py WAP ROOT - a git pull, fetch or push to a remote that is slow
to answer (an HTTP server that waits 6 s before each reply) holds up no
write nor move of the server: a pull held the tree lock alone through its
fetch, so every write, edit, mv of every client waited on the remote for as
long as it liked; then shared, with fetch and push, so a move waited, and
every write behind the move.  They hold no lock while they wait on the
network (they write inside the git dir alone), a pull alone from its
fast-forward on (tests/serve/gitrace.py: that part and an edit are still
one before the other).  TAP lines."""
import http.server, os, sys, threading, time
from wapstdio import Pipelined, git_repo

wap, root = sys.argv[1], sys.argv[2]
STALL = 6


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(STALL)
        self.send_error(500)

    do_POST = do_GET

    def log_message(self, *a):
        pass


httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
threading.Thread(target=httpd.serve_forever, daemon=True).start()


git = git_repo(root, "main")
open(os.path.join(root, "f.txt"), "w").write("A\n")
git("add", "-A")
git("commit", "-qm", "a")
git("remote", "add", "origin", "http://127.0.0.1:%d/r.git" % httpd.server_address[1])

s = Pipelined([wap, "serve", "--root", root, "--workers", "4"])
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})
# a fetch and a push write only inside the git dir: they hold no tree lock
# while they wait (they held it shared: a move waited for the remote, and
# every write behind the move); a pull takes it alone for its fast-forward
for n, action in enumerate(["pull", "fetch", "push"]):
    os.makedirs(os.path.join(root, "d%d" % n))
    t0 = time.monotonic()
    p = s.call("tools/call", name="git", arguments={"action": action})
    time.sleep(1)
    m = s.call("tools/call", name="mv", arguments={"source": "d%d" % n, "destination": "e%d" % n})
    time.sleep(0.3)
    w = s.call("tools/call", name="write", arguments={"path": "new%d.txt" % n, "content": "x\n"})
    got = s.replies({m, w}, STALL + 10)
    tw = time.monotonic() - t0
    good = all(k in got and not got[k]["result"].get("isError") for k in (m, w))
    tap(good and tw < STALL - 2,
        "%s: a move and a write while it waits on a slow remote are done at once (%.1f s; "
        "the remote answers after %d s)" % (action, tw, STALL))
    got = s.replies({p}, 60)	# (libgit2 asks more than once)
    tp = time.monotonic() - t0
    tap(p in got and tp >= STALL - 1, "%s: waited for the remote (%.1f s)" % (action, tp))
    tap(open(os.path.join(root, "new%d.txt" % n)).read() == "x\n" and
        os.path.isdir(os.path.join(root, "e%d" % n)), "%s: the file written, the dir moved" % action)
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
httpd.shutdown()
