#!/usr/bin/env python3
"""httpfuzz.py WAP [SEED] - hostile traffic at the network doors of one
`wap serve --http 127.0.0.1:P --ws 127.0.0.1:Q --token-file F` on a
scratch workspace, over raw sockets, from a fixed seed:

HTTP: odd request lines, methods, paths and versions; headers missing,
doubled, huge, or lying (Content-Length negative, overflowing, short or
long, beside Transfer-Encoding; Host, Origin, Authorization,
Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version); bytes
flipped, NULs, invalid UTF-8, lines cut; requests pipelined, truncated,
or sent a few bytes at a time; bodies of mutated JSON-RPC (initialize,
tools/list, tools/call of read/glob/grep/ls/stat, notifications,
responses, batches, deep nesting).

WebSocket: upgrades with bad keys, versions, Host/Origin; frames
fragmented, unmasked, oversize, with reserved bits and opcodes, binary,
control frames (within fragments, oversize), close codes; Agent Control
messages mutated before and after auth.authenticate.

Every reply is checked as it comes: an HTTP status that is no 5xx, JSON
bodies that parse, JSON-RPC errors with the spec's codes (or wap's
-32001..-32011, -32800/-32803), WebSocket text that parses, close codes
that may be sent.  A request sent whole and well framed is answered
(no hang).  After each batch: the server is alive, /health is 200, an
MCP tools/call and an authenticated fs.readFile still work.  At the end
SIGTERM stops it with exit 0 and no sanitizer report on stderr.  TAP.

HTTPFUZZ_HTTP and HTTPFUZZ_WS: how many HTTP cases and WebSocket clients
(400, 100); HTTPFUZZ_THREADS clients at once (16); HTTPFUZZ_WAIT seconds
for an answer (20); HTTPFUZZ_LOG=FILE writes each HTTP case there before
it is sent, to replay the one a server died of (HTTPFUZZ_THREADS=1)."""
import base64, hashlib, json, os, random, re, shutil, signal, socket, struct, subprocess, sys
import tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor

wap = sys.argv[1]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 7
rng = random.Random(SEED)
WAIT = float(os.environ.get("HTTPFUZZ_WAIT", "20"))	# a whole request's answer, at most
NHTTP = int(os.environ.get("HTTPFUZZ_HTTP", "400"))	# HTTP cases, in batches
NWS = int(os.environ.get("HTTPFUZZ_WS", "100"))	# WebSocket connections, in batches
BATCHES = 4
t_start = time.time()
fails = []	# (what, detail)
stats = {}
lock = threading.Lock()


def fail(what, detail):
    with lock:
        fails.append((what, detail))


def count(k):
    with lock:
        stats[k] = stats.get(k, 0) + 1


# ---- the server ----
D = tempfile.mkdtemp(prefix="httpfuzz.")
ROOT = os.path.join(D, "root")
os.makedirs(os.path.join(ROOT, "sub", "deep"))
for f, t in (("a.txt", "hello\nworld\n"), ("notes.md", "# Notes\nTODO: one\n"),
             ("sub/b.c", "int main(void)\n{\n\treturn 0;\n}\n"), ("sub/deep/c.py", "x = 1\n")):
    with open(os.path.join(ROOT, f), "w") as fh:
        fh.write(t)
