# acpclient: wap acp run, the Agent Client Protocol's client side, driving a
# scripted agent (tests/acp/agent.py) and the official ACP TypeScript SDK's
# example agent: capabilities from the policy, the agent's fs/ and terminal/
# requests answered through the acp profile's handlers (confined to the root),
# permission requests by --approve and in the audit log, the text and JSON
# Lines renderings, stop reasons as exit codes, the transcript and its replay,
# a wall-clock limit, and SIGTERM: session/cancel, then the agent's whole tree
# killed after the grace period.
. tests/lib.sh
AGENT="python3 $(pwd)/tests/acp/agent.py"
PROBE="python3 $(pwd)/tests/acp/probe_agent.py"
SDK=$(pwd)/tests/protocol/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js

fixture() {	# fixture DIR: the workspace the agent starts from
	rm -rf "$1"
	mkdir -p "$1"
	printf 'hello from the root\nline two\n' > "$1/hello.txt"
	printf 'secret\n' > "$T/outside.txt"
	ln -s "$T" "$1/link-out"
}
fixture "$W"
export AGENT_EXPECT_ROOT=$W

# 1. the whole session, text for people
expect "acp run: a whole session ends end_turn (exit 0)" 0 \
	wap acp run --approve all --audit "$T/audit.jsonl" --prompt "fix it" -- $AGENT
has "text: the agent's message chunks" "$OUT" "prompt: fix it"
has "capabilities: fs read, write and terminal advertised, cwd is the root" "$OUT" "caps: read=True write=True terminal=True cwd=root"
has "fs/read_text_file answered from the root" "$OUT" "read: hello from the root"
has "fs/read_text_file with line and limit" "$OUT" "read line 2: line two"
has "permission for a read: allowed (--approve all)" "$OUT" "permission read: yes"
has "permission for an edit: allowed (--approve all)" "$OUT" "permission edit: yes"
has "fs/write_text_file answered" "$OUT" "write: ok"
same "the file was written beneath the root" "$(cat "$W/out.txt")" "written by the agent"
has "terminal/create, wait_for_exit, output: ran in the root" "$OUT" "terminal: exit=0 out=term-ok|$W|"
has "every escape refused (absolute outside, .., symlink out, relative path, writes out, cwd /)" "$OUT" "escape: 7/7 refused"
[ ! -e "$T/escaped.txt" ] && [ ! -e /tmp/wap-acp-escaped.txt ] && ok "nothing written outside the root" || fail "a write escaped the root"
has "text: tool calls with their status" "$OUT" "Read hello.txt"
has "text: a tool call's status" "$OUT" "completed"
has "text: the plan" "$OUT" "read hello.txt"
has "text: a diff of a tool call" "$OUT" "+written by the agent"
has "text: the stop reason" "$OUT" "end_turn"
A=$(cat "$T/audit.jsonl")
has "audit: the permission decisions" "$A" '"op":"session/request_permission"'
has "audit: a decision's option" "$A" '"action":"allow_once"'
has "audit: the agent's reads through the read op" "$A" '"op":"read"'
has "audit: the agent's terminal" "$A" '"op":"terminal/create"'

