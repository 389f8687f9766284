#!/usr/bin/env python3
"""A scripted ACP agent for tests/acpclient.sh: speaks the Agent Client
Protocol over stdio (JSON Lines) as an agent, and drives its client (wap acp
run) through every client method: reads a file, asks permission, writes a
file, runs a terminal, tries to escape the root, streams updates, and ends
the turn with the stop reason it was told (--stop).  What it saw is reported
back as agent_message_chunk text ("caps: ...", "read: ...", "escape: ...").

  agent.py [--stop REASON] [--hang] [--ignore-cancel] [--orphan SECONDS]
           [--leave-terminal SECONDS] [--flood N] [--deaf-flood 1]
           [--old-shapes] [--garbage] [--escapes] [--big-flood N [--mb M]]

--hang: after the first update, wait (for session/cancel); --ignore-cancel:
do not answer session/cancel either; --orphan: start a grandchild
(sleep SECONDS) in a session of its own (to check that nothing is orphaned).  --old-shapes: answer with the older shapes the spec document
shows (protocolVersion as given, no agentCapabilities).  --escapes: terminal
control sequences in a message chunk and in the read's permission title (a
prompt spoofed: a line erased, an option of its own).  Logs on stderr."""
import json
import os
import subprocess
import sys
import threading
import time

args = sys.argv[1:]
opt = lambda k, d=None: args[args.index(k) + 1] if k in args else d
STOP = opt("--stop", "end_turn")
next_id = [100]
cancelled = [False]
session = [None]
caps = {}
cwd = [None]


def log(*a):
    print("agent:", *a, file=sys.stderr, flush=True)


send_lock = threading.Lock()


def send(msg):
    with send_lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        log("stdin closed")
        sys.exit(0)
    return json.loads(line)


def on_notification(m):
    if m.get("method") == "session/cancel":
        log("got session/cancel")
        cancelled[0] = True


def call(method, params):
    """A request to the client; returns (result, error)."""
    next_id[0] += 1
    rid = next_id[0]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    while True:
        m = read()
        if m.get("id") == rid and "method" not in m:
            return m.get("result"), m.get("error")
        if "method" in m and "id" not in m:
            on_notification(m)
        else:
            log("unexpected while waiting:", m)


def update(u):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session[0], "update": u}})


def say(text):
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def path(*p):
    return os.path.join(cwd[0], *p)


