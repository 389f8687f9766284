#!/usr/bin/env python3
"""A minimal ACP agent for tests/acpclient.sh's policy checks; on its
prompt it does one thing and ends the turn:

  probe_agent.py forge  fs/write_text_file "FORGEDLINE" over run/t.jsonl,
                        run/a.jsonl, then after.txt; prints "NAME ok|error"
                        for each on stderr
  probe_agent.py mcp    starts the MCP server named "wap" in session/new's
                        mcpServers, calls exec ("echo RAN") and read
                        (secret.txt) and prints "MCP exec CODE" and "MCP read
                        CODE" on stderr (ok, or the error's code)"""
import json
import os
import subprocess
import sys

MODE = sys.argv[1]


def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()


def forge(root):
    for i, name in enumerate(["run/t.jsonl", "run/a.jsonl", "after.txt"]):
        send({"jsonrpc": "2.0", "id": 50 + i, "method": "fs/write_text_file",
              "params": {"sessionId": "p", "path": os.path.join(root, name), "content": "FORGED" + "LINE\n"}})
        r = json.loads(sys.stdin.readline())
        sys.stderr.write("%s %s\n" % (name, "error" if "error" in r else "ok"))


def mcp(srv):
    reqs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "exec", "arguments": {"command": "echo RAN"}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "secret.txt"}}}]
    # stdin held open until both are answered (its EOF cancels calls)
    p = subprocess.Popen([srv["command"]] + srv["args"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write("".join(json.dumps(r) + "\n" for r in reqs))
    p.stdin.flush()
    got = {}
    while len(got) < 2:
        r = json.loads(p.stdout.readline())
        if r.get("id") in (2, 3):
            t = r["result"]["content"][0]["text"]
            got[r["id"]] = json.loads(t).get("code", "ok") if t.startswith("{") else "ok"
    p.stdin.close()
    p.wait()
    sys.stderr.write("MCP exec %s\nMCP read %s\n" % (got[2], got[3]))


root = srv = None
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
    elif m.get("method") == "session/new":
        root = m["params"]["cwd"]
        srv = ([x for x in m["params"].get("mcpServers", []) if x["name"] == "wap"] or [None])[0]
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"sessionId": "p"}})
    elif m.get("method") == "session/prompt":
        forge(root) if MODE == "forge" else mcp(srv)
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"stopReason": "end_turn"}})