# 2. --approve reads / never
fixture "$W"
expect "--approve reads: exit 0" 0 wap acp run --approve reads --prompt p -- $AGENT
has "--approve reads allows a read" "$OUT" "permission read: yes"
has "--approve reads rejects an edit" "$OUT" "permission edit: no"
fixture "$W"
expect "--approve never: exit 0" 0 wap acp run --approve never --prompt p -- $AGENT
has "--approve never rejects a read" "$OUT" "permission read: no"
has "--approve never rejects an edit" "$OUT" "permission edit: no"
[ ! -e "$W/out.txt" ] && ok "a rejected edit wrote nothing" || fail "out.txt written after a rejection"
expect "without --approve and no TTY: never" 0 wap acp run --prompt p -- $AGENT </dev/null
has "no TTY: the read is rejected" "$OUT" "permission read: no"
if command -v script >/dev/null 2>&1; then
	# on a TTY the default is to ask there: 1 (allow) for the read, 3
	# (reject) for the edit
	fixture "$W"
	printf '1\n3\n' > "$T/answers"
	script -qec "wap acp run --prompt p -- $AGENT" /dev/null < "$T/answers" > "$T/tty.out" 2>&1
	same "on a TTY: asked there, exit 0" "$?" 0
	has "on a TTY: the question names the tool call" "$(tr -d '\r' < "$T/tty.out")" "the agent asks permission: Read notes (read)"
	has "on a TTY: option 1 allows the read" "$(tr -d '\r' < "$T/tty.out")" "permission read: yes"
	has "on a TTY: option 3 rejects the edit" "$(tr -d '\r' < "$T/tty.out")" "permission edit: no"
	# the agent's control characters cannot rewrite the question or the
	# screen: on a terminal they are shown as cat -v shows them
	fixture "$W"
	script -qec "wap acp run --prompt p -- $AGENT --escapes" /dev/null < "$T/answers" > "$T/tty.out" 2>&1
	same "on a TTY, an agent's escapes: exit 0" "$?" 0
	esc=$(printf '\033')
	if grep -q "$esc" "$T/tty.out"; then fail "on a TTY: an agent's ESC reached the terminal: $(grep -a "$esc" "$T/tty.out" | cat -v | head -2)"
	else ok "on a TTY: no ESC of the agent's reaches the terminal"; fi
	has "on a TTY: a message's escapes shown in caret notation" "$(cat "$T/tty.out")" 'esc: ^[[31mred^[[0m^G M-^[2J'
	has "on a TTY: the question's title on its line, its own option shown for what it is" "$(cat "$T/tty.out")" \
		'asks permission: Read notes^[[1A^[[2K^M  9) Allow [allow_once]^J (read)'
	wap acp run --approve all --prompt p -- $AGENT --escapes > "$T/pipe.out" 2>/dev/null
	if grep -q "esc: $esc\[31mred" "$T/pipe.out"; then ok "to a pipe: the agent's bytes as they came"
	else fail "to a pipe: the agent's text was changed: $(grep -a esc: "$T/pipe.out" | cat -v)"; fi
else
	ok "on a TTY: asked # SKIP no script(1) to make a TTY"
fi
expect "--approve sometimes is a usage error" 2 wap acp run --approve sometimes --prompt p -- $AGENT

# 3. policy -> capabilities and refusals
fixture "$W"
expect "--read-only: exit 0" 0 wap acp run --read-only --approve all --prompt p -- $AGENT
has "--read-only: writeTextFile not advertised" "$OUT" "caps: read=True write=False terminal=True"
has "--read-only: a write is refused anyway" "$OUT" "unasked write: error -32003"
[ ! -e "$W/unasked.txt" ] && ok "--read-only: nothing written" || fail "--read-only wrote"
expect "--no-terminal: exit 0" 0 wap acp run --no-terminal --approve all --prompt p -- $AGENT
has "--no-terminal: terminal not advertised" "$OUT" "caps: read=True write=True terminal=False"
has "--no-terminal: terminal/create refused anyway" "$OUT" "terminal: error -32009"
echo '{"security":{"allowCommandExecution":false}}' > "$T/noexec.json"
expect "no command execution in the config: exit 0" 0 wap acp run --config "$T/noexec.json" --prompt p -- $AGENT
has "allowCommandExecution false: no terminal advertised" "$OUT" "terminal=False"

# requireApproval: the agent's writes wait for the --approver, as on every door
echo '{"security":{"requireApproval":true}}' > "$T/approval.json"
fixture "$W"
expect "requireApproval, approver says no: exit 0" 0 wap acp run --config "$T/approval.json" \
	--approver false --approve all --prompt p -- $AGENT
has "requireApproval: the write is refused by the approver" "$OUT" "write: error"
[ ! -e "$W/out.txt" ] && ok "requireApproval: nothing written" || fail "requireApproval: written without approval"
fixture "$W"
expect "requireApproval, approver says yes: exit 0" 0 wap acp run --config "$T/approval.json" \
	--approver true --approve all --prompt p -- $AGENT
has "requireApproval: the write goes through with approval" "$OUT" "write: ok"

# 4. stop reasons -> exit codes; failures
for sr in "max_tokens 20" "max_turn_requests 21" "refusal 22" "cancelled 23" "made_up 24"; do
	set -- $sr
	fixture "$W"
	expect "stop reason $1 exits $2" "$2" wap acp run --approve all --prompt p -- $AGENT --stop "$1"
