#!/usr/bin/env python3
"""pullwait.py WAP ROOT - a git pull from a remote that is slow to answer
(an HTTP server that waits 6 s before each reply) holds up no write of the
server: a pull held the tree lock alone through its fetch, so every write,
edit, mv of every client waited on the remote for as long as it liked.
It holds the lock shared while it waits on the network, alone only from
its fast-forward on (tests/serve/gitrace.py: that part and an edit are
still one before the other).  TAP lines."""
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
t0 = time.monotonic()
p = s.call("tools/call", name="git", arguments={"action": "pull"})
time.sleep(1)
w = s.call("tools/call", name="write", arguments={"path": "new.txt", "content": "x\n"})
got = s.replies({w}, STALL + 10)
tw = time.monotonic() - t0
good = w in got and not got[w]["result"].get("isError")
tap(good and tw < STALL - 2,
    "a write while a pull waits on a slow remote is done at once (%.1f s; the remote answers after %d s)"
    % (tw, STALL))
got = s.replies({p}, 60)	# (libgit2 asks more than once)
tp = time.monotonic() - t0
tap(p in got and tp >= STALL - 1, "the pull waited for the remote (%.1f s)" % tp)
tap(open(os.path.join(root, "new.txt")).read() == "x\n", "the file written")
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
httpd.shutdown()
