#!/usr/bin/env python3
"""hostile.py WAP ROOT - send 1,000 malformed or hostile messages to
`wap serve` over stdio, check that each gets the right answer (or none, for
notifications), then that the server still answers a ping and exits 0 at
end of input.  TAP lines on stdout."""
import json, random, subprocess, sys

wap, root = sys.argv[1], sys.argv[2]
rng = random.Random(7)
msgs = []      # (line bytes, expectation)
# expectation: ("err", code, id) | ("tool_error", id, CODE) | ("ok", id) | ("none",)

def add(line, exp):
    msgs.append((line if isinstance(line, bytes) else line.encode(), exp))

def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)

n = 0
while len(msgs) < 1000:
    n += 1
    k = n % 20
    i = f"h{n}"
    if k == 0:
        add('{"jsonrpc":"2.0","id":1,' + "x" * rng.randint(0, 50), ("err", -32700, None))
    elif k == 1:
        add(bytes([rng.randint(0x80, 0xff)]) + b'garbage', ("err", -32700, None))
    elif k == 2:
        d = rng.randint(3000, 20000)
        add("[" * d + "]" * d, ("err", -32600, None))
    elif k == 3:
        add('{"jsonrpc":"2.0","id":' + "9" * rng.randint(30, 400) + ',"method":"ping"}', ("err", -32600, None))
    elif k == 4:
        big = "i" * rng.randint(1000, 20000)
        add(req(big, "ping"), ("ok", big))
    elif k == 5:
        add(req(i, rng.choice(["nope", "tools/nope", "prompts/get", "", "x" * 300])),
            ("err", -32601 if True else 0, i))
        if json.loads(msgs[-1][0])["method"] == "":
            msgs[-1] = (msgs[-1][0], ("err", -32600, i))
    elif k == 6:
        add(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": rng.choice([5, "s", True])}),
            ("err", -32600, i))
    elif k == 7:
        add(req(i, "tools/call", {"name": rng.choice([5, None, [], {}])}), ("err", -32602, i))
    elif k == 8:
        add(req(i, "tools/call", {"name": "read", "arguments": rng.choice(["path", 5, [1]])}), ("err", -32602, i))
    elif k == 9:
        p = rng.choice(["../../etc/passwd", "/etc/shadow", "escape", "sub/../../x", "../" * 40 + "etc",
                        "/" + root.strip("/") + "-evil/x", "sub/../../" + root.split("/")[-1] + "/a.txt"])
        add(req(i, "tools/call", {"name": "read", "arguments": {"path": p}}), ("tool_error", i, "ACCESS_DENIED"))
    elif k == 10:
        add(req(i, "tools/call", {"name": "read", "arguments": {"path": rng.choice([1, True, [], {}, None])}}),
            ("tool_error", i, "INVALID_ARGUMENT"))
        if json.loads(msgs[-1][0])["params"]["arguments"]["path"] is None:
            msgs[-1] = (msgs[-1][0], ("tool_error", i, "INVALID_ARGUMENT"))
    elif k == 11:
        add(req(i, "tools/call", {"name": "read", "arguments": {"path": "a.txt", "offset": "x"}}),
            ("tool_error", i, "INVALID_ARGUMENT"))
    elif k == 12:
        add(json.dumps({"jsonrpc": "2.0", "method": "notifications/" + "z" * rng.randint(1, 50)}), ("none",))
    elif k == 13:
        add(json.dumps({"jsonrpc": "2.0", "id": [1], "method": "ping"}), ("err", -32600, None))
    elif k == 14:
        add(json.dumps([{"jsonrpc": "2.0", "method": "ping"}] * rng.randint(101, 150)), ("err", -32600, None))
    elif k == 15:
        add(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "read", "arguments": {"path": "a\u0000b"}}}),
            ("err", -32600, None))   # valid JSON, but NUL in a string is refused
    elif k == 16:
        add('{"jsonrpc":"2.0","id":"' + i + '","method":"ping","params":{"a":' + "1" * 5000 + "}}",
            ("err", -32600, None))
    elif k == 17:
        add("x" * 70000, ("err", -32600, None))   # over --max-message 65536
    elif k == 18:
        add(req(i, "tools/list", {"cursor": rng.choice(["-1", "abc", "99999999999999999999", ""])}),
            ("err", -32602, i))
    elif k == 19:
        add(req(i, "tools/call", {"name": "read", "arguments": {"path": "a.txt", "zzz": rng.randint(0, 9)}}),
            ("tool_error", i, "INVALID_ARGUMENT"))
msgs = msgs[:1000]
add(req("final", "ping"), ("ok", "final"))

data = b"".join(m + b"\n" for m, _ in msgs)
p = subprocess.run([wap, "serve", "--drain", "--root", root, "--workers", "2", "--max-message", "65536"],
                   input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
replies = []
bad_lines = 0
for line in p.stdout.split(b"\n"):
    if not line:
        continue
    try:
        replies.append(json.loads(line))
    except Exception:
        bad_lines += 1
by_id, anon = {}, []
for r in replies:
    if isinstance(r, dict) and r.get("id") is not None:
        by_id[json.dumps(r["id"])] = r
    else:
        anon.append(r)

t = 0
def ok(c, d):
    global t
    t += 1
    print(("ok" if c else "not ok") + f" {t} - {d}")

ok(bad_lines == 0, f"every stdout line is JSON ({bad_lines} not)")
wrong = []
want_anon = 0
for line, e in msgs:
    if e[0] == "none":
        continue
    if e[0] == "err" and e[2] is None:
        want_anon += 1
        continue
    key = json.dumps(e[1] if e[0] != "err" else e[2])
    r = by_id.pop(key, None)
    if r is None:
        wrong.append(f"no reply for {line[:80]!r}")
    elif e[0] == "err":
        if r.get("error", {}).get("code") != e[1]:
            wrong.append(f"{line[:80]!r}: want {e[1]}, got {json.dumps(r)[:160]}")
    elif e[0] == "ok":
        if "result" not in r:
            wrong.append(f"{line[:80]!r}: want a result, got {json.dumps(r)[:160]}")
    elif e[0] == "tool_error":
        res = r.get("result", {})
        code = None
        try:
            code = json.loads(res["content"][0]["text"]).get("code")
        except Exception:
            pass
        if not res.get("isError") or code != e[2]:
            wrong.append(f"{line[:80]!r}: want isError {e[2]}, got {json.dumps(r)[:200]}")
anon_codes = sorted(set(a.get("error", {}).get("code") for a in anon if isinstance(a, dict)))
exp_codes = sorted(set(e[1] for _, e in msgs if e[0] == "err" and e[2] is None))
ok(not wrong, f"1,000 hostile messages answered correctly ({len(wrong)} wrong{': ' + wrong[0] if wrong else ''})")
ok(len(anon) == want_anon, f"{want_anon} errors without an id, in order (got {len(anon)})")
ok(anon_codes == exp_codes, f"error codes without id {anon_codes} == {exp_codes}")
ok(not by_id, f"no reply to notifications or unknown ids ({list(by_id)[:3]})")
ok("final" in json.dumps(replies[-5:]) or any(isinstance(r, dict) and r.get("id") == "final" for r in replies),
   "still serving: the final ping is answered")
ok(p.returncode == 0, f"server exits 0 at end of input (got {p.returncode}; {p.stderr[-300:].decode('utf-8', 'replace')})")