done
expect "an agent that cannot start: 125" 125 wap acp run --prompt p -- /nonexistent/agent
has "  ... and says so" "$ERR" "wap acp"
expect "an agent that talks garbage: 125" 125 wap acp run --prompt p -- $AGENT --garbage
expect "no prompt: usage error" 2 wap acp run -- $AGENT
expect "no agent: usage error" 2 wap acp run --prompt p
expect "the older shapes (initialize without agentCapabilities) are accepted" 0 \
	wap acp run --approve all --prompt p -- $AGENT --old-shapes
printf 'from a file\n' > "$W/prompt.md"
expect "--prompt-file: exit 0" 0 wap acp run --prompt-file prompt.md -- $AGENT
has "--prompt-file: the file's text is the prompt" "$OUT" "prompt: from a file"
expect "--prompt-file outside the root is refused" 4 wap acp run --prompt-file ../outside.txt -- $AGENT

# 5. --json: JSON Lines
fixture "$W"
expect "--json: exit 0" 0 wap acp run --json --approve reads --prompt p -- $AGENT
printf '%s\n' "$OUT" > "$T/jl"
if python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$T/jl"; then ok "--json: every line is JSON"; else fail "--json: a line is not JSON"; fi
jcheck "--json: updates, permissions and the stop line" "$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1]) if l.strip()]))' "$T/jl")" \
	'any(e["event"]=="update" and e["update"]["sessionUpdate"]=="plan" for e in j) and any(e["event"]=="permission" and e["outcome"]=="reject_once" for e in j) and j[-1]["event"]=="stop" and j[-1]["stopReason"]=="end_turn" and j[-1]["exitCode"]==0'

# 6. the transcript and its replay
fixture "$W"
expect "--transcript: exit 0" 0 wap acp run --approve reads --transcript "$T/t.jsonl" --prompt p -- $AGENT
if python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/t.jsonl"; then ok "transcript: JSON Lines"; else fail "transcript: not JSON Lines"; fi
jcheck "transcript: messages both ways (initialize sent, fs/read_text_file received, its answer sent)" \
	"$(python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])]))' "$T/t.jsonl")" \
	'any(e.get("from")=="client" and e["msg"].get("method")=="initialize" for e in j) and any(e.get("from")=="agent" and e["msg"].get("method")=="fs/read_text_file" for e in j) and any(e.get("from")=="agent" and e["msg"].get("method")=="session/update" for e in j)'
fixture "$W"
expect "replay against the starting workspace: all the same (exit 0)" 0 wap acp replay "$T/t.jsonl"
has "replay says how many were checked" "$OUT" "same"
mkdir -p "$T/elsewhere"
fixture "$T/elsewhere/ws"
expect "replay in another root (paths moved over): exit 0" 0 wap acp replay --root "$T/elsewhere/ws" "$T/t.jsonl"
# a scenario recorded once and kept (tests/acp/scenario.jsonl, root
# /tmp/wap-acp-scenario/ws): today's wap must answer it the same way
fixture "$W"
expect "the kept scenario replays the same (tests/acp/scenario.jsonl)" 0 \
	wap acp replay --root "$W" tests/acp/scenario.jsonl
has "  ... all of its requests" "$OUT" "17 same, 0 differ"
fixture "$W"
python3 - "$T/t.jsonl" "$T/bad.jsonl" <<'EOF'
import json, sys
out = open(sys.argv[2], "w")
for l in open(sys.argv[1]):
    e = json.loads(l)
    r = e.get("msg", {}).get("result")
    if e.get("from") == "client" and isinstance(r, dict) and "content" in r:
        r["content"] = "tampered\n"
    out.write(json.dumps(e) + "\n")
EOF
expect "replay of a tampered transcript differs (exit 1)" 1 wap acp replay "$T/bad.jsonl"
has "  ... naming the request" "$OUT" "fs/read_text_file"
fixture "$W"
expect "replay under another policy (--read-only) differs" 1 wap acp replay --read-only "$T/t.jsonl"
expect "replay --json: exit 0" 0 wap acp replay --json "$T/t.jsonl"
# the transcript and the audit log beneath the root are not the agent's
# to rewrite: fs/write_text_file replaced their inodes, wap went on writing
# to the old ones, and replay checked the agent's forgery
R2=$T/forgeroot; mkdir -p "$R2/run"
(cd "$R2" && WAP_ROOT=$R2 wap acp run --approve all --transcript run/t.jsonl --audit run/a.jsonl \
	--prompt p -- $PROBE forge >/dev/null 2>"$T/forger.err")
