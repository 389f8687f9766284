"""wapstdio - the tests' JSON-RPC client of `wap serve` over stdio, one
request and one reply at a time (tests/lib.sh puts this dir on PYTHONPATH).

    s = Stdio([wap, "serve", "--root", root])
    reply = s.call("tools/call", name="exec", arguments={...})
    s.close()
"""
import json
import subprocess


class Stdio:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0

    def call(self, method, **params):
        """Send a request and return its reply (the next line)."""
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self, timeout=10):
        self.p.stdin.close()
        return self.p.wait(timeout=timeout)
