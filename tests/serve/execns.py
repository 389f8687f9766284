#!/usr/bin/env python3
"""exec inside `wap serve` (threads, calls side by side): each command runs
in a PID namespace of its own whose init is a child of the server itself
(as root: no reaper in between), nothing a command does escapes its
deadline or reaches the server, one call leaves nothing to the next, and
the server's threads make their later children in its own namespace.
Prints "ok - ..." / "not ok - ..." lines.  usage: execns.py WAP ROOT"""
import ctypes, json, os, select, signal, subprocess, sys, threading, time


def shares_vm(a, b):
    """kcmp(A, B, KCMP_VM): do processes A and B share their memory?"""
    nr = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)
    return nr is not None and ctypes.CDLL(None).syscall(nr, a, b, 1, 0, 0) == 0


if sys.argv[1] == "--kcmp-vm":  # for tests/exec.sh
    sys.exit(0 if shares_vm(int(sys.argv[2]), int(sys.argv[3])) else 1)
wap, root = sys.argv[1], sys.argv[2]
# where wap holds commands in PID namespaces (as root, or not root with user
# namespaces) their init is cloned into the server's memory: not under ASan
SHARED = not os.environ.get("ASAN") and json.loads(subprocess.run(
    [wap, "info", "--json", "--root", root], stdout=subprocess.PIPE).stdout or b"{}"
).get("execSupervisor") == "pid-namespace"


TAG = ""


def ok(cond, desc):
    print(("ok - " if cond else "not ok - ") + TAG + desc, flush=True)


class Server:
    def __init__(self, extra, workers=4):
        self.p = subprocess.Popen([wap, "serve", "--root", root, "--workers", str(workers)] + extra,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.replies, self.lock = {}, threading.Condition()
        threading.Thread(target=self.reader, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
        self.wait(0, 30)

    def reader(self):
        for line in self.p.stdout:
            m = json.loads(line)
            with self.lock:
                self.replies[m.get("id")] = m
                self.lock.notify_all()
        with self.lock:
            self.replies["eof"] = True
            self.lock.notify_all()

    def send(self, m):
        self.p.stdin.write((json.dumps(m) + "\n").encode())
        self.p.stdin.flush()

    def exec(self, i, args):
        self.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "exec", "arguments": args}})

    def wait(self, i, timeout):
        end = time.monotonic() + timeout
        with self.lock:
            while i not in self.replies and "eof" not in self.replies:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)
            return self.replies.get(i)

    def result(self, i, timeout=30):
        r = self.wait(i, timeout)
        return (r or {}).get("result", {}).get("structuredContent")

    def stop(self):
        try:
            self.p.stdin.close()
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def alive(pattern):
    return subprocess.run(["pgrep", "-f", pattern], stdout=subprocess.PIPE).stdout.split()


