# tests/acp.sh - `wap serve --ws`: the Agent Control Protocol over WebSocket,
# driven by a real WebSocket client (the `ws` npm package, pinned in
# tests/ws/package-lock.json): auth, batches, rate limits, every method
# category, terminals, file watching, policy, 100 clients coming and going,
# shutdown.
. "$(dirname "$0")/lib.sh"
WSDIR=$(cd "$(dirname "$0")/ws" && pwd)
if [ ! -d "$WSDIR/node_modules/ws" ]; then
	(cd "$WSDIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) || { fail "npm ci in tests/ws"; exit 1; }
fi
PIDS=
export SHELL=/bin/sh	# terminals run $SHELL: keep rc files out of the tests
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

# start_ws NAME ARGS...: start `wap serve --ws 127.0.0.1:0 ARGS`; sets PID, PORT
start_ws() {
	n=$1; shift
	wap serve --ws 127.0.0.1:0 "$@" 2>"$T/$n.log" &
	PID=$!
	PIDS="$PIDS $PID"
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*on ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/$n.log" 2>/dev/null)
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "server $n did not start: $(cat "$T/$n.log")"
}
nfds() { ls "/proc/$1/fd" | wc -l; }
nkids() { pgrep -P "$1" | wc -l; }
# hostpid NS PID: the host's pid of the process PID of the PID namespace NS
hostpid() {
	for _d in /proc/[0-9]*; do
		[ "$(readlink "$_d/ns/pid" 2>/dev/null)" = "$1" ] &&
		[ "$(awk '/^NSpid:/ {print $NF}' "$_d/status" 2>/dev/null)" = "$2" ] && { echo "${_d#/proc/}"; return; }
	done
}
tap() { node "$WSDIR/acp-test.js" "$@"; }

git -C "$W" init -q && git -C "$W" config user.email t@example.com && git -C "$W" config user.name T

# --- the main server: generated token, written 0600 to --token-file ---
start_ws main --token-file "$T/token" --root "$W"
MAIN=$PID
same "token file is mode 0600" "$(stat -c %a "$T/token")" 600
TOKEN=$(cat "$T/token")
jcheck "token is 64 hex digits" "\"$TOKEN\"" 'len(j) == 64 and all(c in "0123456789abcdef" for c in j)'
lacks "the token is never logged" "$(cat "$T/main.log")" "$TOKEN"
tap main "$PORT" "$TOKEN" "$W"

# --- 100 clients come and go: no fds, threads or processes left ---
sleep 0.5
fd0=$(nfds $MAIN)
kids0=$(nkids $MAIN)
tap churn "$PORT" "$TOKEN" "$W"
for _ in $(seq 50); do
	[ "$(nfds $MAIN)" -le "$fd0" ] && [ "$(nkids $MAIN)" -le "$kids0" ] && break
	sleep 0.1
done
same "no fd leaked after 100 clients ($fd0 before)" "$(nfds $MAIN)" "$fd0"
same "no process left after 100 clients" "$(nkids $MAIN)" "$kids0"
same "the server stays up" "$(kill -0 $MAIN && echo up)" up
thr=$(awk '/^Threads:/ {print $2}' "/proc/$MAIN/status")
same "no thread left (terminals and watchers joined)" "$thr" 1

# --- shutdown: server.shutdown, clients closed, terminals killed ---
(tap shutdown "$PORT" "$TOKEN" "$W" > "$T/shutdown.tap") &
CL=$!
for _ in $(seq 600); do grep -q READY "$T/shutdown.tap" 2>/dev/null && break; sleep 0.1; done
shell=$(hostpid $(cat "$W/shell.pid" 2>/dev/null))
kill -TERM $MAIN
wait $CL
cat "$T/shutdown.tap"
wait $MAIN; st=$?
same "SIGTERM: the server exits 0" "$st" 0
if [ -n "$shell" ] && ! kill -0 "$shell" 2>/dev/null; then ok "the terminal's shell was killed"; else fail "the terminal's shell ($shell) survived"; fi

# --- policy: fixed token from the config, categories, approval, origins, TTL ---
mkdir -p "$T/pol/ws"
cat > "$T/pol/config.json" <<'EOF'
{"agentControl": {"token": "fixed-token", "allowedOrigins": ["http://good.example"],
 "security": {"allowedMethodCategories": ["fs", "terminal"], "requireApproval": true,
   "restrictedCommands": ["rm"]}}}
EOF
cat > "$T/pol/approve.sh" <<EOF
#!/bin/sh
echo "\$1 \$2" >> "$T/pol/approvals.log"
cat > /dev/null
[ "\$1" = terminal.create ] && exit 0
[ "\$2" = slow.txt ] && sleep 1
test "\$2" != keep.txt
EOF
chmod +x "$T/pol/approve.sh"
start_ws pol --config "$T/pol/config.json" --token-file "$T/pol/token" --session-ttl 6 \
	--approver "$T/pol/approve.sh \"\$@\"" --audit "$T/pol/audit.jsonl" --root "$T/pol/ws"
same "a configured token is used" "$(cat "$T/pol/token")" fixed-token
tap policy "$PORT" fixed-token "$T/pol/ws"
# SIGTERM drains: the call under way is answered, new ones are refused
(tap drain "$PORT" fixed-token "$T/pol/ws" > "$T/drain.tap") &
CL=$!
for _ in $(seq 600); do grep -q READY "$T/drain.tap" 2>/dev/null && break; sleep 0.1; done
kill -TERM $PID
wait $CL
grep -v '^#' "$T/drain.tap"
wait $PID; st=$?
same "the policy server exits 0 after draining" "$st" 0
jcheck "audit: one line per op (fs.deleteFile runs rm)" "$(grep '"op":"rm"' "$T/pol/audit.jsonl" | grep -c keep.txt)" 'j == 1'
jcheck "audit: a refused approval is an error line" \
	"$(grep '"op":"rm"' "$T/pol/audit.jsonl" | grep keep.txt)" 'j["outcome"] == "error" and j["request"]["path"] == "keep.txt"'
lacks "audit: no file contents" "$(cat "$T/pol/audit.jsonl")" "overwritten-secret"
# a method its category turns off is refused on the road, and audited there
jcheck "audit: a method refused by allowedMethodCategories is an error line" \
	"$(grep -m1 '"op":"git.status"' "$T/pol/audit.jsonl")" 'j["outcome"] == "error" and j["error"] == "FEATURE_DISABLED"'
lacks "no sanitizer report" "$(cat "$T"/*.log)" "Sanitizer"
lacks "no runtime error" "$(cat "$T"/*.log)" "runtime error"

# --- origins: allowedOrigins ["*"] (the protocol's default) or --allowed-origins widen ---
mkdir -p "$T/star/ws"
echo '{"agentControl": {"allowedOrigins": ["*"]}}' > "$T/star/config.json"
start_ws star --config "$T/star/config.json" --token-file "$T/star/token" --root "$T/star/ws"
tap anyorigin "$PORT" "$(cat "$T/star/token")" "$T/star/ws"
kill $PID; wait $PID
start_ws wide --allowed-origins http://evil.example --token-file "$T/star/token2" --root "$T/star/ws"
tap anyorigin "$PORT" "$(cat "$T/star/token2")" "$T/star/ws"
kill $PID; wait $PID
start_ws noread --token-file "$T/star/token5" --root "$T/star/ws" --audit "$T/star/audit.jsonl"
SERVER_PID=$PID tap noread "$PORT" "$(cat "$T/star/token5")" "$T/star/ws"
SERVER_PID=$PID tap inflood "$PORT" "$(cat "$T/star/token5")" "$T/star/ws"
tap sendfreeze "$PORT" "$(cat "$T/star/token5")" "$T/star/ws"
tap buffers "$PORT" "$(cat "$T/star/token5")" "$T/star/ws"
kill $PID
for _ in $(seq 50); do kill -0 $PID 2>/dev/null || break; sleep 0.1; done
if kill -0 $PID 2>/dev/null; then fail "the server stops on SIGTERM (it did not in 5 s)"; kill -9 $PID; else ok "the server stops on SIGTERM"; fi
wait $PID
# what a terminal was given to run is in the audit: the text typed, the terminal
jcheck "audit: terminal.sendText says what was typed, and where" \
	"$(grep '"op":"terminal.sendText"' "$T/star/audit.jsonl" | grep -m1 'stty raw')" \
	'j["request"]["text"].startswith("stty raw -echo;") and j["request"]["terminalId"].startswith("term-")'
WAP_SERVE_HELD_MAX=3145728 start_ws heldall --token-file "$T/star/token11" --root "$T/star/ws"
tap heldall "$PORT" "$(cat "$T/star/token11")" "$T/star/ws"
kill $PID; wait $PID
WAP_ACP_UNSAVED_MAX=2500000 start_ws bufall --token-file "$T/star/token6" --root "$T/star/ws"
tap buffersall "$PORT" "$(cat "$T/star/token6")" "$T/star/ws"
kill $PID; wait $PID
WAP_WATCHERS_MAX=2 start_ws watchall --token-file "$T/star/token7" --root "$T/star/ws"
tap watchall "$PORT" "$(cat "$T/star/token7")" "$T/star/ws"
kill $PID; wait $PID
start_ws ttl --token-file "$T/star/token8" --root "$T/star/ws" --session-ttl 2
tap ttlstream "$PORT" "$(cat "$T/star/token8")" "$T/star/ws"
kill $PID; wait $PID
start_ws slots --token-file "$T/star/token4" --root "$T/star/ws"
tap slots "$PORT" "$(cat "$T/star/token4")" "$T/star/ws"
kill $PID; wait $PID
WAP_ACP_AUTH_TIMEOUT=1 start_ws authto --token-file "$T/star/token3" --root "$T/star/ws"
tap authtimeout "$PORT" "$(cat "$T/star/token3")" "$T/star/ws"
kill $PID; wait $PID
expect "a token file inside the root is refused" 2 timeout 5 wap serve --ws 127.0.0.1:0 --token-file "$T/star/ws/t" --root "$T/star/ws"
check "and not written" test ! -e "$T/star/ws/t"

# --- logging.level and logging.logToFile ---
mkdir -p "$T/lg/ws" "$T/lg/rt"
printf '{"agentControl": {"token": "log-token", "logging": {"level": "debug", "logToFile": true}}}' > "$T/lg/debug.json"
XDG_RUNTIME_DIR=$T/lg/rt start_ws lgdebug --config "$T/lg/debug.json" --root "$T/lg/ws"
LEVEL=debug tap logging "$PORT" log-token "$T/lg/ws"
kill $PID; wait $PID
F=$T/lg/rt/wap-acp.log
check "logToFile: the default file is wap-acp.log beside the token" test -f "$F"
same "the log file is mode 0600" "$(stat -c %a "$F")" 600
L=$(cat "$F")
has "file: the listening line" "$L" "INFO Agent Control Protocol on ws://127.0.0.1:$PORT"
has "file: a client connected (info)" "$L" "INFO ws: client 1 connected"
has "file: a failed authentication (warn)" "$L" "WARN ws: client 1: authentication failed (invalid token)"
has "file: authenticated (info)" "$L" "INFO ws: client 1 authenticated, session "
has "file: each call at debug" "$L" "DEBUG ws: client 1: fs.exists in "
has "file: a failed call at debug, with its error" "$L" "DEBUG ws: client 1: fs.readFile failed in "
has "file: the error code and message" "$L" ": FILE_NOT_FOUND: "
has "file: disconnected (info)" "$L" "INFO ws: client 1 disconnected"
jcheck "file: every line starts with an ISO time" "$(python3 -c 'import json,re,sys; print(json.dumps(all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARN|ERROR) ", l) for l in open(sys.argv[1]))))' "$F")" 'j is True'
lacks "file: the token is never logged" "$L" "log-token"
has "stderr gets the same lines" "$(cat "$T/lgdebug.log")" "ws: client 1: fs.exists in "