subprocess.run(["git", "init", "-q", ROOT], check=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


HP, WP = free_port(), free_port()
TOKF = os.path.join(D, "tok")
errf = open(os.path.join(D, "stderr"), "w+b")
srv = subprocess.Popen([wap, "serve", "--root", ROOT, "--http", "127.0.0.1:%d" % HP, "--ws", "127.0.0.1:%d" % WP,
                        "--token-file", TOKF, "--max-message", "1048576"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf)


def health():
    try:
        st, _, body = http_once(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout=10)
        return st == 200 and json.loads(body).get("status") == "ok"
    except Exception:
        return False


# ---- HTTP over a raw socket ----
def parse_responses(buf, closed):
    """the complete responses at the start of BUF: [(status, {header: value}, body)], rest;
    a response that does not parse: (None, reason, head)"""
    out = []
    while buf:
        i = buf.find(b"\r\n\r\n")
        if i < 0:
            if closed:
                out.append((None, "a reply cut in its headers", buf[:200]))
                buf = b""
            break
        head, rest = buf[:i].split(b"\r\n"), buf[i + 4:]
        m = re.match(rb"HTTP/1\.[01] (\d{3})( .*)?$", head[0])
        if not m:
            out.append((None, "not a status line", head[0][:200]))
            return out, b""
        st = int(m.group(1))
        hd = {}
        for line in head[1:]:
            k, _, v = line.partition(b":")
            hd[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
        if "content-length" in hd:
            n = int(hd["content-length"])
            if len(rest) < n:
                if closed:
                    out.append((None, "a body shorter than its Content-Length", head[0]))
                    buf = b""
                break
            body, buf = rest[:n], rest[n:]
        elif hd.get("transfer-encoding", "").lower() == "chunked":
            body, j, done = b"", 0, False
            while True:
                k = rest.find(b"\r\n", j)
                if k < 0:
                    break
                size = int(rest[j:k].split(b";")[0], 16)
                if len(rest) < k + 2 + size + 2:
                    break
                body += rest[k + 2:k + 2 + size]
                j = k + 2 + size + 2
                if size == 0:
                    done = True
                    break
            if not done:
                if closed:
                    out.append((st, hd, body))	# an event stream may end with the connection
                    buf = b""
                break
            buf = rest[j:]
        elif st in (204, 304) or st < 200:
            body, buf = b"", rest
        else:
            if not closed:
                break
            body, buf = rest, b""
        out.append((st, hd, body))
    return out, buf


RPC_CODES = {-32700, -32600, -32601, -32602, -32603, -32800, -32803} | set(range(-32011, -32000))


def check_rpc(v, where):
    """V (a parsed JSON-RPC reply or batch of them) keeps to the spec"""
    for r in v if isinstance(v, list) else [v]:
        if not isinstance(r, dict) or r.get("jsonrpc") != "2.0" or ("result" in r) == ("error" in r) or "id" not in r:
            fail(where, "not a JSON-RPC reply: %.300r" % (r,))
            continue
        if "error" in r:
            e = r["error"]
            if not isinstance(e, dict) or not isinstance(e.get("code"), int) or not isinstance(e.get("message"), str):
                fail(where, "a malformed error: %.300r" % (e,))
            elif e["code"] not in RPC_CODES:
                fail(where, "error code %s is not the spec's: %.300r" % (e["code"], e))
            else:
                count("rpc %d" % e["code"])
                if e["code"] == -32603 and "stopping" not in e["message"]:
                    fail(where, "an internal error: %.300r" % (e,))


def check_reply(st, hd, body, where):
    if st is None:
        fail(where, "%s: %.200r" % (hd, body))
        return
    count("http %d" % st)
    if st >= 500:
        fail(where, "status %d: %.300r" % (st, body))
    ct = hd.get("content-type", "")
    if "json" in ct:
        try:
            v = json.loads(body)
        except ValueError:
            fail(where, "status %d, a JSON body that does not parse: %.300r" % (st, body))
            return
        if isinstance(v, list) or (isinstance(v, dict) and "jsonrpc" in v):
            check_rpc(v, where)
    elif "event-stream" in ct:
        for line in body.split(b"\n"):
            if line.startswith(b"data:"):
                try:
                    check_rpc(json.loads(line[5:]), where)
                except ValueError:
                    fail(where, "an event that does not parse: %.300r" % line)


LOG = open(os.environ["HTTPFUZZ_LOG"], "ab") if os.environ.get("HTTPFUZZ_LOG") else None
THREADS = int(os.environ.get("HTTPFUZZ_THREADS", "16"))


def exchange(data, pieces=1, nreq=1, timeout=WAIT, must=False, where="http"):
    """send DATA (in PIECES, a little apart), read replies until NREQ are in,
    the connection closes or TIMEOUT; check each; MUST: no reply is a hang"""
    if LOG:	# HTTPFUZZ_LOG=FILE: each case, before it is sent
        with lock:
            LOG.write(b"%s %d %r\n" % (where.encode(), pieces, data))
            LOG.flush()
    s = socket.socket()
    s.settimeout(timeout)
    got = []
    closed = False
    try:
        s.connect(("127.0.0.1", HP))
        if pieces > 1:
            cuts = sorted(rng.sample(range(1, len(data)), min(pieces - 1, len(data) - 1))) if len(data) > 1 else []
            last = 0
            for c in cuts + [len(data)]:
                s.sendall(data[last:c])
                last = c
                time.sleep(0.01)
        else:
            s.sendall(data)
        buf, closed, end = b"", False, time.time() + timeout
        while len(got) < nreq and time.time() < end:
            try:
                d = s.recv(1 << 16)
            except socket.timeout:
                break
            except ConnectionResetError:
                d = b""
            if not d:
                closed = True
            buf += d
            rs, buf = parse_responses(buf, closed)
            got += rs
            if closed:
                break
    except OSError as e:
        if must:
            fail(where, "socket: %s on %.200r" % (e, data[:200]))
    finally:
        s.close()
    for st, hd, body in got:
        check_reply(st, hd, body, where)
    # libwebsockets closes a connection whose headers pass its header
    # table's room (4 KiB) without a word: not waited for
    if must and not got and not (closed and data.find(b"\r\n\r\n") > 4000):
        fail(where, "%s: %r" % ("closed without a reply" if closed else "no reply in %.0f s (a hang?)" % timeout,
                                data if len(data) < 1200 else data[:600] + b"..." + data[-600:]))
    return got


def http_once(data, timeout=WAIT):
    r = exchange(data, timeout=timeout, where="http probe")
    return r[0] if r else (None, {}, b"")


TOKEN = None


def req(method=b"POST", path=b"/mcp", body=b"", sid=None, extra=(), auth=True, cl=True, ctype=True):
    h = [method + b" " + path + b" HTTP/1.1", b"Host: 127.0.0.1:%d" % HP]
    if auth:
        h.append(b"Authorization: Bearer " + TOKEN.encode())
    if ctype:
        h.append(b"Content-Type: application/json")
    h.append(b"Accept: application/json, text/event-stream")
    if sid:
        h.append(b"Mcp-Session-Id: " + sid.encode())
    if cl:
        h.append(b"Content-Length: %d" % len(body))
    h += list(extra)
    return b"\r\n".join(h) + b"\r\n\r\n" + body


def rpc(method, params=None, id=1):
    m = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return m


INIT = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}})
SID = None


