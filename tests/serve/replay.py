#!/usr/bin/env python3
"""replay.py - replay JSONL scenarios against `wap serve` over stdio.

A scenario file holds:
  # args: --profile langop        extra arguments for wap serve
  # needs: read write             applets that must be built in (else SKIP)
  # env: NAME=VALUE               environment for the server
  # config: {JSON}                the server's config file ($WAP_CONFIG)
  > TEXT                          a line sent to the server as it is
  < JSON                          an expected message
Expected messages with an id are matched to the reply with the same id;
those without (notifications, errors with id null) in order.  Matching is
by pattern: objects match when every expected key matches (extra keys are
allowed, "$absent" demands a key be missing), arrays element by element
and of equal length, and these strings match:
  "$any"  anything      "$str" any string    "$num" any number
  "$re:REGEX" a string the regex finds       "$json:PATTERN" a string holding JSON
The workspace root in replies is replaced by $ROOT before matching, and
$ROOT in a request line is replaced by the root.

usage: replay.py WAP SCENARIO... [--record]    (TAP on stdout)
--record rewrites each scenario file with the replies the server gives now
(volatile fields made wildcards): review the diff before committing.
"""
import json, os, re, shutil, subprocess, sys, tempfile

VOLATILE = {"version", "lastModified", "mtime", "duration_ms", "durationMs", "time", "ctime",
            "atime", "modified", "created", "accessed", "changed", "instructions"}
DATE = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?( UTC)?")
HASH = re.compile(r"\b[0-9a-f]{40}\b")


def fixture(root):
    os.makedirs(os.path.join(root, "sub", "deep"), exist_ok=True)
    os.makedirs(os.path.join(root, "empty"), exist_ok=True)
    with open(os.path.join(root, "a.txt"), "w") as f:
        f.write("hello\nworld\n")
    with open(os.path.join(root, "notes.md"), "w") as f:
        f.write("# Notes\nTODO: one\nTODO: two\nend\n")
    with open(os.path.join(root, "sub", "b.c"), "w") as f:
        f.write("int main(void) { return 0; }\n")
    with open(os.path.join(root, "sub", "deep", "c.json"), "w") as f:
        f.write('{"k": 1}\n')
    with open(os.path.join(root, "bin.dat"), "wb") as f:
        f.write(b"\x00\x01\x02binary")
    with open(os.path.join(root, "bad.txt"), "wb") as f:
        f.write(b"ok \xff\xfe bad\n")
    with open(os.path.join(root, "big.txt"), "w") as f:
        f.write(("x" * 99 + "\n") * 12000)
    with open(os.path.join(root, ".env"), "w") as f:
        f.write("SECRET=1\n")
    os.symlink("/etc/passwd", os.path.join(root, "escape"))


def parse(path):
    sc = {"args": [], "needs": [], "env": {}, "send": [], "expect": [], "name": os.path.basename(path)}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# args:"):
                sc["args"] += line[7:].split()
            elif line.startswith("# needs:"):
                sc["needs"] += line[8:].split()
            elif line.startswith("# config:"):
                sc["config"] = line[9:].strip()
            elif line.startswith("# env:"):
                k, _, v = line[6:].strip().partition("=")
                sc["env"][k] = v
            elif line.startswith("> "):
                sc["send"].append(line[2:])
            elif line == ">":
                sc["send"].append("")
            elif line.startswith("< "):
                sc["expect"].append(json.loads(line[2:]))
    return sc


def match(pat, got, path="$"):
    if isinstance(pat, str) and pat.startswith("$"):
        if pat == "$any":
            return None
        if pat == "$str":
            return None if isinstance(got, str) else f"{path}: want a string, got {got!r}"
        if pat == "$num":
            return None if isinstance(got, (int, float)) and not isinstance(got, bool) else f"{path}: want a number, got {got!r}"
        if pat.startswith("$re:"):
            if isinstance(got, str) and re.search(pat[4:], got, re.S):
                return None
            return f"{path}: {got!r} does not match /{pat[4:]}/"
        if pat.startswith("$json:"):
            try:
                inner = json.loads(got)
            except Exception:
                return f"{path}: not JSON text: {got!r}"
            return match(json.loads(pat[6:]), inner, path + "<json>")
        if pat == "$ROOT" or pat.startswith("$ROOT"):
            pass
    if isinstance(pat, dict):
        if not isinstance(got, dict):
            return f"{path}: want an object, got {json.dumps(got)[:200]}"
        for k, v in pat.items():
            if v == "$absent":
                if k in got:
                    return f"{path}.{k}: should be absent"
                continue
            if k not in got:
                return f"{path}.{k}: missing in {json.dumps(got)[:300]}"
            e = match(v, got[k], f"{path}.{k}")
            if e:
                return e
        return None
    if isinstance(pat, list):
        if not isinstance(got, list) or len(got) != len(pat):
            return f"{path}: want {len(pat)} elements, got {json.dumps(got)[:300]}"
        for i, (p, g) in enumerate(zip(pat, got)):
            e = match(p, g, f"{path}[{i}]")
            if e:
                return e
        return None
    if pat != got or type(pat) != type(got) and not (isinstance(pat, (int, float)) and isinstance(got, (int, float))):
        return f"{path}: want {json.dumps(pat)[:200]}, got {json.dumps(got)[:300]}"
    return None


