"""wapstdio - the tests' JSON-RPC client of `wap serve` over stdio, one
request and one reply at a time (tests/lib.sh puts this dir on PYTHONPATH).

    s = Stdio([wap, "serve", "--root", root])
    reply = s.call("tools/call", name="exec", arguments={...})
    s.close()
"""
import json
import os
import select
import subprocess
import time


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


class Pipelined:
    """Many requests in flight: send them, then gather the replies by id.

        s = Pipelined([wap, "serve", "--root", root])
        a = s.call("tools/call", name="mv", arguments={...})
        got = s.replies({a, b})     # {id: reply}; a missing id timed out
    """

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.n = 0
        self.buf = b""

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def call(self, method, **params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return self.n

    def replies(self, want, timeout=30):
        got, end = {}, time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                m = json.loads(line)
                if isinstance(m, dict) and m.get("id") in want:
                    got[m["id"]] = m
            left = end - time.monotonic()
            if len(got) == len(want) or left <= 0 or \
                    not select.select([self.p.stdout], [], [], left)[0]:
                return got
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return got
            self.buf += chunk

    def close(self, timeout=30):
        self.p.stdin.close()
        return self.p.wait(timeout=timeout)


def git_repo(root, branch):
    """A new git repository at ROOT on BRANCH with a committer set; returns
    git(*args): `git -C ROOT args...`'s stdout (a failure raises)."""
    def git(*a):
        return subprocess.run(["git", "-C", root] + list(a), check=True, capture_output=True,
                              text=True).stdout
    os.makedirs(root, exist_ok=True)
    git("init", "-q", "-b", branch)
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "T")
    return git