def initialize():
    st, hd, body = http_once(req(body=json.dumps(INIT).encode()))
    return hd.get("mcp-session-id") if st == 200 else None


def mcp_works():
    """a fresh session reads a.txt"""
    sid = initialize()
    if not sid:
        return False
    st, _, body = http_once(req(body=json.dumps(rpc("tools/call", {"name": "read", "arguments": {"path": "a.txt"}}, 2)).encode(), sid=sid))
    try:
        if st == 200 and "hello" in json.dumps(json.loads(body)["result"]):
            http_once(req(b"DELETE", sid=sid))
            return True
    except (ValueError, KeyError, TypeError):
        pass
    return False


# ---- mutation ----
def call(name, args, id=1):
    return rpc("tools/call", {"name": name, "arguments": args}, id)


MCP = [INIT, rpc("tools/list"), rpc("tools/list", {"cursor": "x"}), rpc("ping"),
       call("read", {"path": "a.txt"}), call("read", {"path": "a.txt", "offset": 2, "limit": 1}),
       call("glob", {"pattern": "**/*.c"}), call("grep", {"pattern": "TODO", "path": "."}),
       call("grep", {"pattern": "ret.rn", "path": "sub", "ignore_case": True}),
       call("ls", {"path": "sub"}), call("stat", {"path": "a.txt"}),
       rpc("resources/list"), rpc("logging/setLevel", {"level": "debug"}),
       {"jsonrpc": "2.0", "method": "notifications/initialized"},
       {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
       {"jsonrpc": "2.0", "id": "wap-roots-1", "result": {"roots": []}}]
HOSTILE = ["", "..", "../..", "/etc/passwd", "a\u0000b", "\u0000", "x" * 5000, "*" * 3000,
           "**/" * 300 + "x", "(a+)+$" * 50, "[" * 500, "\\", "\ud7ff\ufffd", "é" * 1000,
           "sub/../../x", ".git/config", "a.txt//", "-rf", "--help", "tools/call", "initialize",
           -1, 0, 1, -2 ** 63, 2 ** 63, 2 ** 64 + 1, 1e308, -1e308, 0.5, 1e-300,
           True, False, None, [], {}, [None], {"": None}, [[[[[[]]]]]], [""] * 300,
           {"k%d" % i: i for i in range(300)}]


def paths(v, at=()):
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, at + (i,))


def deep(k, o="[", c="]"):
    return "\u0001DEEP%d%s\u0001" % (k, o)


def mutate_json(m, envelope=0.3):
    m = json.loads(json.dumps(m))
    for _ in range(rng.randint(0, 3)):
        ps = [p for p in paths(m) if p]
        if rng.random() > envelope:
            ps = [p for p in ps if len(p) > 1] or ps
        if not ps:
            break
        p = rng.choice(ps)
        parent = m
        for k in p[:-1]:
            parent = parent[k]
        r = rng.random()
        if r < 0.12 and isinstance(parent, dict):
            del parent[p[-1]]
        elif r < 0.2:
            parent[p[-1]] = deep(rng.choice([30, 300, 3000, 30000]), rng.choice("[{"))
        else:
            parent[p[-1]] = json.loads(json.dumps(rng.choice(HOSTILE)))
    return m


def encode(m):
    s = json.dumps(m, ensure_ascii=rng.random() < 0.5)

    def nest(d):
        k, o = int(d.group(1)), d.group(2)
        return ('{"a":' * k + "1" + "}" * k) if o == "{" else ("[" * k + "]" * k)
    s = re.sub(r'"\\u0001DEEP(\d+)([\[{])\\u0001"', nest, s)
    return s.encode()