printf '{"agentControl": {"token": "log-token", "logging": {"level": "error", "logToFile": true, "file": "%s"}}}' "$T/lg/err.log" > "$T/lg/error.json"
start_ws lgerror --config "$T/lg/error.json" --root "$T/lg/ws"
LEVEL=error tap logging "$PORT" log-token "$T/lg/ws"
kill $PID; wait $PID
has "level error: the listening line is still printed" "$(cat "$T/lgerror.log")" "on ws://127.0.0.1:$PORT"
lacks "level error: no connection lines" "$(cat "$T/lgerror.log")" "connected"
lacks "level error: no warnings" "$(cat "$T/lgerror.log")" "authentication failed"
has "logging.file names the file" "$(cat "$T/lg/err.log")" "Agent Control Protocol on ws://"

printf '{"agentControl": {"logging": {"level": "warn"}}}' > "$T/lg/warn.json"
mkdir -p "$T/lg/rt2"
XDG_RUNTIME_DIR=$T/lg/rt2 start_ws lgwarn --config "$T/lg/warn.json" --token-file "$T/lg/warn.token" --root "$T/lg/ws"
LEVEL=warn tap logging "$PORT" "$(cat "$T/lg/warn.token")" "$T/lg/ws"
kill $PID; wait $PID
has "level warn: warnings" "$(cat "$T/lgwarn.log")" "authentication failed"
lacks "level warn: no info lines" "$(cat "$T/lgwarn.log")" "connected"
check "logToFile unset: no log file" test ! -e "$T/lg/rt2/wap-acp.log"