same "transcript and audit in the root: the agent's writes to them refused, the next one done" \
	"$(grep -E '^(run|after)' "$T/forger.err" | tr '\n' ' ')" "run/t.jsonl error run/a.jsonl error after.txt ok "
lacks "transcript in the root: not replaced" "$(head -c 200 "$R2/run/t.jsonl")" FORGEDLINE
lacks "audit log in the root: not replaced" "$(cat "$R2/run/a.jsonl")" FORGEDLINE
same "audit log in the root: the three writes recorded" \
	"$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["outcome"] for l in open(sys.argv[1])))' "$R2/run/a.jsonl")" "error error ok"
jcheck "replay --json: a summary" "$OUT" 'j["differ"]==0 and j["same"]>5'

# 7. a wall-clock limit, and SIGTERM: session/cancel, then the tree killed
fixture "$W"
t0=$(date +%s)
expect "--timeout: an agent that never ends the turn exits 124" 124 \
	wap acp run --timeout 2 --grace 1 --prompt p -- $AGENT --hang --ignore-cancel --orphan 3001.$$
t1=$(date +%s)
[ $((t1 - t0)) -lt 20 ] && ok "--timeout: stopped in time ($((t1 - t0)) s)" || fail "--timeout took $((t1 - t0)) s"
alive() {	# alive ARG: is a "sleep ARG" running anywhere?
	python3 -c 'import os, sys
for p in os.listdir("/proc"):
    try:
        if p.isdigit() and open("/proc/%s/cmdline" % p, "rb").read() == b"sleep\0" + sys.argv[1].encode() + b"\0":
            sys.exit(0)
    except OSError:
        pass
sys.exit(1)' "$1"
}
sleep 0.5
! alive 3001.$$ && ok "--timeout: no orphan left (the agent's grandchild is gone)" || fail "--timeout: the agent's grandchild is still alive"

term_run() {	# term_run OUT ARGS...: run in the background, SIGTERM at "hanging"
	o=$1; shift
	wap acp run --grace 2 --prompt p -- $AGENT --hang "$@" > "$o" 2>"$o.err" &
	pid=$!
	for _ in $(seq 1 200); do grep -q hanging "$o" 2>/dev/null && break; sleep 0.05; done
	before=no
	alive 3002.$$ && before=yes
	kill -TERM $pid
	wait $pid
}
term_run "$T/c1"
same "SIGTERM: session/cancel, the agent ends the turn cancelled (exit 23)" "$?" 23
has "SIGTERM: the agent got session/cancel" "$(cat "$T/c1.err")" "got session/cancel"
wap acp run --grace 2 --prompt p -- $AGENT --hang > "$T/c3" 2>"$T/c3.err" &
pid=$!
for _ in $(seq 1 200); do grep -q hanging "$T/c3" 2>/dev/null && break; sleep 0.05; done
kill -INT $pid
wait $pid
same "SIGINT: session/cancel too (exit 23)" "$?" 23
t0=$(date +%s)
term_run "$T/c2" --ignore-cancel --orphan 3002.$$
rc=$?
t1=$(date +%s)
same "the agent's grandchild ran until SIGTERM (the orphan check sees it)" "$before" yes
same "SIGTERM, agent ignoring session/cancel: killed after the grace period (exit 143)" "$rc" 143
[ $((t1 - t0)) -lt 20 ] && ok "SIGTERM: done within the grace period ($((t1 - t0)) s)" || fail "SIGTERM took $((t1 - t0)) s"
sleep 0.5
! alive 3002.$$ && ok "SIGTERM: no orphan left" || fail "SIGTERM: the agent's grandchild is still alive"

# a terminal left running with its wait_for_exit pending: the run still ends
fixture "$W"
t0=$(date +%s)
expect "a terminal left running does not hold the run" 0 \
	wap acp run --grace 1 --prompt p -- $AGENT --leave-terminal 3003.$$