def flip(b, n=None):
    b = bytearray(b)
    for _ in range(n or rng.randint(1, 6)):
        if not b:
            break
        i = rng.randrange(len(b))
        r = rng.random()
        if r < 0.6:
            b[i] = rng.choice(b'{}[]",:\\\x00\xff\xc3\xe2\x80\xed\xa0 0-e\r\n')
        elif r < 0.8:
            b[i:i] = bytes(rng.choice([b"\x00", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]))
        else:
            del b[i]
    return bytes(b)


def body():
    r = rng.random()
    if r < 0.15:	# a batch
        msgs = [mutate_json(rng.choice(MCP[1:])) for _ in range(rng.choice([0, 1, 2, 3, 5, 120]))]
        for i, x in enumerate(msgs):
            if isinstance(x, dict) and "id" in x:
                x["id"] = i + 1
        b = encode(msgs)
    elif r < 0.2:
        b = rng.choice([b"", b"null", b"1", b'"x"', b"[]", b"{}", b"[[]]", b"[1,2]", b'{"jsonrpc":"2.0"}',
                        b"[" * 100000, b'{"a":' * 5000, b"\xef\xbb\xbf" + encode(MCP[3]), b"\x00" * 100,
                        encode(MCP[3]) + b"\x00garbage", encode(MCP[3]) + b" " + encode(MCP[3])])
    else:
        b = encode(mutate_json(rng.choice(MCP)))
    if rng.random() < 0.15:
        b = flip(b)
    if rng.random() < 0.05:
        b = b[:rng.randrange(len(b) + 1)]
    return b


HDRS = [b"Host", b"Origin", b"Authorization", b"Content-Type", b"Accept", b"Mcp-Session-Id",
        b"MCP-Protocol-Version", b"Content-Length", b"Transfer-Encoding", b"Connection", b"Expect",
        b"Upgrade", b"Cookie", b"X-Forwarded-For", b"Range", b"If-None-Match", b"Accept-Encoding"]
VALUES = [b"", b" ", b"x" * 9000, b"x" * 70000, b"\x00", b"a\x00b", b"\xff\xfe", b"\xc3\x28", b"-1", b"0",
          b"18446744073709551616", b"99999999999999999999999", b"0x10", b"1e3", b" 5", b"5 ", b"+5", b"5,5",
          b"chunked", b"gzip, chunked", b"identity", b"close", b"keep-alive", b"Upgrade", b"100-continue",
          b"http://evil.example", b"null", b"http://localhost", b"http://127.0.0.1:1", b"http://[::1]",
          b"evil.example", b"localhost", b"127.0.0.1:99999", b"[::1]", b"[::1", b"localhost:x",
          b"Bearer", b"Bearer ", b"Basic Zm9vOmJhcg==", b"bearer %s", b"Bearer %s ", b"Bearer %s\x00x",
          b"application/json", b"application/json; charset=utf-8", b"application/jsonx", b"text/plain",
          b"application/json;" + b";" * 3000, b"text/event-stream", b"*/*",
          b"2025-06-18", b"2024-11-05", b"1999-01-01", b"%s", b"../../../etc", b"\r\nX-Injected: 1"]


def mutate_request(base):
    """headers of BASE (a whole request) mutated: (bytes, whether the framing is intact)"""
    head, _, b = base.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    intact = True
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        name = rng.choice(HDRS)
        val = rng.choice(VALUES)
        if b"%s" in val:
            val = val.replace(b"%s", (TOKEN if rng.random() < 0.5 else SID or "x").encode())
        framing = name in (b"Content-Length", b"Transfer-Encoding", b"Expect", b"Connection", b"Upgrade") \
            or b"\r\n" in val or b"\x00" in val
        if r < 0.3:	# drop it (a POST with no Content-Length is answered too: 411)
            lines = [l for l in lines if not l.lower().startswith(name.lower() + b":")]
        elif r < 0.5:	# add another
            lines.insert(rng.randrange(1, len(lines) + 1), name + b": " + val)
            intact = intact and not framing
        elif r < 0.8:	# change it
            lines = [l for l in lines if not l.lower().startswith(name.lower() + b":")]
            lines.append(name + b": " + val)
            intact = intact and not framing
        elif r < 0.9:	# odd spelling of a header line
            i = rng.randrange(1, len(lines)) if len(lines) > 1 else 0
            k, _, v = lines[i].partition(b":")
            lines[i] = rng.choice([k.upper() + b":" + v, k + b" :" + v, k + b":" + v.strip(), b" " + lines[i],
                                   k + v, k.lower() + b":\t" + v.strip() + b"\t", lines[i] + b"\r\n folded"])
            intact = False
        else:	# many headers
            lines += [b"X-H%d: %s" % (j, b"v" * rng.choice([1, 100])) for j in range(rng.choice([50, 200, 2000]))]
            intact = False
    return b"\r\n".join(lines) + b"\r\n\r\n" + b, intact