def permission(tool_id, kind, title):
    res, err = call("session/request_permission", {
        "sessionId": session[0],
        "toolCall": {"toolCallId": tool_id, "title": title, "kind": kind, "status": "pending",
                     "locations": [{"path": path("out.txt")}]},
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
    if err:
        return "error %s" % err.get("code")
    o = res["outcome"]
    return o.get("optionId", o["outcome"]) if o["outcome"] == "selected" else o["outcome"]


def prompt_turn(p):
    text = "".join(b.get("text", "") for b in p.get("prompt", []) if b.get("type") == "text")
    say("caps: read=%s write=%s terminal=%s cwd=%s\n" % (
        caps.get("fs", {}).get("readTextFile"), caps.get("fs", {}).get("writeTextFile"),
        caps.get("terminal"), "root" if cwd[0] == os.environ.get("AGENT_EXPECT_ROOT") else cwd[0]))
    say("prompt: %s\n" % text)
    update({"sessionUpdate": "plan", "entries": [
        {"content": "read hello.txt", "priority": "high", "status": "in_progress"},
        {"content": "write out.txt", "priority": "medium", "status": "pending"}]})
    update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "thinking it over"}})
    if "--hang" in args:
        if opt("--orphan"):
            # a grandchild in a session of its own, named by its argument
            # (pids inside wap's PID namespace mean nothing outside it)
            subprocess.Popen(["sleep", opt("--orphan")], start_new_session=True)
        say("hanging\n")
        while not cancelled[0]:
            m = read()
            if "method" in m and "id" not in m:
                on_notification(m)
        if "--ignore-cancel" in args:
            while True:
                time.sleep(1)
        return "cancelled"
    if opt("--deaf-flood"):
        # writes requests and never reads its answers: the client's
        # writes stall (bounded buffers), and only a stop gets it out
        say("hanging\n")
        i = 0
        while True:
            i += 1
            send({"jsonrpc": "2.0", "id": 10000 + i, "method": "fs/read_text_file",
                  "params": {"sessionId": session[0], "path": path("hello.txt")}})
    if opt("--flood"):
        # many requests at once, none awaited before the last is sent:
        # the client reads them as it has room and answers every one
        # (written from a thread while this one reads, as an agent with
        # asynchronous I/O does: one that never reads while it writes
        # stalls any client whose buffers are bounded)
        n, first = int(opt("--flood")), next_id[0] + 1
        next_id[0] += n

        def flood():
            for i in range(first, first + n):
                send({"jsonrpc": "2.0", "id": i, "method": "fs/read_text_file",
                      "params": {"sessionId": session[0], "path": path("hello.txt")}})
        threading.Thread(target=flood, daemon=True).start()
        got = set()
        while len(got) < n:
            m = read()
            if "id" in m and "method" not in m and m.get("result", {}).get("content"):
                got.add(m["id"])
        say("flood: %d answered of %d\n" % (len(got & set(range(first, first + n))), n))
        return STOP
    if opt("--big-flood"):
        # the client's workers held (four terminals' wait_for_exit), then
        # N writes of --mb MiB each: what the client keeps of them queued
        # must stay bounded (it stops reading, as for a flood of many)
        for _ in range(4):
            res, err = call("terminal/create", {"sessionId": session[0], "command": "sleep",
                                                "args": ["30"], "cwd": cwd[0]})
            next_id[0] += 1
            send({"jsonrpc": "2.0", "id": next_id[0], "method": "terminal/wait_for_exit",
                  "params": {"sessionId": session[0], "terminalId": res["terminalId"]}})
        n, big = int(opt("--big-flood")), "x" * (int(opt("--mb", "12")) << 20)
        first = next_id[0] + 1
        next_id[0] += n

        def flood():
            for i in range(first, first + n):
                send({"jsonrpc": "2.0", "id": i, "method": "fs/write_text_file",
                      "params": {"sessionId": session[0], "path": path("big.txt"), "content": big}})
                log("big-flood sent %d" % (i - first + 1))
            log("big-flood written")
        threading.Thread(target=flood, daemon=True).start()
        say("big-flood\n")
        while not cancelled[0]:
            m = read()
            if "method" in m and "id" not in m:
                on_notification(m)
        return "cancelled"
    if opt("--leave-terminal"):
        # a terminal left running, its wait_for_exit never awaited: the
        # turn ends anyway, and the client must not wait for either
        res, err = call("terminal/create", {"sessionId": session[0], "command": "sleep",
                                            "args": [opt("--leave-terminal")], "cwd": cwd[0]})
        next_id[0] += 1
        send({"jsonrpc": "2.0", "id": next_id[0], "method": "terminal/wait_for_exit",
              "params": {"sessionId": session[0], "terminalId": res["terminalId"]}})
        say("left %s\n" % res["terminalId"])
        return STOP
    # a read
    update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read hello.txt",
            "kind": "read", "status": "pending", "locations": [{"path": path("hello.txt")}]})
    res, err = call("fs/read_text_file", {"sessionId": session[0], "path": path("hello.txt")})
    say("read: %s\n" % (res["content"].strip() if res else "error %s" % err.get("code")))
    res, err = call("fs/read_text_file", {"sessionId": session[0], "path": path("hello.txt"),
                                          "line": 2, "limit": 1})
    say("read line 2: %s\n" % (res["content"].strip() if res else "error %s" % err.get("code")))
    update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
    # permission for a read, then for an edit
    if "--escapes" in args:
        say("esc: \x1b[31mred\x1b[0m\x07 \u009b2J\n")
    title = "Read notes\x1b[1A\x1b[2K\r  9) Allow [allow_once]\n" if "--escapes" in args else "Read notes"
    say("permission read: %s\n" % permission("t2", "read", title))
    got = permission("t3", "edit", "Write out.txt")
    say("permission edit: %s\n" % got)
    update({"sessionUpdate": "tool_call", "toolCallId": "t3", "title": "Write out.txt",
            "kind": "edit", "status": "in_progress"})
    if got in ("yes", "always"):
        res, err = call("fs/write_text_file", {"sessionId": session[0], "path": path("out.txt"),
                                               "content": "written by the agent\n"})
        say("write: %s\n" % ("ok" if res == {} else "error %s" % (err or {}).get("code")))
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t3", "status": "completed",
                "content": [{"type": "diff", "path": path("out.txt"), "oldText": None,
                             "newText": "written by the agent\n"}]})
    else:
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t3", "status": "failed"})
    # a write without asking (what a read-only client must refuse)
    res, err = call("fs/write_text_file", {"sessionId": session[0], "path": path("unasked.txt"),
                                           "content": "x\n"})
    say("unasked write: %s\n" % ("ok" if res == {} else "error %s" % err.get("code")))
    # a terminal
    update({"sessionUpdate": "tool_call", "toolCallId": "t4", "title": "Run sh", "kind": "execute",
            "status": "in_progress"})
    res, err = call("terminal/create", {"sessionId": session[0], "command": "sh",
                                        "args": ["-c", "echo term-ok; pwd"], "cwd": cwd[0],
                                        "outputByteLimit": 4096})
    if res:
        tid = res["terminalId"]
        ex, _ = call("terminal/wait_for_exit", {"sessionId": session[0], "terminalId": tid})
        out, _ = call("terminal/output", {"sessionId": session[0], "terminalId": tid})
        call("terminal/release", {"sessionId": session[0], "terminalId": tid})
        say("terminal: exit=%s out=%s\n" % (ex.get("exitCode"), out["output"].replace("\n", "|")))
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t4", "status": "completed",
                "content": [{"type": "terminal", "terminalId": tid}]})
    else:
        say("terminal: error %s\n" % err.get("code"))
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t4", "status": "failed"})
    # escapes: every one must be refused
    refused = 0
    attempts = [
        ("fs/read_text_file", {"path": "/etc/passwd"}),
        ("fs/read_text_file", {"path": path("..", "outside.txt")}),
        ("fs/read_text_file", {"path": path("link-out", "outside.txt")}),
        ("fs/read_text_file", {"path": "hello.txt"}),
        ("fs/write_text_file", {"path": path("..", "escaped.txt"), "content": "x"}),
        ("fs/write_text_file", {"path": "/tmp/wap-acp-escaped.txt", "content": "x"}),
        ("terminal/create", {"command": "true", "cwd": "/"}),
    ]
    for method, params in attempts:
        params["sessionId"] = session[0]
        res, err = call(method, params)
        if err:
            refused += 1
        else:
            log("NOT refused:", method, params)
    say("escape: %d/%d refused\n" % (refused, len(attempts)))
    update({"sessionUpdate": "available_commands_update", "availableCommands": []})
    say("done\n")
    return STOP


def main():
    if "--garbage" in args:
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    while True:
        m = read()
        method, rid = m.get("method"), m.get("id")
        if method is None:
            continue
        if rid is None:
            on_notification(m)
            continue
        p = m.get("params") or {}
        if method == "initialize":
            caps.update(p.get("clientCapabilities") or {})
            if "--old-shapes" in args:
                send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": p.get("protocolVersion")}})
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": False,
                                          "promptCapabilities": {"image": False, "audio": False,
                                                                 "embeddedContext": True},
                                          "mcpCapabilities": {"http": False, "sse": False}},
                    "authMethods": [], "agentInfo": {"name": "scripted-agent", "version": "1.0"}}})
        elif method == "session/new":
            cwd[0] = p.get("cwd")
            session[0] = "sess-1"
            log("mcpServers:", json.dumps(p.get("mcpServers")))
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": session[0]}})
        elif method == "session/prompt":
            stop = prompt_turn(p)
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": stop}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


main()
