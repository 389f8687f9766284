#!/usr/bin/env python3
"""symwait.py WAP ROOT - a sym rename (a writing action) waiting on a
language server that does not answer holds up no move nor write of the
server: it held the tree lock shared while it waited, so a move waited for
the server (up to the request's time limit), and every write behind the
move.  It now holds the lock from when it writes the server's edits on
(tests/serve/pullwait.py: the same for git's fetch, push and pull).  TAP
lines."""
import os, sys, time
from wapstdio import Pipelined

wap, root = sys.argv[1], sys.argv[2]
STALL = 6


def tap(good, desc):
    print(("ok" if good else "not ok") + " - " + desc, flush=True)


# a server that answers initialize and then nothing
conf = os.path.join(root, "xdg")
ws = os.path.join(root, "ws")
os.makedirs(os.path.join(conf, "wap"))
os.makedirs(os.path.join(ws, "d"))
mute = os.path.join(ws, "mute-lsp.sh")
open(mute, "w").write('''IFS= read -r h; IFS= read -r blank
head -c "$(printf %s "$h" | tr -dc 0-9)" >/dev/null
b='{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"documentSymbolProvider":true,"renameProvider":true}}}'
printf 'Content-Length: %s\\r\\n\\r\\n%s' "${#b}" "$b"
exec cat >/dev/null
''')
open(os.path.join(conf, "wap", "config.json"), "w").write(
    '{"lsp": {"servers": {"mute": {"command": ["sh", "%s"], "extensions": ["mute"]}}}}\n' % mute)
open(os.path.join(ws, "a.mute"), "w").write("x\n")

env = dict(os.environ, XDG_CONFIG_HOME=conf)
s = Pipelined([wap, "serve", "--root", ws, "--workers", "4"], env=env)
s.replies({s.call("initialize", protocolVersion="2025-06-18", capabilities={},
                  clientInfo={"name": "t", "version": "1"})})
t0 = time.monotonic()
r = s.call("tools/call", name="sym", arguments={"action": "rename", "path": "a.mute", "name_path": "x",
                                                "new_name": "y", "timeout_ms": STALL * 1000})
time.sleep(1.5)
m = s.call("tools/call", name="mv", arguments={"source": "d", "destination": "e"})
time.sleep(0.3)
w = s.call("tools/call", name="write", arguments={"path": "new.txt", "content": "x\n"})
got = s.replies({m, w}, STALL - 2)	# (before the rename gives up: its reply is not kept)
tw = time.monotonic() - t0
good = all(k in got and not got[k]["result"].get("isError") for k in (m, w))
tap(good and tw < STALL - 2,
    "a move and a write while a rename waits on a mute language server are done at once "
    "(%.1f s; its request gives up after %d s)" % (tw, STALL))
got = s.replies({r}, 30)
tr = time.monotonic() - t0
tap(r in got and got[r]["result"].get("isError") and tr >= STALL - 1,
    "the rename waited for the server, then gave up (%.1f s)" % tr)
tap(open(os.path.join(ws, "new.txt")).read() == "x\n" and os.path.isdir(os.path.join(ws, "e")),
    "the file written, the dir moved")
rc = s.close()
tap(rc == 0, "the server exits 0 (%s)" % rc)
