#!/usr/bin/env python3
"""stdiofuzz.py WAP N [SEED] - mutate the valid requests of the JSONL
scenarios (tests/serve/*.jsonl) and send N of them to `wap serve` over
stdio, per profile the scenarios use: values swapped for hostile ones
(wrong types, huge and negative numbers, long and odd strings, deep
nesting, NULs, paths out of the root), keys dropped, bytes flipped and
lines cut.  Every request that parses must be answered (no hang), the
server must not crash, and its memory must not keep growing; under ASan
its stderr must hold no sanitizer report (leaks at exit included).  TAP."""
import json, os, random, re, select, shutil, subprocess, sys, tempfile, time



def fixture(root):
    os.makedirs(os.path.join(root, "sub", "deep"))
    for f, t in (("a.txt", "hello\nworld\n"), ("notes.md", "# Notes\nTODO: one\n"),
                 ("sub/b.c", "int main(void)\n{\n\treturn 0;\n}\n"), ("sub/deep/c.py", "x = 1\n")):
        with open(os.path.join(root, f), "w") as fh:
            fh.write(t)
    subprocess.run(["git", "init", "-q", root], check=True)

wap, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 12)
here = os.path.dirname(os.path.abspath(__file__))
WAIT = float(os.environ.get("STDIOFUZZ_WAIT", "30"))

corpus = {}
for fn in sorted(os.listdir(here)):
    if not fn.endswith(".jsonl"):
        continue
    args = []
    for line in open(os.path.join(here, fn), encoding="utf-8"):
        if line.startswith("# args:"):
            args = line[7:].split()
        elif line.startswith("> "):
            try:
                m = json.loads(line[2:])
            except ValueError:
                continue
            if isinstance(m, dict) and m.get("method") not in (None, "initialize"):
                corpus.setdefault(" ".join(args), []).append(m)

HOSTILE = ["", "..", "../..", "/etc/passwd", "a\u0000b", "\u0000", "x" * 70000, "*" * 3000,
           "**/" * 300 + "x", "(a+)+$" * 50, "[" * 5000, "\\", "\ud7ff\ufffd", "é" * 1000,
           "$ROOT/../x", "sub/../../x", ".git/config", "a.txt//", "-rf", "--help",
           -1, 0, 1, -2 ** 63, 2 ** 63, 2 ** 64 + 1, 1e308, -1e308, 0.5, 1e-300,
           True, False, None, [], {}, [None], {"": None}, [[[[[[]]]]]],
           [""] * 3000, {"k%d" % i: i for i in range(2000)}]


def deep(k):  # a placeholder, nested in the text (Python's json recurses)
    return "\u0001DEEP%d\u0001" % k


def paths(v, at=()):
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, at + (i,))


def mutate(m):
    m = json.loads(json.dumps(m))
    for _ in range(rng.randint(1, 4)):
        ps = [p for p in paths(m) if p and p[0] not in ("jsonrpc", "id")]
        # mostly inside the arguments: the envelope has its own tests
        inner = [p for p in ps if len(p) > 2 and p[0] == "params"]
        if inner and rng.random() < 0.9:
            ps = inner
        if not ps:
            break
        p = rng.choice(ps)
        parent = m
        for k in p[:-1]:
            parent = parent[k]
        r = rng.random()
        if r < 0.1 and isinstance(parent, dict):
            del parent[p[-1]]
        elif r < 0.15:
            parent[p[-1]] = deep(rng.choice([50, 500, 5000]))
        else:
            parent[p[-1]] = json.loads(json.dumps(rng.choice(HOSTILE)))
    # a command stays short: the exec applet is not what is fuzzed here
    a = m.get("params", {}).get("arguments") if isinstance(m.get("params"), dict) else None
    if isinstance(a, dict):
        for k in ("timeout_ms", "timeout", "wait_ms"):
            if k in a:
                a[k] = 2000
    s = json.dumps(m, ensure_ascii=rng.random() < 0.5)
    s = re.sub(r'"\\u0001DEEP(\d+)\\u0001"', lambda d: "[" * int(d.group(1)) + "]" * int(d.group(1)), s)
    if rng.random() < 0.15:
        b = bytearray(s.encode())
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(b))
            b[i] = rng.choice(b'{}[]",:\\\x00\xff\xc3 0-e')
        if rng.random() < 0.3:
            del b[rng.randrange(len(b)):]
        return bytes(b).replace(b"\n", b" ")
    return s.encode()