def request_line():
    m = rng.choice([b"GET", b"POST", b"DELETE", b"PUT", b"HEAD", b"OPTIONS", b"PATCH", b"TRACE", b"CONNECT",
                    b"BREW", b"post", b"", b"GET GET", b"\x00", b"P\xffST", b"POST" * 1000])
    p = rng.choice([b"/mcp", b"/mcp/", b"/health", b"/", b"*", b"//mcp", b"/mcp?x=1", b"/mcp#f", b"/MCP", b"/mcp/../mcp",
                    b"/%2e%2e/etc/passwd", b"/mcp%00", b"/\x00", b"http://127.0.0.1/mcp", b"", b"mcp",
                    b"/" + b"a" * rng.choice([100, 5000, 70000]), b"/health?" + b"q" * 3000, b"/\xff\xfe"])
    v = rng.choice([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.1 x", b"HTTP/9.9", b"", b"http/1.1",
                    b"HTTP/1.", b"HTTP/1.1\x00"])
    sep = rng.choice([b" ", b" ", b" ", b"  ", b"\t"])
    return m + sep + p + (sep + v if v else b"")


def http_case(i):
    """one HTTP case: (bytes, pieces, requests in it, answer required?)"""
    k = rng.random()
    sid = SID if rng.random() < 0.8 else rng.choice(["", "x" * 300, "\xff", "00000000-0000-0000-0000-000000000000"])
    if k < 0.35:	# a mutated message, well framed
        data = req(body=body(), sid=sid if rng.random() < 0.85 else None)
        return data, 1, 1, True
    if k < 0.55:	# mutated headers
        data, intact = mutate_request(req(body=body(), sid=sid))
        return data, 1, 1, intact
    if k < 0.65:	# an odd request line
        line = request_line()
        data = line + b"\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
        if rng.random() < 0.5:
            b = body()
            data += b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(b) + b
        else:
            data += b"\r\n"
        return data, 1, 1, False
    if k < 0.72:	# pipelined
        reqs = [req(body=body(), sid=sid) if rng.random() < 0.6 else
                req(b"GET", b"/health", auth=False, cl=False, ctype=False) for _ in range(rng.randint(2, 4))]
        return b"".join(reqs), 1, len(reqs), False
    if k < 0.8:	# a few bytes at a time
        data = req(body=body(), sid=sid)
        return data, rng.randint(2, 12), 1, True
    if k < 0.87:	# cut anywhere
        data = req(body=body(), sid=sid)
        return data[:rng.randrange(len(data))], 1, 1, False
    if k < 0.9:	# bytes flipped anywhere, or none of it HTTP
        if rng.random() < 0.3:
            return bytes(rng.randrange(256) for _ in range(rng.randint(1, 3000))), 1, 1, False
        return flip(req(body=body(), sid=sid), rng.randint(1, 10)), 1, 1, False
    # lengths that lie
    b = body()
    n = rng.choice([len(b) + 1, len(b) + 1000, max(0, len(b) - 1), 0])
    head = req(sid=sid, cl=False)[:-4]
    te = rng.random() < 0.3
    head += b"\r\nContent-Length: %d" % n + (b"\r\nTransfer-Encoding: chunked" if te else b"")
    return head + b"\r\n\r\n" + b, 1, 1, False


def http_batch(n, bno):
    cases = [http_case(i) for i in range(n)]

    def one(c):
        data, pieces, nreq, must = c
        # a case whose framing is off may wait for a body that never comes:
        # it is not waited for long
        exchange(data, pieces=pieces, nreq=nreq, timeout=WAIT if must else 1, must=must,
                 where="mcp batch %d" % bno)
    with ThreadPoolExecutor(THREADS) as ex:
        list(ex.map(one, cases))