printf '{"agentControl": {"logging": {"level": "loud"}}}' > "$T/lg/bad.json"
expect "an unknown logging.level is refused" 2 wap serve --ws 127.0.0.1:0 --config "$T/lg/bad.json" --token-file "$T/lg/bad.token" --root "$T/lg/ws"
has "it says which levels there are" "$ERR" "Invalid logging.level 'loud' (debug, info, warn or error)"

# --- command line errors ---
expect "--ws with a bad address" 2 wap serve --ws 127.0.0.1:99999 --root "$W"
has "bad address message" "$ERR" "--ws wants HOST:PORT"
expect "--session-ttl must be positive" 2 wap serve --ws :0 --session-ttl 0 --root "$W"

# --- the acp stdio profile's terminal/... methods (Agent Client Protocol) ---
cat > "$T/acpstdio.py" <<'EOF2'
import json, sys, os
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2], "--audit", sys.argv[3]])
call = s.call
root = os.path.realpath(sys.argv[2])
r = call("terminal/create", sessionId="s", command="sh", args=["-c", "printf 'héllo wörld'; echo \" $X\"; exit 4"],
         env=[{"name": "X", "value": "ex"}], cwd=root, outputByteLimit=9)
tid = r["result"]["terminalId"]
print(json.dumps(call("terminal/wait_for_exit", sessionId="s", terminalId=tid)))
print(json.dumps(call("terminal/output", sessionId="s", terminalId=tid)))
print(json.dumps(call("terminal/release", sessionId="s", terminalId=tid)))
print(json.dumps(call("terminal/output", sessionId="s", terminalId=tid)))
r = call("terminal/create", sessionId="s", command="sleep", args=["30"])
tid = r["result"]["terminalId"]
print(json.dumps(call("terminal/kill", sessionId="s", terminalId=tid)))
print(json.dumps(call("terminal/wait_for_exit", sessionId="s", terminalId=tid)))
r = call("terminal/create", sessionId="s", command="sleep", args=["30"])
print(json.dumps(call("terminal/create", sessionId="s", command="true", cwd="/")))
r = call("terminal/create", sessionId="s", command="sh", args=["-c", "head -c 3145728 /dev/zero | tr '\\0' x"],
         outputByteLimit=10**15)