t1=$(date +%s)
has "  ... the agent started it" "$OUT" "left term-1"
[ $((t1 - t0)) -lt 20 ] && ok "  ... and the run ended at once ($((t1 - t0)) s)" || fail "the run took $((t1 - t0)) s"
sleep 0.5
! alive 3003.$$ && ok "  ... and the terminal's command is gone" || fail "the terminal's command is still alive"

# an agent flooding requests: read as there is room, every one answered
fixture "$W"
expect "a flood of 2000 requests: exit 0" 0 wap acp run --prompt p -- $AGENT --flood 2000
has "  ... every one answered" "$OUT" "flood: 2000 answered of 2000"

# an agent flooding big requests while the client's workers are held
# (eleventh hostile review): the queue was bounded by count alone (256 of up
# to 16 MiB: 4 GiB), so 30 writes of 6 MiB were all taken and held at once;
# now by their bytes too (16 + 8 MiB), as MCP over stdio holds them
fixture "$W"
wap acp run --grace 1 --timeout 60 --prompt p -- $AGENT --big-flood 30 --mb 6 > "$T/bf" 2>"$T/bf.err" &
pid=$!
wait_for 12 grep -q "big-flood written" "$T/bf.err"
hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null)
sent=$(grep -c "big-flood sent" "$T/bf.err")
kill -TERM $pid; wait $pid
[ "$sent" -lt 12 ] && ok "a flood of 30 requests of 6 MiB: $sent taken while the workers are held" \
	|| fail "a flood of 30 requests of 6 MiB: $sent taken while the workers are held"
if [ -z "${ASAN:-}" ]; then	# (ASan's quarantine keeps what was freed)
	[ -n "$hwm" ] && [ "$hwm" -lt 120000 ] && ok "  ... at most 120 MB held (${hwm} kB)" || fail "  ... ${hwm:-?} kB held"
fi
same "  ... none of them written" "$(ls "$W/big.txt" 2>/dev/null)" ""

# an agent that floods and never reads: stalled, but SIGTERM still ends it
fixture "$W"
wap acp run --grace 1 --prompt p -- $AGENT --deaf-flood 1 > "$T/deaf" 2>"$T/deaf.err" &
pid=$!
for _ in $(seq 1 200); do grep -q hanging "$T/deaf" 2>/dev/null && break; sleep 0.05; done
sleep 1
t0=$(date +%s)
kill -TERM $pid
wait $pid
rc=$?
t1=$(date +%s)
same "an agent that never reads: SIGTERM kills it (exit 143)" "$rc" 143
[ $((t1 - t0)) -lt 20 ] && ok "  ... within the grace periods ($((t1 - t0)) s)" || fail "  ... took $((t1 - t0)) s"

# MCP servers for the agent
fixture "$W"
expect "--mcp-server wap and a JSON one: exit 0" 0 wap acp run --read-only --mcp-server wap \
	--mcp-server '{"name":"other","command":"/bin/true"}' --prompt p -- $AGENT
has "session/new carries wap's own MCP server on this root, with the policy as its config" "$ERR" "\"serve\", \"--root\", \"$W\", \"--config\", \""
has "  ... and --read-only" "$ERR" "\"--read-only\""
# an agent that starts the wap server it is handed and calls its tools: the
# invoker's policy holds there as on the client methods (the server was
# given only --root, --read-only and --restrict: a --config's
# allowCommandExecution false, --no-terminal and the audit log were lost)
fixture "$W"
echo hush > "$W/secret.txt"
mcpuser() { # EXPECTED ARGS...
	want=$1; shift
	mkdir -p "$T/ptmp"
	TMPDIR=$T/ptmp wap acp run --mcp-server wap "$@" --prompt p -- $PROBE mcp >/dev/null 2>"$T/mcpuser.err"
	same "the agent's wap MCP server, $*" "$(grep '^MCP' "$T/mcpuser.err" | tr '\n' ' ')" "$want"
}
printf '{"security":{"allowCommandExecution":false}}\n' > "$T/noexec.json"
mcpuser "MCP exec ok MCP read ok "
mcpuser "MCP exec FEATURE_DISABLED MCP read ok " --config "$T/noexec.json"
mcpuser "MCP exec FEATURE_DISABLED MCP read ok " --no-terminal
mcpuser "MCP exec ok MCP read PATH_RESTRICTED " --restrict 'secret*'
WAP_CONFIG=$T/noexec.json mcpuser "MCP exec FEATURE_DISABLED MCP read ok " --audit "$T/mcp-audit.jsonl"
same "the agent's wap MCP server logs to the same audit log" \
	"$(python3 -c 'import json,sys; print(" ".join(sorted(json.loads(l)["op"] + ":" + json.loads(l).get("error", "ok") for l in open(sys.argv[1]))))' "$T/mcp-audit.jsonl")" \
	"exec:FEATURE_DISABLED read:ok"
