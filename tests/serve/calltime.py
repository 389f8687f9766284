#!/usr/bin/env python3
"""The call's time limit over stdio: a grep over many bait files (each
under grep's own bound of 20 s, a file's) ends at WAP_CALL_TIME_MAX with
SIZE_LIMIT_EXCEEDED naming it, and the server answers the next call of the
same worker.  usage: calltime.py WAP ROOT (ROOT holds bait/)"""
import json, os, sys, time

from wapstdio import Pipelined

wap, root = sys.argv[1], sys.argv[2]


def ok(cond, desc):
    print(("ok - " if cond else "not ok - ") + desc, flush=True)


os.environ["WAP_CALL_TIME_MAX"] = "2"
s = Pipelined([wap, "serve", "--root", root, "--workers", "1"])
t0 = time.monotonic()
a = s.call("tools/call", name="grep", arguments={"pattern": "(x+x+)+y", "paths": ["bait"], "threads": 1})
r = s.replies({a}, 60).get(a)
dt = time.monotonic() - t0
text = json.dumps(r)
ok(r is not None and "SIZE_LIMIT_EXCEEDED" in text and "WAP_CALL_TIME_MAX" in text,
   "grep over bait files: SIZE_LIMIT_EXCEEDED naming the call's limit: " + text[:300])
ok(dt < 12, f"grep over bait files: answered in {dt * 1000:.0f} ms (limit 2 s)")
# the same worker, the next call: the deadline was that call's alone
b = s.call("tools/call", name="grep", arguments={"pattern": "y", "paths": ["bait/b0.txt"]})
r = s.replies({b}, 30).get(b)
ok(r is not None and "result" in r and not r["result"].get("isError") and "SIZE_LIMIT" not in json.dumps(r),
   "the next call of the same worker is answered: " + json.dumps(r)[:200])
try:
    rc = s.close(10)
except Exception:
    s.p.kill()
    rc = s.p.wait()
ok(rc == 0, f"the server exits 0 on stdin EOF ({rc})")