tid = r["result"]["terminalId"]
call("terminal/wait_for_exit", sessionId="s", terminalId=tid)
o = call("terminal/output", sessionId="s", terminalId=tid)["result"]
print(json.dumps({"len": len(o["output"]), "truncated": o["truncated"]}))
r = call("terminal/create", sessionId="s", command="sh",
         args=["-c", "ls /proc | grep -c '^[0-9][0-9]*$'; test -e /proc/$OUTER && echo outer || echo own"],
         env=[{"name": "OUTER", "value": str(os.getpid())}])
tid = r["result"]["terminalId"]
call("terminal/wait_for_exit", sessionId="s", terminalId=tid)
print(json.dumps(call("terminal/output", sessionId="s", terminalId=tid)["result"]["output"].split()))
r = call("terminal/create", sessionId="s", command="sh", args=["-c", "ls /proc/$$/fd"])
tid = r["result"]["terminalId"]
call("terminal/wait_for_exit", sessionId="s", terminalId=tid)
print(json.dumps(call("terminal/output", sessionId="s", terminalId=tid)["result"]["output"].split()))
print(json.dumps({"status": s.close()}))
EOF2
python3 "$T/acpstdio.py" "$WAP" "$W" "$T/acpstdio.audit" > "$T/acpstdio.out" 2>&1
L() { sed -n "$1p" "$T/acpstdio.out"; }
jcheck "acp stdio: terminal/wait_for_exit" "$(L 1)" 'j["result"] == {"exitCode": 4, "signal": None}'
jcheck "acp stdio: terminal/output keeps the last bytes at a character boundary" "$(L 2)" \
	'j["result"]["output"] == "\u00f6rld ex\n" and j["result"]["truncated"] is True and j["result"]["exitStatus"]["exitCode"] == 4'