def rss(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


tap = []
per = max(1, n // len(corpus))
for args, reqs in sorted(corpus.items()):
    root = tempfile.mkdtemp(prefix="stdiofuzz.")
    fixture(root)
    errf = open(os.path.join(root, ".stderr"), "w+b")
    p = subprocess.Popen([wap, "serve", "--root", root] + args.split(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=errf)
    buf = b""
    hung = []
    done = [0, 0, 0]	# answered: JSON-RPC errors, tool errors, results
    t0 = time.time()

    def send(line):
        p.stdin.write(line + b"\n")
        p.stdin.flush()

    def answer(rid):
        global buf
        end = time.time() + WAIT
        while time.time() < end:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    r = json.loads(line)
                    # a request jansson refuses is answered with id null
                    if "id" in r and r["id"] in (rid, None):
                        done[0 if "error" in r else 1 if r.get("result", {}).get("isError") else 2] += 1
                        return True
                except (ValueError, AttributeError, TypeError, RecursionError):
                    pass
            r, _, _ = select.select([p.stdout], [], [], 0.5)
            if r:
                d = os.read(p.stdout.fileno(), 1 << 20)
                if not d:
                    return False
                buf += d
        return False

    send(json.dumps({"jsonrpc": "2.0", "id": "i", "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}).encode())
    answer("i")
    send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    mem = []
    for i in range(per):
        line = mutate(rng.choice(reqs))
        try:
            m = json.loads(line)
            rid = m.get("id") if isinstance(m, dict) else None
        except (ValueError, RecursionError):
            rid = None
        if rid is not None and isinstance(rid, (str, int)) and not isinstance(rid, bool):
            rid = "f%d" % i
            m["id"] = rid
            line = json.dumps(m).encode()
        try:
            send(line)
        except BrokenPipeError:
            break
        if isinstance(rid, str) and not answer(rid):
            if p.poll() is not None:
                break
            hung.append(line[:300])
            print("no answer in %d s: %r" % (WAIT, line[:300]), file=sys.stderr)
        if i % 20 == 0:
            mem.append(rss(p.pid))
    alive = p.poll() is None
    send_ok = True
    try:
        p.stdin.close()
    except BrokenPipeError:
        send_ok = False
    try:
        rc = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung at exit"
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    name = args or "(default)"
    san = re.search(r"(ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:).{0,1500}", err, re.S)
    tap.append((alive and rc == 0 and send_ok, "%s: %d mutants, server alive, exit %s" % (name, per, rc)))
    tap.append((not san, "%s: no sanitizer report%s" % (name, (": " + san.group(0)[:1500]) if san else "")))
    tap.append((not hung, "%s: every request answered (%d protocol errors, %d tool errors, %d results)%s"
                % (name, done[0], done[1], done[2], (": " + repr(hung[:3])) if hung else "")))
    q = len(mem) // 4
    grow = (sum(mem[-q:]) / q - sum(mem[q:2 * q]) / q) if q else 0
    tap.append((grow < 64 * 1024, "%s: memory %s KiB, growth %.0f KiB over the second half (%.0f s)"
                % (name, mem[-1] if mem else "?", grow, time.time() - t0)))
    shutil.rmtree(root, ignore_errors=True)

for i, (good, what) in enumerate(tap, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", i, what))
sys.exit(0 if all(g for g, _ in tap) else 1)