def running(pid):
    """is PID a process that has not ended (a zombie has)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def gone(pattern, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not alive(pattern):
            return True
        time.sleep(0.05)
    for p in alive(pattern):
        os.kill(int(p), signal.SIGKILL)
    return False


def run(extra):
    s = Server(extra)
    spid = s.p.pid
    ourns = os.readlink(f"/proc/{spid}/ns/pid")

    # ---- who supervises the command ----
    s.exec(1, {"command": "readlink /proc/self/ns/pid; echo $$"})
    r = s.result(1)
    lines = (r or {}).get("stdout", "").split()
    ok(r is not None and r["exit_code"] == 0 and len(lines) == 2, f"exec in serve runs: {r}")
    if len(lines) == 2:
        ok(lines[0] != ourns, "the command has a PID namespace of its own")
        ok(lines[1] == "1" or lines[1] == "2", f"the command is at the root of its namespace (pid {lines[1]})")
    # (the host's view: the command's parent, and that one's parent; from
    # inside, a sandboxed command's /proc is its namespace's alone)
    if os.geteuid() == 0 or SHARED:
        s.exec(3, {"command": "exec sleep 0.85"})
        cmd = []
        for _ in range(100):
            cmd = subprocess.run(["pgrep", "-fx", "sleep 0.85"], stdout=subprocess.PIPE).stdout.split()
            if cmd:
                break
            time.sleep(0.02)
        sup = up = ""
        if len(cmd) == 1:
            with open(f"/proc/{int(cmd[0])}/stat") as f:
                sup = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{sup}/stat") as f:
                up = f.read().rsplit(")", 1)[1].split()[1]
        ok(up == str(spid), f"the namespace's init is a child of wap serve itself "
           f"(command {cmd}, its parent {sup}, that one's {up}, serve {spid}): no reaper in between")
        s.result(3)
    else:
        ok(True, "# SKIP not root, under ASan: a reaper makes the user namespace")
    # sandboxed or not, the init is cloned into the server's memory: no copy
    # of the server is made (the command enters its sandbox with system calls)
    if SHARED:
        s.exec(2, {"command": "sleep 0.8"})
        init = []
        for _ in range(100):
            init = subprocess.run(["pgrep", "-P", str(spid)], stdout=subprocess.PIPE).stdout.split()
            if init:
                break
            time.sleep(0.02)
        # (a thread's init is kept for its next command: one per thread
        # that has run one, each in the server's memory)
        ok(init and all(shares_vm(spid, int(p)) for p in init),
           f"the inits share the server's memory (init {init}, serve {spid})")
        s.result(2)
    else:
        ok(True, "# SKIP the init is cloned into the server's memory only with a PID "
           "namespace, not under ASan")

    # ---- calls side by side: each its own namespace, all answered ----
    # (the kernel reuses a freed namespace's inode number, so only calls
    # whose lives overlapped must show different ones: each prints when
    # it began and ended, from /proc/uptime)
    for i in range(10, 16):
        s.exec(i, {"command": "read a _ < /proc/uptime; readlink /proc/self/ns/pid; sleep 0.3; "
                              "read b _ < /proc/uptime; echo $a $b"})
    res = [s.result(i) for i in range(10, 16)]
    out = [(r or {}).get("stdout", "").split() for r in res]
    ok(all(r and r["exit_code"] == 0 and len(o) == 3 for r, o in zip(res, out)),
       "six exec calls side by side all answered")
    nss = [o[0] if len(o) == 3 else "" for o in out]
    span = [(float(o[1]), float(o[2])) if len(o) == 3 else (0.0, 0.0) for o in out]
    clash = [(nss[i], nss[j]) for i in range(6) for j in range(i + 1, 6)
             if span[i][0] < span[j][1] and span[j][0] < span[i][1] and nss[i] == nss[j]]
    ok(all(nss) and not clash and ourns not in nss,
       f"each call had a namespace of its own: {nss} {span}")
    # and a next one, on threads that made namespaces before
    s.exec(17, {"command": "echo again"})
    r = s.result(17)
    ok(r is not None and r["stdout"] == "again\n", "a later exec on the same threads runs")
    # every thread of the server still makes its children in the server's namespace
    bad = []
    for t in os.listdir(f"/proc/{spid}/task"):
        try:
            ns = os.readlink(f"/proc/{spid}/task/{t}/ns/pid_for_children")
        except OSError:
            continue
        if ns != ourns:
            bad.append((t, ns))
    ok(not bad, f"every thread of wap serve makes its children in its own PID namespace {bad}")

    # ---- the command cannot reach the server ----
    s.exec(20, {"command": f"kill -0 {spid} && echo reached || echo unreachable"})
    r = s.result(20)
    ok(r is not None and r["stdout"] == "unreachable\n", f"the command cannot signal wap serve: {r}")

    # the init shares wap serve's memory (CLONE_VM): a signal the command sends
    # it must not run one of the server's handlers there, nor end the call
    s.exec(23, {"command": "for s in HUP INT TERM QUIT USR1 USR2 ALRM PIPE WINCH CHLD URG; do kill -$s 1; done; "
                           "sleep 0.2; echo still"})
    r = s.result(23)
    ok(r is not None and r["stdout"] == "still\n" and r["exit_code"] == 0 and not r.get("cancelled"),
       f"signals sent to the init from inside change nothing: {r}")
    s.exec(24, {"command": "echo after"})
    r = s.result(24)
    ok(r is not None and r["stdout"] == "after\n", f"the server answers after them: {r}")

    # ---- nothing escapes the deadline: kill the parent, kill pid 1, a setsid daemon ----
    t0 = time.monotonic()
    s.exec(21, {"command": "kill -9 $PPID; kill -9 1; "
                           "(setsid sh -c 'trap \"\" TERM; exec sleep 91.25' </dev/null >/dev/null 2>&1 &); "
                           "exec sleep 92.25", "timeout_ms": 1000, "kill_after": 300})
    r = s.result(21)
    dt = time.monotonic() - t0
    ok(r is not None and r["timed_out"], f"kill -9 $PPID, kill -9 1, a setsid daemon: still timed out: {r}")
    ok(0.9 < dt < 6, f"ended at the deadline ({dt * 1000:.0f} ms)")
    ok(gone("^sleep 9[12][.]25$", 3), "the command and the daemon are gone")
    # a daemon left after the command itself exited at once
    s.exec(22, {"command": "(setsid sh -c 'trap \"\" TERM; exec sleep 90.25' </dev/null >/dev/null 2>&1 &); "
                           "echo left", "kill_after": 300})
    r = s.result(22)
    ok(r is not None and r["stdout"] == "left\n" and not r["timed_out"], f"a command leaving a daemon returns: {r}")
    ok(gone("^sleep 90[.]25$", 1), "the daemon it left is gone when the call returns")

    # ---- a command that stops its init (ptrace: not sandboxed) still ends in time ----
    # (the system's python: the sandbox runs what the system dirs hold)
    prog = ("import ctypes, os, time; r = ctypes.CDLL(None, use_errno=True).ptrace(16, 1, 0, 0); "
            "print(r, os.strerror(ctypes.get_errno()), flush=True); time.sleep(30)")
    t0 = time.monotonic()
    for i in range(50, 52):
        s.exec(i, {"command": f"exec /usr/bin/python3 -c '{prog}'", "timeout_ms": 300, "kill_after": 200})
    res = [s.result(i) for i in range(50, 52)]
    dt = time.monotonic() - t0
    ok(all(r and r["timed_out"] for r in res) and dt < 8,
       f"commands that stop their init are still timed out ({dt * 1000:.0f} ms): {res}")
    if "--no-sandbox" not in extra:
        ok(all(r and r["stdout"].startswith("-1 Operation not permitted") for r in res),
           f"sandboxed, a command cannot ptrace its init: {[(r or {}).get('stdout') for r in res]}")
    for i in range(52, 56):
        s.exec(i, {"command": "echo next"})
    res = [s.result(i) for i in range(52, 56)]
    ok(all(r and r["stdout"] == "next\n" for r in res), f"and the next calls run: {res}")

    # ---- a thread's init is kept for its next command; killed, it is made anew ----
    if SHARED:
        kids = lambda: [int(p) for p in subprocess.run(["pgrep", "-P", str(spid)],
                                                       stdout=subprocess.PIPE).stdout.split()]
        killed = kids()
        for p in killed:
            os.kill(p, signal.SIGKILL)
        # (between calls: dead, not dying - a call sent to an init that is
        # still ending fails, as one whose init is killed during it does)
        end = time.monotonic() + 5
        while any(running(p) for p in killed) and time.monotonic() < end:
            time.sleep(0.02)
        for i in range(40, 44):
            s.exec(i, {"command": "echo anew"})
        res = [s.result(i) for i in range(40, 44)]
        ok(all(r and r["stdout"] == "anew\n" for r in res), f"inits killed between calls: the next calls run: {res}")
        # killed during a call: that call fails, the thread's next one runs
        s.exec(45, {"command": "exec sleep 88.25"})
        end, init = time.monotonic() + 10, 0
        while not init and time.monotonic() < end:
            for c in alive("^sleep 88[.]25$"):
                with open(f"/proc/{int(c)}/stat") as f:
                    init = int(f.read().rsplit(")", 1)[1].split()[1])
            time.sleep(0.02)
        ok(init in kids(), f"the command's init is a child of the server ({init})")
        t0 = time.monotonic()
        if init:
            os.kill(init, signal.SIGKILL)
        r = s.wait(45, 10) or {}
        msg = json.dumps(r.get("result", r.get("error", {})))
        ok(time.monotonic() - t0 < 5 and "supervisor ended unexpectedly" in msg,
           f"its init killed, the call fails at once: {msg[:200]}")
        ok(gone("^sleep 88[.]25$", 3), "and its command is gone")
        for i in range(46, 50):
            s.exec(i, {"command": "echo after"})
        res = [s.result(i) for i in range(46, 50)]
        ok(all(r and r["stdout"] == "after\n" for r in res), f"the next calls run: {res}")
        # the server ending ends them all
        left = kids()
        s.stop()
        time.sleep(0.2)
        ok(left and not [p for p in left if running(p)],
           f"the server ended: its inits are gone ({left})")
        s = Server(extra)
        spid = s.p.pid

    # ---- the server killed outright: its commands die with it ----
    s.exec(30, {"command": "trap '' TERM; exec sleep 89.25", "kill_after": 300})
    end = time.monotonic() + 10
    while not alive("^sleep 89[.]25$") and time.monotonic() < end:
        time.sleep(0.05)
    ok(bool(alive("^sleep 89[.]25$")), "a long command runs")
    s.p.kill()
    s.p.wait()
    ok(gone("^sleep 89[.]25$", 5), "wap serve killed with SIGKILL: the command's tree is gone")


# sandboxed (the default) and not: as root, both with the init cloned into
# the server's memory (CLONE_VM)
for TAG, extra in (("", []), ("--no-sandbox: ", ["--no-sandbox"])):
    run(extra)