jcheck "acp stdio: terminal/release" "$(L 3)" '"result" in j'
jcheck "acp stdio: a released id is gone" "$(L 4)" 'j["error"]["code"] == -32002 and j["error"]["message"] == "Terminal not found: term-1"'
jcheck "acp stdio: terminal/kill" "$(L 5)" '"result" in j'
jcheck "acp stdio: killed: the signal is reported" "$(L 6)" 'j["result"]["exitCode"] is None and j["result"]["signal"] in ("SIGHUP", "SIGKILL")'
jcheck "acp stdio: cwd outside the root" "$(L 7)" 'j["error"]["code"] == -32010'
jcheck "acp stdio: outputByteLimit past the server's 1 MiB keeps 1 MiB (3 MiB written)" "$(L 8)" 'j == {"len": 1048576, "truncated": True}'
jcheck "acp stdio: a terminal's /proc is its PID namespace's: a few processes, none outside" "$(L 9)" \
	'len(j) == 2 and int(j[0]) < 10 and j[1] == "own"'
jcheck "acp stdio: a terminal's program has no descriptor but 0, 1 and 2" "$(L 10)" 'j == ["0", "1", "2"]'
jcheck "acp stdio: the server ends cleanly at EOF, killing its terminals" "$(L 11)" 'j["status"] == 0'
jcheck "acp stdio: the audit line of terminal/create has its command and args" \
	"$(grep -m1 '"op":"terminal/create"' "$T/acpstdio.audit")" \
	'j["request"]["command"] == "sh" and j["request"]["args"][0] == "-c" and "printf" in j["request"]["args"][1]'
# the command lists judge a terminal's whole command line, as exec's: a
# deny entry with arguments ("git init") held for exec, not for
# terminal/create, which was checked by its program name alone
printf '{"security":{"restrictedCommands":["git init"]}}\n' > "$T/gitinit.json"
cat > "$T/acpgi.py" <<'EOF2'
import json, sys
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2], "--config", sys.argv[3]])
print(json.dumps(s.call("terminal/create", sessionId="s", command="git", args=["init", "viaterm"])))
print(json.dumps(s.call("terminal/create", sessionId="s", command="git", args=["--version"])))
s.close()
EOF2
python3 "$T/acpgi.py" "$WAP" "$W" "$T/gitinit.json" > "$T/acpgi.out" 2>&1
jcheck "acp stdio: terminal/create of a denied command line (git init) refused" "$(sed -n 1p "$T/acpgi.out")" \
	'j["error"]["code"] == -32011 or "COMMAND_RESTRICTED" in json.dumps(j)'
jcheck "acp stdio: the same program with other arguments runs" "$(sed -n 2p "$T/acpgi.out")" '"terminalId" in j["result"]'
check "  ... and nothing was made" test ! -e "$W/viaterm"

# a terminal's program that leaves a daemon (setsid, double fork, ignoring
# SIGTERM): the daemon goes when the program ends, when the terminal is
# killed and when the server ends, as exec's commands' do (the terminal is
# held in a PID namespace)
cat > "$T/acpdaemon.py" <<'EOF2'
import json, sys, os, time
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2]] + sys.argv[3:])
call = s.call
leave = "(setsid sh -c 'trap \"\" TERM; exec sleep %s' </dev/null >/dev/null 2>&1 &); echo left"
r = call("terminal/create", sessionId="s", command="sh", args=["-c", leave % "71.25"])
print(json.dumps(call("terminal/wait_for_exit", sessionId="s", terminalId=r["result"]["terminalId"])))
r = call("terminal/create", sessionId="s", command="sh", args=["-c", (leave % "72.25") + "; exec sleep 30"])
time.sleep(0.5)
print(json.dumps(call("terminal/kill", sessionId="s", terminalId=r["result"]["terminalId"])))
print(json.dumps(call("terminal/wait_for_exit", sessionId="s", terminalId=r["result"]["terminalId"])))
r = call("terminal/create", sessionId="s", command="sh", args=["-c", (leave % "73.25") + "; exec sleep 30"])
time.sleep(0.5)
print(json.dumps({"status": s.close()}))
EOF2
if [ "$(WAP_EXEC_SUPERVISOR= "$WAP" info --json --root "$W" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("execSupervisor"))')" = pid-namespace ]; then
for sb in "" --no-sandbox; do
	python3 "$T/acpdaemon.py" "$WAP" "$W" $sb > "$T/acpdaemon.out" 2>&1
	L() { sed -n "$1p" "$T/acpdaemon.out"; }
	jcheck "acp stdio${sb:+ $sb}: a program that leaves a daemon exits" "$(L 1)" 'j["result"]["exitCode"] == 0'
	jcheck "acp stdio${sb:+ $sb}: a killed terminal with a daemon is killed" "$(L 3)" '"result" in j and j["result"]["signal"] is not None'
	sleep 0.5
	for d in 71 72 73; do
		if pgrep -f "^sleep $d[.]25\$" >/dev/null; then
			fail "acp stdio${sb:+ $sb}: the daemon $d is gone (program ended, terminal killed, server ended)"
			pkill -9 -f "^sleep $d[.]25\$"
		else
			ok "acp stdio${sb:+ $sb}: the daemon $d is gone (program ended, terminal killed, server ended)"
		fi
	done