def wildcard(v, key=None):
    if key in VOLATILE and not isinstance(v, (dict, list)):
        return "$any"
    if isinstance(v, dict):
        return {k: wildcard(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [wildcard(x) for x in v]
    if isinstance(v, str) and (DATE.search(v) or HASH.search(v)) and not v.startswith("{"):
        parts = re.split(r"(" + DATE.pattern + r"|" + HASH.pattern + r")", v)
        out = []
        for x in re.split(r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z?(?: UTC)?|\b[0-9a-f]{40}\b)", v):
            if DATE.fullmatch(x):
                out.append(r"[0-9: TZ.-]+(?: UTC)?")
            elif HASH.fullmatch(x):
                out.append(r"[0-9a-f]{40}")
            else:
                out.append(re.escape(x))
        return "$re:^" + "".join(out) + "$"
    if isinstance(v, str) and v.startswith("{") and '"' in v:
        try:
            inner = json.loads(v)
            return "$json:" + json.dumps(wildcard(inner), separators=(",", ":"))
        except Exception:
            pass
    return v


def run(wap, sc, root):
    env = dict(os.environ, WAP_ROOT=root)
    env.pop("WAP_CONFIG", None)
    env.update(sc["env"])
    if sc.get("config"):
        cfg = os.path.join(os.path.dirname(root), "config.json")
        with open(cfg, "w") as f:
            f.write(sc["config"])
        env["WAP_CONFIG"] = cfg
    # "$ROOT" in a request is the workspace root (ACP wants absolute paths)
    data = "".join(s.replace("$ROOT", root) + "\n" for s in sc["send"]).encode()
    # --drain: the input ends at once, the calls must still be answered
    extra = ["--drain"] + ([] if "--workers" in sc["args"] else ["--workers", "1"])
    p = subprocess.run([wap, "serve", "--root", root] + extra + sc["args"], input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
    out = p.stdout.decode("utf-8", "replace").replace(root, "$ROOT")
    lines = [l for l in out.split("\n") if l]
    msgs = []
    for l in lines:
        try:
            msgs.append(json.loads(l))
        except Exception:
            msgs.append({"$not_json": l})
    return p.returncode, msgs, p.stderr.decode("utf-8", "replace")


def key(m):
    if isinstance(m, dict) and m.get("id") is not None:
        return json.dumps(m["id"])
    return None


def check(sc, msgs):
    errs = []
    for m in msgs:
        if "$not_json" in m:
            errs.append(f"stdout line is not JSON: {m['$not_json'][:200]}")
    by_id = {}
    rest = []
    for m in msgs:
        k = key(m)
        if k is not None:
            by_id.setdefault(k, []).append(m)
        elif isinstance(m, list):
            rest.append(m)
        else:
            rest.append(m)
    ri = 0
    for e in sc["expect"]:
        k = key(e)
        if k is not None:
            got = by_id.get(k)
            if not got:
                errs.append(f"no reply with id {k}")
                continue
            err = match(e, got.pop(0))
        else:
            if ri >= len(rest):
                errs.append(f"missing reply: {json.dumps(e)[:200]}")
                continue
            err = match(e, rest[ri])
            ri += 1
        if err:
            errs.append(err)
    extra = sum(len(v) for v in by_id.values()) + len(rest) - ri
    if extra > 0 and not errs:
        errs.append(f"{extra} unexpected replies: {json.dumps([m for v in by_id.values() for m in v] + rest[ri:])[:400]}")
    return errs


def main():
    args = [a for a in sys.argv[1:] if a != "--record"]
    record = "--record" in sys.argv
    wap, files = args[0], args[1:]
    applets = subprocess.run([wap, "--list"], stdout=subprocess.PIPE).stdout.decode().split()
    n = 0
    for path in files:
        sc = parse(path)
        missing = [a for a in sc["needs"] if a not in applets]
        n += 1
        if missing and not record:
            print(f"ok {n} - {sc['name']} # SKIP needs {' '.join(missing)}")
            continue
        tmp = tempfile.mkdtemp(prefix="wap-replay.")
        root = os.path.join(tmp, "ws")
        os.makedirs(root)
        fixture(root)
        try:
            rc, msgs, err = run(wap, sc, root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if record:
            head = [l for l in open(path) if l.startswith("#")]
            with open(path, "w") as f:
                f.writelines(head)
                for s in sc["send"]:
                    f.write("> " + s + "\n")
                for m in sorted(msgs, key=lambda m: (key(m) is None, str(key(m)))) if False else msgs:
                    f.write("< " + json.dumps(wildcard(m), separators=(",", ":"), ensure_ascii=False) + "\n")
            print(f"recorded {path}: {len(msgs)} replies")
            continue
        errs = check(sc, msgs)
        if rc != 0:
            errs.append(f"server exited {rc}: {err[-300:]}")
        if "ERROR: AddressSanitizer" in err or "LeakSanitizer" in err:
            errs.append("sanitizer: " + err[-600:])
        if errs:
            print(f"not ok {n} - {sc['name']}: " + " | ".join(errs[:3]))
        else:
            print(f"ok {n} - {sc['name']} ({len(sc['expect'])} replies)")


main()