same "the policy file handed to it is gone after the run" "$(ls "$T/ptmp" | grep -c '^wap-acp-policy')" 0
rm -f "$W/secret.txt"
has "  ... and the JSON one, with args and env filled in" "$ERR" '{"name": "other", "command": "/bin/true", "args": [], "env": []}'
expect "--mcp-server that is neither wap nor a JSON object: usage error" 2 \
	wap acp run --mcp-server nope --prompt p -- $AGENT

# 8. the official ACP TypeScript SDK's example agent (tests/protocol, npm ci)
if [ ! -f "$SDK" ]; then
	ok "ACP SDK example agent # SKIP not installed (scripts/deps --test runs npm ci in tests/protocol)"
else
	fixture "$W"
	expect "SDK example agent: a whole session, permission allowed (--approve all)" 0 \
		wap acp run --approve all --transcript "$T/sdk.jsonl" --prompt "hello" -- node "$SDK"
	has "SDK agent: its message chunks" "$OUT" "Let me start by reading some files"
	has "SDK agent: its tool call and status" "$OUT" "Modifying critical configuration file"
	has "SDK agent: allowed" "$OUT" "successfully updated the configuration"
	expect "SDK example agent: rejected (--approve never)" 0 wap acp run --approve never --prompt "hello" -- node "$SDK"
	has "SDK agent: rejected" "$OUT" "skip the configuration update"
	expect "SDK agent's transcript replays clean" 0 wap acp replay "$T/sdk.jsonl"
	SDKDIR=$(dirname "$(dirname "$(dirname "$SDK")")")
	# every message wap sent parses with the SDK's own schemas (zod,
	# generated from the protocol's JSON Schema): the scripted agent's
	# session covers every client method
	for t in "$T/t.jsonl" "$T/sdk.jsonl"; do
		if node tests/acp/schema-check.mjs "$SDKDIR" "$t" > "$T/schema" 2>&1; then
			ok "$(basename "$t"): every message wap sent matches the ACP SDK's schema ($(grep -c '^ok' "$T/schema") messages)"
		else
			fail "$(basename "$t"): $(grep -v '^ok' "$T/schema" | head -5)"
		fi
	done
	# an agent built on the SDK (tests/acp/sdk-agent.mjs): the SDK's own
	# connection frames the fs/ and terminal/ requests and reads wap's answers
	SDKDIR=$(dirname "$(dirname "$(dirname "$SDK")")")
	fixture "$W"
	expect "SDK-built agent: fs reads and writes and a terminal, confined (exit 0)" 0 \
		wap acp run --approve all --prompt go -- node tests/acp/sdk-agent.mjs "$SDKDIR"
	has "SDK-built agent: read" "$OUT" "sdk read: hello from the root"
	has "SDK-built agent: write" "$OUT" "sdk write: ok"
	same "SDK-built agent: the file written beneath the root" "$(cat "$W/out.txt")" "written through the SDK"
	has "SDK-built agent: terminal in the root" "$OUT" "sdk terminal: exit=0 out=sdk-term|$W|"
	has "SDK-built agent: /etc/passwd refused (ACCESS_DENIED)" "$OUT" "sdk escape: refused -32010"
	wap acp run --prompt hello -- node "$SDK" > "$T/s1" 2>"$T/s1.err" &
	pid=$!
	for _ in $(seq 1 200); do grep -q "Let me start" "$T/s1" 2>/dev/null && break; sleep 0.05; done
	kill -TERM $pid
	wait $pid
	same "SDK agent: SIGTERM cancels the turn (stopReason cancelled, exit 23)" "$?" 23
fi