done
else
	ok "# SKIP terminals are held in a PID namespace only where wap can make one"
fi

# a terminal's program that hands its output to a process out of the
# terminal's reach (over a unix socket, sandboxed or not), which holds it
# and writes on: the terminal still exits with its program (the build
# before read on until the writer stopped, 20 s here)
cp "${PYTHONPATH%%:*}/fdholder.py" "$W/"
cat > "$T/acphold.py" <<'EOF2'
import json, os, subprocess, sys, time
from wapstdio import Stdio
sock = sys.argv[3]
holder = subprocess.Popen([sys.executable, "-m", "fdholder", "hold", sock, "20"])
while not os.path.exists(sock):
    time.sleep(0.05)
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2]] + sys.argv[4:])
call = s.call
r = call("terminal/create", sessionId="s", command="/usr/bin/python3",
         args=["fdholder.py", "hand", sock, "0.5"], outputByteLimit=1000)
t0 = time.time()
w = call("terminal/wait_for_exit", sessionId="s", terminalId=r["result"]["terminalId"])
w["seconds"] = time.time() - t0
print(json.dumps(w))
print(json.dumps(call("terminal/output", sessionId="s", terminalId=r["result"]["terminalId"])))
print(json.dumps({"status": s.close()}))
holder.kill()
EOF2
for sb in "" --no-sandbox; do
	rm -f "$W/acphold.sock"
	python3 "$T/acphold.py" "$WAP" "$W" "$W/acphold.sock" $sb > "$T/acphold.out" 2>&1
	L() { sed -n "$1p" "$T/acphold.out"; }
	jcheck "acp stdio${sb:+ $sb}: output handed out of reach: the terminal exits with its program" "$(L 1)" 'j["result"] == {"exitCode": 0, "signal": None} and j["seconds"] < 5'
	jcheck "acp stdio${sb:+ $sb}: and its output is bounded" "$(L 2)" 'len(j["result"]["output"]) <= 1000 and j["result"]["truncated"] is True'
	jcheck "acp stdio${sb:+ $sb}: the server ends cleanly" "$(L 3)" 'j["status"] == 0'
done
rm -f "$W/acphold.sock" "$W/fdholder.py"

# a sandboxed terminal's program does not find a unix socket its rules do
# not name (one beside the root), as a command does not: the same sandbox
cp "${PYTHONPATH%%:*}/unixsock.py" "$W/"
python3 "$W/unixsock.py" serve "$T/beside.sock" & bs=$!
wait_for 30 [ -S "$T/beside.sock" ]
cat > "$T/acpsock.py" <<'EOF2'
import json, sys
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2]] + sys.argv[4:])
r = s.call("terminal/create", sessionId="s", command="/usr/bin/python3",
           args=["unixsock.py", "connect", sys.argv[3]])
s.call("terminal/wait_for_exit", sessionId="s", terminalId=r["result"]["terminalId"])
print(json.dumps(s.call("terminal/output", sessionId="s", terminalId=r["result"]["terminalId"])))
s.close()
EOF2
for sb in "" --no-sandbox; do
	python3 "$T/acpsock.py" "$WAP" "$W" "$T/beside.sock" $sb > "$T/acpsock.out" 2>&1
	if [ -z "$sb" ]; then want="ENOENT"; else want="outside"; fi
	jcheck "acp stdio${sb:+ $sb}: a socket beside the root from a terminal: $want" "$(cat "$T/acpsock.out")" 'j["result"]["output"].strip().endswith(" '"$want"'")'
done
kill $bs; wait $bs 2>/dev/null
rm -f "$T/beside.sock" "$W/unixsock.py"

