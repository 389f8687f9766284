#!/usr/bin/python3
"""A hostile language server for tests/symhostile.sh: it speaks LSP over
stdio as a server that runs the workspace's code might (typescript's
tsserver from node_modules, a proc macro, a build script), and does what
MODE says:

  fakels.py hover-file PATH    hover answers PATH's content (or why not)
  fakels.py flood N SIZE       on each didOpen, N diagnostics of SIZE bytes,
                               each for a file no one opened
  fakels.py edits N            rename: N one-character edits in the file
  fakels.py values N            hover answers an array of N zeros
  fakels.py refs N              references: N locations near the file's end
  fakels.py wedit JSON         rename: the WorkspaceEdit JSON ("@URI@" is
                               the file's URI)
  fakels.py orphan PIDFILE     leaves a child of its own (setsid, sleep)
                               and writes its pid
"""
import json
import os
import sys

mode = sys.argv[1]
arg = sys.argv[2:]
out = sys.stdout.buffer
inp = sys.stdin.buffer


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def recv():
    n = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return json.loads(inp.read(n))


def file_text(uri):
    try:
        return open(uri[len("file://"):]).read()
    except OSError:
        return ""


docs = {}
while True:
    m = recv()
    meth, mid = m.get("method"), m.get("id")
    if meth == "initialize":
        if mode == "orphan":
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    open(arg[0], "w").write(str(os.getpid()))
                    os.execv("/bin/sleep", ["sleep", "1000"])
                os._exit(0)
            os.wait()
        send({"id": mid, "result": {"capabilities": {"hoverProvider": True, "renameProvider": True,
                                                          "referencesProvider": True}}})
    elif meth == "shutdown":
        send({"id": mid, "result": None})
    elif meth == "exit":
        sys.exit(0)
    elif meth == "textDocument/didOpen":
        td = m["params"]["textDocument"]
        docs[td["uri"]] = td["text"]
        if mode == "flood":
            n, size = int(arg[0]), int(arg[1])
            for i in range(n):
                send({"method": "textDocument/publishDiagnostics",
                      "params": {"uri": "file:///nowhere/f%d.c" % i, "diagnostics": [
                          {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                           "message": "x" * size}]}})
        send({"method": "textDocument/publishDiagnostics",
              "params": {"uri": td["uri"], "diagnostics": []}})
    elif meth == "textDocument/hover" and mode == "values":
        body = b'{"jsonrpc":"2.0","id":%d,"result":{"contents":[%s]}}' % (mid, b",".join([b"0"] * int(arg[0])))
        out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        out.flush()
    elif meth == "textDocument/hover":
        try:
            text = open(arg[0]).read()
        except OSError as e:
            text = "DENIED %s" % e.strerror
        send({"id": mid, "result": {"contents": {"kind": "plaintext", "value": text}}})
    elif meth == "textDocument/references" and mode == "refs":
        uri = m["params"]["textDocument"]["uri"]
        last = max(0, (docs.get(uri) or file_text(uri)).count("\n") - 1)
        send({"id": mid, "result": [{"uri": uri, "range": {
            "start": {"line": last - i % 10, "character": 1},
            "end": {"line": last - i % 10, "character": 2}}} for i in range(int(arg[0]))]})
    elif meth == "textDocument/rename":
        uri = m["params"]["textDocument"]["uri"]
        if mode == "edits":
            text = docs.get(uri) or file_text(uri)
            lines = text.split("\n")
            edits = []
            for i in range(int(arg[0])):
                ln = i % len(lines)
                ch = (i // len(lines)) % max(1, len(lines[ln]))
                edits.append({"range": {"start": {"line": ln, "character": ch},
                                        "end": {"line": ln, "character": ch}}, "newText": "y"})
            send({"id": mid, "result": {"changes": {uri: edits}}})
        elif mode == "wedit":
            send({"id": mid, "result": json.loads(arg[0].replace("@URI@", uri))})
        else:
            send({"id": mid, "result": None})
    elif mid is not None and meth:
        send({"id": mid, "result": None})