# ---- WebSocket ----
def frame(op, payload, fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    n = len(payload) if length is None else length
    if n < 126:
        h = bytes([b0, (0x80 if mask else 0) | n])
    elif n < 65536:
        h = bytes([b0, (0x80 if mask else 0) | 126]) + struct.pack(">H", n)
    else:
        h = bytes([b0, (0x80 if mask else 0) | 127]) + struct.pack(">Q", n)
    if mask:
        k = bytes(rng.randrange(256) for _ in range(4))
        return h + k + bytes(c ^ k[i % 4] for i, c in enumerate(payload))
    return h + payload


class WS:
    def __init__(self, handshake=None, timeout=5, key=None):
        self.s = socket.create_connection(("127.0.0.1", WP), timeout=timeout)
        self.buf = b""
        self.msgs = []
        self.closed = None	# the close code the server sent, or "eof"
        self.sent_close = None	# the one we sent (libwebsockets echoes it)
        self.seen = 0
        self.key = key or base64.b64encode(bytes(rng.randrange(256) for _ in range(16)))
        self.s.sendall(handshake or self.handshake())

    def handshake(self, extra=()):
        return b"\r\n".join([b"GET / HTTP/1.1", b"Host: 127.0.0.1:%d" % WP, b"Upgrade: websocket",
                             b"Connection: Upgrade", b"Sec-WebSocket-Key: " + self.key,
                             b"Sec-WebSocket-Version: 13"] + list(extra)) + b"\r\n\r\n"

    def upgraded(self, where):
        """read the reply to the upgrade: its status"""
        end = time.time() + WAIT
        while b"\r\n\r\n" not in self.buf and time.time() < end:
            d = self.s.recv(1 << 16)
            if not d:
                break
            self.buf += d
        if b"\r\n\r\n" not in self.buf:
            return None
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
        st = int(m.group(1)) if m else None
        count("ws upgrade %s" % st)
        if st is None or st >= 500:
            fail(where, "upgrade answered %.200r" % head)
        if st == 101:
            acc = base64.b64encode(hashlib.sha1(self.key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            if b"sec-websocket-accept: " + acc.lower() not in head.lower():
                fail(where, "101 without the right Sec-WebSocket-Accept: %.300r" % head)
        else:	# a refusal: the rest of its body is read and dropped
            self.buf = b""
        return st

    def read(self, until, where, timeout=WAIT):
        """frames until UNTIL(msgs) or a close or TIMEOUT; each text checked"""
        end = time.time() + timeout
        while not until(self.msgs) and self.closed is None and time.time() < end:
            while len(self.buf) >= 2:
                b0, b1 = self.buf[0], self.buf[1]
                n, o = b1 & 0x7f, 2
                if b1 & 0x80:
                    fail(where, "the server masked a frame")
                if n == 126:
                    if len(self.buf) < 4:
                        break
                    n, o = struct.unpack(">H", self.buf[2:4])[0], 4
                elif n == 127:
                    if len(self.buf) < 10:
                        break
                    n, o = struct.unpack(">Q", self.buf[2:10])[0], 10
                if len(self.buf) < o + n:
                    break
                p, self.buf = self.buf[o:o + n], self.buf[o + n:]
                op = b0 & 0x0f
                if op == 8:
                    code = struct.unpack(">H", p[:2])[0] if len(p) >= 2 else 1005
                    count("ws close %d" % code)
                    if code != self.sent_close and (code in (1004, 1005, 1006, 1015) and len(p) >= 2 or
                                                    not (1000 <= code < 5000)):
                        fail(where, "a close code that may not be sent: %d" % code)
                    self.closed = code
                    break
                if op == 1:
                    try:
                        v = json.loads(p)
                    except ValueError:
                        fail(where, "a text frame that does not parse: %.300r" % p)
                        continue
                    if isinstance(v, list) or "id" in v:
                        check_rpc(v, where)
                    self.msgs.append(v)
                elif op not in (9, 10):
                    fail(where, "the server sent opcode %d" % op)
            if until(self.msgs) or self.closed is not None:
                break
            try:
                self.s.settimeout(max(0.01, end - time.time()))
                d = self.s.recv(1 << 16)
            except socket.timeout:
                break
            except OSError:
                d = b""
            if not d:
                self.closed = self.closed or "eof"
                break
            self.buf += d
        return self.msgs

    def send(self, data):
        self.seen = len(self.msgs)
        try:
            self.s.sendall(data)
            return True
        except OSError:
            return False

    def text(self, m):
        return self.send(frame(1, json.dumps(m).encode()))

    def reply(self, id, where, timeout=WAIT):
        """the answer to ID; a message jansson cannot read (a NUL, an
        integer past 64 bits) is answered with id null"""
        def nulls(ms):
            return sum(1 for x in ms if isinstance(x, dict) and x.get("id") is None and "error" in x)
        n0 = nulls(self.msgs[:self.seen])
        self.read(lambda ms: any(isinstance(x, dict) and x.get("id") == id for x in ms) or nulls(ms) > n0,
                  where, timeout)
        for x in self.msgs:
            if isinstance(x, dict) and x.get("id") == id:
                return x
        return [x for x in self.msgs if isinstance(x, dict) and x.get("id") is None and "error" in x][n0] \
            if nulls(self.msgs) > n0 else None

    def auth(self, where):
        self.read(lambda ms: any(isinstance(x, dict) and x.get("method") == "auth.challenge" for x in ms), where)
        ch = [x for x in self.msgs if isinstance(x, dict) and x.get("method") == "auth.challenge"]
        if not ch:
            return False
        self.text(rpc("auth.authenticate", {"token": TOKEN, "nonce": ch[0]["params"]["nonce"]}, "auth"))
        r = self.reply("auth", where)
        return bool(r and r.get("result", {}).get("authenticated"))

    def close(self):
        self.s.close()


ACP = [rpc("fs.readFile", {"path": "a.txt"}), rpc("fs.listDirectory", {"path": ".", "recursive": True}),
       rpc("fs.stat", {"path": "sub/b.c"}), rpc("fs.exists", {"path": "notes.md"}),
       rpc("search.findInFiles", {"query": "TODO"}), rpc("state.getWorkspace"), rpc("git.status"),
       rpc("git.log", {"limit": 2}), rpc("editor.getContent", {"path": "a.txt"}), rpc("command.list"),
       rpc("auth.authenticate", {"token": "x", "nonce": "y"}), rpc("no.such"),
       {"jsonrpc": "2.0", "method": "fs.exists", "params": {"path": "."}}]


def ws_works():
    try:
        w = WS()
        if w.upgraded("ws probe") != 101 or not w.auth("ws probe"):
            w.close()
            return False
        w.text(rpc("fs.readFile", {"path": "a.txt"}, 9))
        r = w.reply(9, "ws probe")
        w.close()
        return bool(r and "hello" in json.dumps(r.get("result")))
    except OSError:
        return False


def ws_message():
    r = rng.random()
    if r < 0.15:
        b = encode([mutate_json(rng.choice(ACP)) for _ in range(rng.choice([0, 1, 3, 50]))])
    elif r < 0.2:
        b = rng.choice([b"", b"null", b"[]", b"{}", b"[" * 50000, b'{"a":' * 5000, b"\x00" * 10, b"\xc3\x28",
                        b"\xed\xa0\x80", encode(ACP[0]) + b"\x00"])
    else:
        b = encode(mutate_json(rng.choice(ACP)))
    if rng.random() < 0.15:
        b = flip(b)
    return b


def ws_frames(msg):
    """MSG as frames, the framing perhaps mutated: (frames, framing intact?)"""
    r = rng.random()
    if r < 0.45:
        return frame(1, msg), True
    if r < 0.6:	# fragmented, a ping or pong perhaps between
        cuts = sorted(set(rng.sample(range(0, len(msg) + 1), min(3, len(msg) + 1))))
        parts = [msg[a:b] for a, b in zip([0] + cuts, cuts + [len(msg)])]
        out = b""
        for i, p in enumerate(parts):
            out += frame(1 if i == 0 else 0, p, fin=i == len(parts) - 1)
            if rng.random() < 0.3 and i < len(parts) - 1:
                out += frame(rng.choice([9, 10]), b"p" * rng.choice([0, 5, 125]))
        return out, True
    if r < 0.65:
        return frame(2, msg), True	# binary
    if r < 0.7:
        return frame(1, msg, mask=False), False
    if r < 0.75:
        return frame(rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), msg), False
    if r < 0.8:
        return frame(1, msg, rsv=rng.randint(1, 7)), False
    if r < 0.84:
        return frame(0, msg), False	# a continuation with no start
    if r < 0.88:	# a control frame too long or fragmented
        return rng.choice([frame(9, b"x" * 200), frame(9, b"x", fin=False), frame(8, b"\x03\xe8" + b"r" * 200)]), False
    if r < 0.92:	# a length that lies
        n = rng.choice([len(msg) + 100, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 10 ** 9])
        return frame(1, msg, length=n), False
    if r < 0.96:	# a close, any code
        code = rng.choice([0, 999, 1000, 1001, 1004, 1005, 1006, 1011, 1015, 2999, 3000, 4999, 5000, 65535])
        reason = rng.choice([b"", b"bye", b"\xc3\x28", b"x" * 123])
        return frame(8, (struct.pack(">H", code) + reason) if rng.random() < 0.9 else b"\x03"), False
    return frame(1, msg)[:rng.randrange(1, len(frame(1, msg)))], False	# cut


def ws_case(bno):
    where = "ws batch %d" % bno
    extra = []
    hs = None
    r = rng.random()
    try:
        if r < 0.15:	# a bad handshake
            w0 = WS.__new__(WS)
            w0.key = base64.b64encode(b"k" * 16)
            lines = w0.handshake(extra).split(b"\r\n")[:-2]
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(1, len(lines))
                lines[i] = rng.choice([b"Sec-WebSocket-Version: 8", b"Sec-WebSocket-Version: x", b"Sec-WebSocket-Key: ",
                                       b"Sec-WebSocket-Key: " + b"A" * 500, b"Upgrade: h2c", b"Connection: close",
                                       b"Host: evil.example", b"Origin: http://evil.example", b"Origin: null",
                                       b"Sec-WebSocket-Protocol: acp", b"Sec-WebSocket-Protocol: " + b"p," * 2000,
                                       b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits",
                                       b"X: " + b"\x00\xff" * 100, b""])
            hs = b"\r\n".join(lines) + b"\r\n\r\n"
            if rng.random() < 0.3:
                hs = hs.replace(b"GET / ", rng.choice([b"POST / ", b"GET /mcp ", b"GET /health ", b"GET * "]))
            w = WS(hs, key=w0.key)
            st = w.upgraded(where)
            if st == 101:
                w.read(lambda ms: len(ms) >= 1, where, 3)
            w.close()
            return
        w = WS()
        if w.upgraded(where) != 101:
            fail(where, "a good upgrade refused")
            w.close()
            return
        authed = rng.random() < 0.6 and w.auth(where)
        hist = []
        for j in range(rng.randint(1, 6)):
            msg = ws_message()
            try:
                m = json.loads(msg)
                rid = m.get("id") if isinstance(m, dict) else None
            except (ValueError, RecursionError):
                rid = None
            if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                rid = "q%d" % j
                m["id"] = rid
                msg = json.dumps(m).encode()
            else:
                rid = None
            data, good = ws_frames(msg)
            if data[0] & 0x0f == 8 and len(data) >= 8:
                w.sent_close = struct.unpack(">H", bytes(c ^ data[2 + i % 4] for i, c in enumerate(data[6:8])))[0]
            hist.append((data[0], good, msg[:200]))
            if not w.send(data):
                break
            if good and rid and len(msg) < 65536:
                rep = w.reply(rid, where)
                if rep is None and w.closed is None:
                    fail(where, "no reply in %.0f s (a hang?) to %.300r, authenticated %s, after %r"
                         % (WAIT, msg[:300], authed, hist[:-1]))
                if rep and not authed and m.get("method") != "auth.authenticate" and \
                        rep.get("error", {}).get("code") not in (-32001, -32600, -32602, -32700):
                    fail(where, "before auth, %s answered %.300r" % (m.get("method"), rep))
            else:
                w.read(lambda ms: False, where, 0.2)
            if w.closed is not None:
                break
        w.close()
    except OSError:
        count("ws oserror")


def ws_batch(n, bno):
    with ThreadPoolExecutor(THREADS) as ex:
        list(ex.map(lambda _: ws_case(bno), range(n)))


# ---- run ----
tap = []
for _ in range(200):
    if os.path.exists(TOKF) and os.path.getsize(TOKF) and health():
        break
    if srv.poll() is not None:
        break
    time.sleep(0.05)
TOKEN = open(TOKF).read().strip() if os.path.exists(TOKF) else ""
SID = initialize() if TOKEN else None
tap.append((bool(TOKEN and SID), "server up on HTTP and WebSocket, a token in --token-file, a session"))
if not SID:
    errf.seek(0)
    print("# " + errf.read().decode(errors="replace")[-2000:].replace("\n", "\n# "))
    srv.kill()
else:
    for bno in range(BATCHES):
        t0 = time.time()
        http_batch(NHTTP // BATCHES, bno)
        ws_batch(NWS // BATCHES, bno)
        alive = srv.poll() is None
        tap.append((alive and health() and mcp_works() and ws_works(),
                    "batch %d (%d HTTP cases, %d WebSocket clients, %.1f s): alive, /health 200, "
                    "an MCP call and an authenticated fs.readFile work" % (bno, NHTTP // BATCHES, NWS // BATCHES,
                                                                       time.time() - t0)))
        if not alive:
            break
    seen = {}
    for what, d in fails:
        seen.setdefault(what.split(" batch")[0] + ": " + d[:120], (what, d))
    tap.append((not fails, "every reply sane: no 5xx, JSON that parses, the spec's error codes, no hang (%d wrong)%s"
                % (len(fails), "".join("\n#   %s: %s" % v for v in list(seen.values())[:12]))))
    print("# " + ", ".join("%s: %d" % kv for kv in sorted(stats.items())))
    srv.send_signal(signal.SIGTERM)
    try:
        rc = srv.wait(30)
    except subprocess.TimeoutExpired:
        srv.kill()
        rc = "hung on SIGTERM"
    tap.append((rc == 0, "SIGTERM: exit %s" % rc))
errf.seek(0)
err = errf.read().decode(errors="replace")
san = re.search(r"(ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:).{0,2000}", err, re.S)
tap.append((not san, "no sanitizer report on stderr%s" % ((": " + san.group(0)[:2000]) if san else "")))
for i, (good, what) in enumerate(tap, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", i, what))
print("# %.1f s, seed %d" % (time.time() - t_start, SEED))
shutil.rmtree(D, ignore_errors=True)
sys.exit(0 if all(g for g, _ in tap) else 1)