# a terminal's program gets neither of wap's tokens (sandboxed or not)
cat > "$T/acpenv.py" <<'EOF2'
import json, sys
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2]] + sys.argv[3:])
r = s.call("terminal/create", sessionId="s", command="sh", args=["-c", "env"])
tid = r["result"]["terminalId"]
s.call("terminal/wait_for_exit", sessionId="s", terminalId=tid)
print(json.dumps(s.call("terminal/output", sessionId="s", terminalId=tid)["result"]))
s.close()
EOF2
for sb in "" --no-sandbox; do
	OUT=$(WAP_GIT_TOKEN=ghp_s3cret WAP_TOKEN=tok_s3cret KEPT_VAR=kept python3 "$T/acpenv.py" "$WAP" "$W" $sb 2>&1)
	jcheck "acp stdio${sb:+ $sb}: a terminal's program has neither token" "$OUT" '"s3cret" not in j["output"] and "KEPT_VAR=kept" in j["output"]'
done

# --- beside --http, in the same process ---
HP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_ws both --http "127.0.0.1:$HP" --token-file "$T/both.token" --root "$W"
BOTH=$PID
jcheck "--http and --ws together: /health answers" \
	"$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$HP/health').read().decode())")" \
	'j["status"] == "ok"'
BT=$(cat "$T/both.token")
mcp_init() { curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$HP/mcp" -H 'content-type: application/json' "$@" \
	--data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'; }
same "--http and --ws together: one token, HTTP wants it too (401)" "$(mcp_init)" 401
same "--http and --ws together: the token of the token file opens HTTP" "$(mcp_init -H "authorization: Bearer $BT")" 200
has "--http and --ws together: the HTTP line names the same token file" "$(cat "$T/both.log")" "bearer token in $T/both.token"
rm -f "$W/shell.pid"
(tap shutdown "$PORT" "$(cat "$T/both.token")" "$W" > "$T/both.tap") &
CL=$!
for _ in $(seq 600); do grep -q READY "$T/both.tap" 2>/dev/null && break; sleep 0.1; done
shell=$(hostpid $(cat "$W/shell.pid" 2>/dev/null))
kill -TERM $BOTH
wait $CL
grep -v '^#' "$T/both.tap" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&with --http: /'
wait $BOTH; st=$?
same "--http and --ws: SIGTERM stops both, exit 0" "$st" 0
if [ -n "$shell" ] && ! kill -0 "$shell" 2>/dev/null; then ok "with --http: the terminal's shell was killed"; else fail "with --http: the terminal's shell ($shell) survived"; fi
# --- one server for both doors: one Host/Origin check, one message
# limit, one drain (and the protocol on the --http port too) ---
upgrade() {	# PORT [CURL ARGS]: the HTTP status of a WebSocket upgrade
	p=$1; shift
	curl -s -o /dev/null -m 3 -w '%{http_code}' "$@" -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
		-H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "http://127.0.0.1:$p/"
}
mkdir -p "$T/one/ws"
cat > "$T/one/config.json" <<'EOF'
{"agentControl": {"token": "one-token", "security": {"requireApproval": true}}}
EOF
cat > "$T/one/approve.sh" <<'EOF'
#!/bin/sh
cat > /dev/null
[ "$2" = slow.txt ] && sleep 1
exit 0
EOF
chmod +x "$T/one/approve.sh"
HP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_ws one --http "127.0.0.1:$HP" --config "$T/one/config.json" --token-file "$T/one/token" \
	--approver "$T/one/approve.sh \"\$@\"" --max-message 4096 --root "$T/one/ws"
ONE=$PID
same "one server: a WebSocket upgrade with a foreign Host is refused (403), as on HTTP" "$(upgrade "$PORT" -H 'Host: evil.example')" 403
same "one server: and on the --http port" "$(upgrade "$HP" -H 'Host: evil.example')" 403
same "one server: a foreign Origin is refused (403) on both ports" \
	"$(upgrade "$PORT" -H 'Origin: http://evil.example') $(upgrade "$HP" -H 'Origin: http://evil.example')" "403 403"
same "one server: HTTP refuses the foreign Host too" \
	"$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' -H 'authorization: Bearer one-token' -X POST --data-binary '{}' "http://127.0.0.1:$HP/mcp")" 403
tap hello "$HP" one-token "$T/one/ws" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&one server: the --http port speaks it too: /'
tap maxmsg "$PORT" one-token "$T/one/ws" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&one server: /'
# SIGTERM drains both doors at once: an HTTP call and a WebSocket call
# under way are answered, new requests on either are refused
mcp() {	# BODY [CURL ARGS]
	b=$1; shift
	curl -s -X POST "http://127.0.0.1:$HP/mcp" -H 'authorization: Bearer one-token' -H 'content-type: application/json' \
		-H 'accept: application/json, text/event-stream' --data-binary "$b" "$@"
}
SID=$(mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' -D - -o /dev/null | tr -d '\r' | sed -n 's/^mcp-session-id: //Ip')
mcp '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 2; echo drained"}}}' \
	-H "mcp-session-id: $SID" -o "$T/one/http.out" &
SLOWH=$!
(tap drain "$PORT" one-token "$T/one/ws" > "$T/one/drain.tap") &
CL=$!
for _ in $(seq 600); do grep -q READY "$T/one/drain.tap" 2>/dev/null && break; sleep 0.1; done
kill -TERM $ONE
sleep 0.2
same "one drain: /health is 503 while the calls run" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/health")" 503
wait $CL
grep -v '^#' "$T/one/drain.tap" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&one drain, WebSocket (an HTTP call under way): /'
wait $SLOWH
jcheck "one drain: the HTTP call under way got its whole result" "$(cat "$T/one/http.out")" \
	'j["id"]==7 and j["result"]["structuredContent"]["stdout"]=="drained\n"'
wait $ONE; st=$?
same "one drain: the server exits 0" "$st" 0
# --http and --ws on the same port: one listener serves both
SP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
wap serve --http "127.0.0.1:$SP" --ws "127.0.0.1:$SP" --token same-token --token-file "$T/same.token" --root "$W" 2>"$T/same.log" &
SPID=$!
for _ in $(seq 100); do grep -q 'MCP at' "$T/same.log" && break; sleep 0.1; done
has "one port for both: the protocol's line names it" "$(cat "$T/same.log")" "on ws://127.0.0.1:$SP "
same "one port for both: MCP answers there" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SP/health")" 200
tap hello "$SP" same-token "$W" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&one port for both: /'
kill -TERM $SPID; wait $SPID; st=$?
same "one port for both: exit 0 on SIGTERM" "$st" 0
wap serve --ws localhost:0 --token-file "$T/named.token" --root "$W" 2>"$T/named.log" &
PID=$!
wait_for 30 grep -q 'on ws://' "$T/named.log"
has "--ws localhost: a host name is resolved" "$(cat "$T/named.log")" "on ws://127.0.0.1:"
kill $PID; wait $PID

# --- command.* and the editor under policy: categories, read-only ---
mkdir -p "$T/cmdp/ws"
echo '{"security": {"allowedMethodCategories": ["command", "editor"], "readOnly": true}}' > "$T/cmdp/config.json"
start_ws cmdp --config "$T/cmdp/config.json" --token-file "$T/cmdp/token" --root "$T/cmdp/ws"
tap cmdpolicy "$PORT" "$(cat "$T/cmdp/token")" "$T/cmdp/ws"
kill $PID; wait $PID
# an op's category is its action's (wap.sym rename writes files: fs)
echo '{"security": {"allowedMethodCategories": ["state", "command"]}}' > "$T/cmdp/state.json"
start_ws cmdps --config "$T/cmdp/state.json" --token-file "$T/cmdp/token2" --root "$T/cmdp/ws"
tap catbyaction "$PORT" "$(cat "$T/cmdp/token2")" "$T/cmdp/ws"
kill $PID; wait $PID

# --- the document's own examples, replayed (tests/ws/doc-replay.js): a
# fixture workspace named like the document's, with the data its examples read ---
D="$T/doc/my-project"
mkdir -p "$D/src/lib"
printf 'export const app = 1;\n' > "$D/src/app.ts"
git -C "$D" init -q -b main && git -C "$D" config user.email t@example.com && git -C "$D" config user.name T
git -C "$D" add -A && git -C "$D" commit -qm fixture
start_ws doc --token-file "$T/doc.token" --root "$D"
node "$WSDIR/doc-replay.js" "$PORT" "$(cat "$T/doc.token")" "$D" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&document: /'
kill $PID; wait $PID
lacks "no sanitizer report from any server" "$(cat "$T"/*.log)" "Sanitizer"
lacks "no undefined behaviour reported by any server" "$(cat "$T"/*.log)" "runtime error"
