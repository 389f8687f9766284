# serve-http: MCP Streamable HTTP (`wap serve --http`): every status code,
# sessions, Host/Origin allow-lists, bearer tokens (generated when none is
# given, --no-auth only on loopback), refusals before the body is read,
# hostile clients (floods, slowloris) with flat memory, draining on
# SIGTERM, SSE progress, /health answered while calls run, and the same
# answers as the CLI and stdio.
. tests/lib.sh
export XDG_RUNTIME_DIR=$T	# where generated token files go
echo hello > "$W/a.txt"
mkdir -p "$W/sub" && echo 'int x;' > "$W/sub/b.c"
PIDS=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
# start LOG ARGS... : start a server on a free port, set $U, $SPID; with
# neither --token nor --no-auth (nor $WAP_TOKEN) the server makes a token
# and names its file: $TOK and $AUTH (curl arguments) carry it
start() {
	log=$1; shift
	case " $* " in
	*" --token "*|*" --no-auth "*|*" --token-file "*|*" --config "*) gen= ;;
	*) gen=${WAP_TOKEN:-1}; [ "$gen" = 1 ] || gen= ;;
	esac
	TOKFILE=
	wap serve --http 127.0.0.1:0 "$@" 2>"$log" &
	SPID=$!
	PIDS="$PIDS $SPID"
	for _ in $(seq 1 100); do
		port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$log" 2>/dev/null)
		[ -n "$port" ] && break
		sleep 0.05
	done
	U=http://127.0.0.1:$port
	AUTH=()
	TOK=
	if [ -n "$gen" ]; then
		TOKFILE=$(sed -n 's|^wap serve: bearer token in \([^ ]*\) .*|\1|p' "$log")
		TOK=$(cat "$TOKFILE" 2>/dev/null)
		AUTH=(-H "authorization: Bearer $TOK")
	fi
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
# post BODY [CURL ARGS...]: status in $CODE, headers in $T/h, body in $BODY
post() {
	b=$1; shift
	CODE=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST "$U/mcp" "${AUTH[@]}" \
		-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' "$@" --data-binary "$b")
	BODY=$(cat "$T/b")
}
start "$T/s1.log" --audit "$T/audit.jsonl"
check "server started and said where" test -n "$port"
# no token given: one is made, written 0600 outside the root, and only
# its file is named
same "a generated token is in \$XDG_RUNTIME_DIR/wap-http-PORT.token" "$TOKFILE" "$T/wap-http-$port.token"
same "the token file is mode 0600" "$(stat -c %a "$TOKFILE" 2>/dev/null)" 600
jcheck "the token is 64 hex digits" "\"$TOK\"" 'len(j) == 64 and all(c in "0123456789abcdef" for c in j)'
lacks "the generated token is not printed" "$(cat "$T/s1.log")" "$TOK"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'content-type: application/json' --data-binary "$INIT")
same "without the generated token: 401" "$CODE" 401

CODE=$(curl -s -o "$T/b" -w '%{http_code}' "$U/health"); BODY=$(cat "$T/b")
same "GET /health is 200" "$CODE" 200
jcheck "/health body" "$BODY" 'j=={"status":"ok","service":"wap","version":j["version"]} and j["version"]'
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/health" -d x)
same "POST /health is 405" "$CODE" 405
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/nope")
same "unknown path is 404" "$CODE" 404

post "$INIT"
same "initialize is 200" "$CODE" 200
SID=$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')
check "initialize issues Mcp-Session-Id" test ${#SID} -ge 32
jcheck "initialize negotiates the version" "$BODY" 'j["result"]["protocolVersion"]=="2025-06-18"'
S="-H mcp-session-id:$SID"
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' $S
same "a notification is 202" "$CODE" 202
same "202 has no body" "$BODY" ""
post '{"jsonrpc":"2.0","id":9,"result":{}}' $S
same "a response is 202" "$CODE" 202
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
same "no session id is 400" "$CODE" 400
jcheck "400 carries a JSON-RPC error" "$BODY" 'j["error"]["code"]==-32600 and "Mcp-Session-Id" in j["error"]["message"]'
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' -H 'mcp-session-id: 0123456789abcdef0123456789abcdef'
same "unknown session is 404" "$CODE" 404
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' $S
same "tools/list in the session is 200" "$CODE" 200
jcheck "tools/list over HTTP lists read" "$BODY" '"read" in [t["name"] for t in j["result"]["tools"]]'
post '{"jsonrpc":"2.0","id":3,"method":"ping"}' $S -H 'mcp-protocol-version: 2025-06-18'
same "a supported MCP-Protocol-Version is accepted" "$CODE" 200
post '{"jsonrpc":"2.0","id":3,"method":"ping"}' $S -H 'mcp-protocol-version: 1999-01-01'
same "an unsupported MCP-Protocol-Version is 400" "$CODE" 400
post '{"jsonrpc":"2.0","id":3,' $S
same "a parse error is 400" "$CODE" 400
jcheck "with -32700" "$BODY" 'j["error"]["code"]==-32700'
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" "${AUTH[@]}" $S -H 'content-type: text/plain' -d '{"jsonrpc":"2.0","id":3,"method":"ping"}')
same "a wrong Content-Type is 415" "$CODE" 415
head -c 70000 /dev/zero | tr '\0' x > "$T/big"
post "@$T/big" $S
same "a message under the limit that is not JSON is 400" "$CODE" 400
post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' $S
same "tools/call is 200" "$CODE" 200
jcheck "tools/call result" "$BODY" 'j["result"]["structuredContent"]["content"]=="hello\n" and j["result"]["isError"] is False'
post '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"path":"../x"}}}' $S
jcheck "tool failure is a result with isError" "$BODY" 'j["result"]["isError"] is True and "ACCESS_DENIED" in j["result"]["content"][0]["text"]'
post '[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"info"}}]' $S
jcheck "a batch is answered with an array" "$BODY" 'sorted(r["id"] for r in j)==[6,7]'
# a batch's replies are held to 8 MiB: 40 reads of 1 MiB in base64 (2.8 MB
# a reply) were 112 MB of reply (fifth hostile review); the requests past
# the cap are answered SIZE_LIMIT_EXCEEDED, not run
head -c $((1 << 20)) /dev/urandom > "$W/rand.bin"
python3 -c 'import json; print(json.dumps([{"jsonrpc": "2.0", "id": i, "method": "tools/call",
	"params": {"name": "read", "arguments": {"path": "rand.bin", "encoding": "base64"}}} for i in range(40)]))' > "$T/batch.json"
post "@$T/batch.json" $S
same "a batch of 40 base64 reads of 1 MiB is 200" "$CODE" 200
jcheck "its replies: the first reads whole, the rest past 8 MiB refused, in order" "$BODY" '(lambda ok, no:
	len(j) == 40 and 2 <= len(ok) <= 8 and len(ok) + len(no) == 40 and
	[r["id"] for r in j] == list(range(40)) and
	all(r["error"]["code"] == -32602 and "Batch too large" in r["error"]["message"] for r in no) and
	all(r["id"] > max(o["id"] for o in ok) for r in no))(
	[r for r in j if "result" in r and not r["result"]["isError"]], [r for r in j if "error" in r])'
same "the batch's reply is bounded" "$(( ${#BODY} < 16 * 1048576 ))" 1
rm -f "$W/rand.bin"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/mcp" "${AUTH[@]}" $S)
same "GET /mcp is 405" "$CODE" 405
CODE=$(curl -s -D "$T/h" -o /dev/null -w '%{http_code}' "$U/mcp" "${AUTH[@]}" $S)
check "405 carries Allow" grep -qi '^allow: POST, DELETE' "$T/h"

# SSE when the call asks for progress
post '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 1.3; echo fin"},"_meta":{"progressToken":42}}}' $S
same "progress call is 200" "$CODE" 200
check "as text/event-stream" grep -qi '^content-type: text/event-stream' "$T/h"
has "SSE carries notifications/progress" "$BODY" 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":42'
has "then the result" "$BODY" '"id":8,"result"'

# /health and other calls are answered while a call runs
post '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 2"}}}' $S &
bg=$!
sleep 0.3
t0=$(date +%s%N)
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
post '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' $S
t1=$(date +%s%N)
running=$(kill -0 $bg 2>/dev/null && echo running)
same "/health during a long call" "$CODE" 200
has "the read answered during it" "$BODY" '"id":11,"result"'
# answered before the exec's reply (a loaded machine may take a second
# or more for the two curls, never the exec's 2 s on top)
same "health and the read answered while exec sleeps ($(( (t1 - t0) / 1000000 )) ms)" "$running" running
wait $bg

# several calls run at once (the worker pool)
t0=$(date +%s%N)
cpids=
for i in 1 2 3; do
	curl -s -o /dev/null -X POST "$U/mcp" "${AUTH[@]}" -H 'content-type: application/json' $S \
		-d '{"jsonrpc":"2.0","id":2'$i',"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 1"}}}' &
	cpids="$cpids $!"
done
for p in $cpids; do wait "$p"; done
t1=$(date +%s%N)
check "three 1 s calls at once take under 2.5 s" test $(( (t1 - t0) / 1000000 )) -lt 2500

# cancellation over HTTP
post '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 30"}}}' $S &
bg=$!
sleep 0.3
post '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}' $S
same "notifications/cancelled is 202" "$CODE" 202
t0=$(date +%s)
wait $bg
check "the cancelled exec stopped at once" test $(( $(date +%s) - t0 )) -lt 5

# DNS rebinding protection
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Host: evil.example'
same "a foreign Host is 403" "$CODE" 403
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Host: localhost:1234'
same "Host localhost:any is allowed" "$CODE" 200
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Host: [::1]:99'
same "Host [::1]:any is allowed" "$CODE" 200
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Origin: http://evil.example'
same "a foreign Origin is 403" "$CODE" 403
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Origin: null'
same "Origin null is 403" "$CODE" 403
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Origin: http://localhost:3000'
same "a loopback Origin is allowed" "$CODE" 200
post '{"jsonrpc":"2.0","id":1,"method":"ping"}' $S -H 'Host: 127.0.0.1.evil.example'
same "a Host that only starts like loopback is 403" "$CODE" 403

# DELETE ends the session
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$U/mcp" "${AUTH[@]}")
same "DELETE without a session is 400" "$CODE" 400
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$U/mcp" "${AUTH[@]}" $S)
same "DELETE ends the session (200)" "$CODE" 200
post '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' $S
same "the ended session is 404" "$CODE" 404
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$U/mcp" "${AUTH[@]}" $S)
same "DELETE of an unknown session is 404" "$CODE" 404

AUD=$(cat "$T/audit.jsonl")
has "HTTP calls are audited with their session" "$AUD" "\"session\":\"$SID\""

# the size limit
start "$T/s2.log" --max-message 2048
post "$INIT"
S2="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
post "@$T/big" $S2
same "a message over --max-message is 413" "$CODE" 413

# idle sessions expire
# (3 s idle, one used every 0.4 s: on a loaded machine a call of curl took
# over a second, and a 1 s idle expired the session in use)
WAP_MCP_SESSION_IDLE=3 start "$T/s7.log"
post "$INIT"
S7="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
post '{"jsonrpc":"2.0","id":2,"method":"ping"}' $S7
same "a fresh session answers" "$CODE" 200
post "$INIT"
S7b="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
inuse=200
for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do	# one used all along, the other idle
	sleep 0.4
	post '{"jsonrpc":"2.0","id":3,"method":"ping"}' $S7b
	[ "$CODE" = 200 ] || inuse=$CODE
done
post '{"jsonrpc":"2.0","id":2,"method":"ping"}' $S7
same "an expired session is 404" "$CODE" 404
same "a session in use all along does not expire" "$inuse" 200
post '{"jsonrpc":"2.0","id":3,"method":"ping"}' $S7b
same "a session in use is still there after another expired" "$CODE" 200

# tokens and widened allow-lists
start "$T/s3.log" --token s3cret --allowed-hosts myhost.lan,other.lan --allowed-origins https://app.example
post "$INIT"
same "no token is 401" "$CODE" 401
check "401 says Bearer" grep -qi '^www-authenticate: Bearer' "$T/h"
post "$INIT" -H 'Authorization: Bearer wrong'
same "a wrong token is 401" "$CODE" 401
post "$INIT" -H 'Authorization: Bearer s3cret'
same "the right token is 200" "$CODE" 200
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
same "/health needs no token" "$CODE" 200
post "$INIT" -H 'Authorization: Bearer s3cret' -H 'Host: myhost.lan:8080'
same "--allowed-hosts widens Host" "$CODE" 200
post "$INIT" -H 'Authorization: Bearer s3cret' -H 'Origin: https://app.example'
same "--allowed-origins widens Origin" "$CODE" 200
post "$INIT" -H 'Authorization: Bearer s3cret' -H 'Origin: http://app.example'
same "but only that origin" "$CODE" 403
WAP_TOKEN=envtok start "$T/s4.log"
post "$INIT"
same "WAP_TOKEN also requires a token" "$CODE" 401
post "$INIT" -H 'Authorization: Bearer envtok'
same "WAP_TOKEN's token is accepted" "$CODE" 200
lacks "the token is never logged" "$(cat "$T"/s*.log "$T/audit.jsonl")" "s3cret"

expect "a bad --http is a usage error" 2 wap serve --http nonsense
has "says what it wants" "$ERR" "HOST:PORT"

# ---- same answer on every door: CLI --json, stdio, HTTP ----
start "$T/s5.log" --no-auth
python3 tests/serve/doors.py "$WAP" "$W" "$U" > "$T/doors" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "doors: ${line#ok * - }" ;;
	"not ok "*) fail "doors: ${line#not ok * - }" ;;
	*) echo "# $line" ;;
	esac
done < "$T/doors"

# hostile HTTP and WebSocket traffic from a fixed seed, at a server of its
# own: alive, /health, a call on each door, sane replies, SIGTERM exit 0
python3 tests/serve/httpfuzz.py "$WAP" > "$T/fuzz" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "http fuzz: ${line#ok * - }" ;;
	"not ok "*) fail "http fuzz: ${line#not ok * - }" ;;
	*) echo "# $line" ;;
	esac
done < "$T/fuzz"
check "http fuzz ran to its end" grep -q '^# [0-9.]* s, seed' "$T/fuzz"

# ---- --roots-from-client over HTTP: roots/list on the SSE reply ----
start "$T/s8.log" --roots-from-client
RINIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}'
post "$RINIT"
S8="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
post '{"jsonrpc":"2.0","method":"notifications/initialized"}' $S8
same "roots: initialized is 202" "$CODE" 202
# stream ARGS... : POST $1 in the background, the reply into $T/sse, headers $T/hs
stream() {
	b=$1; shift
	: > "$T/sse"
	curl -s -N -D "$T/hs" -o "$T/sse" -X POST "$U/mcp" "${AUTH[@]}" -H 'content-type: application/json' \
		-H 'accept: application/json, text/event-stream' "$@" --data-binary "$b" &
	SPID=$!
	wait_for 30 grep -q 'roots/list' "$T/sse"
	RID=$(sed -n 's/.*"id":"\(wap-roots-[0-9]*\)".*/\1/p' "$T/sse" | head -1)
}
stream '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"b.c"}}}' $S8
has "roots: the first event asks roots/list" "$(head -2 "$T/sse")" '"method":"roots/list"'
check "roots: the request has an id" test -n "$RID"
post '{"jsonrpc":"2.0","id":"'"$RID"'","result":{"roots":[{"uri":"file://'"$W"'/sub","name":"sub"}]}}' $S8
same "roots: POSTing the answer is 202" "$CODE" 202
wait $SPID
check "roots: the reply is text/event-stream" grep -qi '^content-type: text/event-stream' "$T/hs"
R=$(sed -n 's/^data: //p' "$T/sse" | sed -n 2p)
jcheck "roots: the call's result follows on the stream, in the narrowed root" "$R" \
	'j["id"]==2 and j["result"]["isError"] is False and j["result"]["structuredContent"]["content"]=="int x;\n"'
same "roots: two events, then the stream ends" "$(grep -c '^data: ' "$T/sse")" 2
post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"../a.txt"}}}' $S8
check "roots: once known, replies are plain JSON" grep -qi '^content-type: application/json' "$T/h"
jcheck "roots: an escape above the narrowed root is refused" "$BODY" \
	'j["id"]==3 and j["result"]["isError"] is True and "ACCESS_DENIED" in j["result"]["content"][0]["text"]'
post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"sub/b.c"}}}' $S8
jcheck "roots: paths are relative to the narrowed root" "$BODY" 'j["result"]["isError"] is True and "NOT_FOUND" in j["result"]["content"][0]["text"]'
post '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}' $S8
same "roots: list_changed is 202" "$CODE" 202
stream '{"jsonrpc":"2.0","id":5,"method":"tools/list"}' $S8
has "roots: after list_changed the next request asks again" "$(head -2 "$T/sse")" '"method":"roots/list"'
post '{"jsonrpc":"2.0","id":"'"$RID"'","result":{"roots":[{"uri":"file:///"}]}}' $S8
same "roots: the second answer is 202" "$CODE" 202
wait $SPID
has "roots: tools/list answered on the stream" "$(cat "$T/sse")" '"id":5,"result":{"tools"'
post '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"path":"b.c"}}}' $S8
jcheck "roots: a root outside the workspace does not widen" "$BODY" \
	'j["result"]["structuredContent"]["content"]=="int x;\n"'
# a client that never answers: the call runs after the wait, un-narrowed
post "$RINIT"
S9="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
t0=$(date +%s%N)
stream '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' $S9
wait $SPID
t1=$(date +%s%N)
has "roots: unanswered, the stream still asked" "$(head -2 "$T/sse")" '"method":"roots/list"'
R=$(sed -n 's/^data: //p' "$T/sse" | sed -n 2p)
jcheck "roots: unanswered, the call runs in the whole root" "$R" 'j["id"]==2 and j["result"]["structuredContent"]["content"]=="hello\n"'
check "roots: after a wait of about 2 s" test $(( (t1 - t0) / 1000000 )) -ge 1500
# a client without the roots capability: plain JSON as before
post "$INIT"
S10="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' $S10
check "roots: no capability, plain JSON" grep -qi '^content-type: application/json' "$T/h"
jcheck "roots: no capability, the whole root" "$BODY" 'j["result"]["structuredContent"]["content"]=="hello\n"'
# without --roots-from-client the capability changes nothing
start "$T/s9.log"
post "$RINIT"
S11="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' $S11
check "roots: not asked without --roots-from-client" grep -qi '^content-type: application/json' "$T/h"
# each narrowed root holds a descriptor: under a low limit, sessions past
# what it allows are let go (least recently used first), so 130 sessions
# narrowed do not leave every grep and glob "Too many open files"
mkdir -p "$T/rfd/sub" && echo x > "$T/rfd/sub/f"
(ulimit -n 128 && exec wap serve --http 127.0.0.1:0 --root "$T/rfd" --token rfdtok --roots-from-client) 2>"$T/s12.log" &
RPID=$!
PIDS="$PIDS $RPID"
wait_for 5 grep -q 'http://127.0.0.1:[0-9]*/mcp' "$T/s12.log"
rport=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/s12.log")
python3 tests/serve/rootsfd.py "$rport" "$RPID" rfdtok "$T/rfd" 130 > "$T/rootsfd" 2>&1
tap_in "roots: " "$T/rootsfd"

# ---- resources/list and resources/read run on a worker, not on the server's thread ----
mkdir -p "$T/rl"
wap serve --http 127.0.0.1:0 --root "$T/rl" --token rltok 2>"$T/s14.log" &
LPID=$!
PIDS="$PIDS $LPID"
wait_for 5 grep -q 'http://127.0.0.1:[0-9]*/mcp' "$T/s14.log"
lport=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/s14.log")
python3 tests/serve/reslist.py "$lport" rltok "$T/rl" > "$T/reslist" 2>&1
tap_in "resources: " "$T/reslist"
kill "$LPID"

# ---- a batch stops with its session (DELETE) ----
mkdir -p "$T/be"
wap serve --http 127.0.0.1:0 --root "$T/be" --token betok 2>"$T/s15.log" &
BPID=$!
PIDS="$PIDS $BPID"
wait_for 5 grep -q 'http://127.0.0.1:[0-9]*/mcp' "$T/s15.log"
bport=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/s15.log")
python3 tests/serve/batchend.py "$bport" betok "$T/be" > "$T/batchend" 2>&1
tap_in "batch: " "$T/batchend"
kill "$BPID"

# ---- terminals (--profile acp): held in all the sessions together ----
mkdir -p "$T/tall"
WAP_TERMS_MAX=4 wap serve --http 127.0.0.1:0 --root "$T/tall" --token talltok --profile acp 2>"$T/s13.log" &
TPID=$!
PIDS="$PIDS $TPID"
wait_for 5 grep -q 'http://127.0.0.1:[0-9]*/mcp' "$T/s13.log"
tport=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/s13.log")
python3 tests/serve/termsall.py "$tport" talltok > "$T/termsall" 2>&1
tap_in "terminals: " "$T/termsall"
kill "$TPID"

# ---- what the server holds for all its clients at once: replies not read, bodies half in ----
python3 tests/serve/heldhttp.py "$WAP" "$T/held" > "$T/heldhttp" 2>&1
tap_in "held: " "$T/heldhttp"

# ---- never an open door ----
expect "--no-auth off loopback is refused" 2 timeout 5 wap serve --http 0.0.0.0:0 --no-auth
has "it says why" "$ERR" "loopback"
expect "a token file inside the root is refused" 2 timeout 5 wap serve --http 127.0.0.1:0 --token-file "$W/tok"
has "it says why" "$ERR" "inside the workspace root"
check "and the token is not written there" test ! -e "$W/tok"
ln -s "$W" "$T/alias"
expect "nor through a symlink to a directory beneath the root" 2 timeout 5 wap serve --http 127.0.0.1:0 --token-file "$T/alias/sub/tok"
check "and the token is not written there either" test ! -e "$W/sub/tok"
expect "--no-auth is for --http only" 2 timeout 5 wap serve --no-auth </dev/null
start "$T/s10.log" --no-auth
post "$INIT"
same "--no-auth on loopback: no token needed" "$CODE" 200
has "--no-auth says so on stderr" "$(cat "$T/s10.log")" "no authentication"
# a request a browser sends with no preflight (a "simple" one: POST with no
# Content-Type, a Blob body, or text/plain, or a form) is never run: only
# the Origin check stood in its way, and it lets loopback pages of any port
# through, so a page on localhost:3000 drove a --no-auth server of a
# stateless profile (tools/call, no session header needed; tenth hostile
# review)
start "$T/s10b.log" --no-auth --profile langop
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
for ct in "" "text/plain" "application/x-www-form-urlencoded" "multipart/form-data; boundary=x"; do
	CODE=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/mcp" -H 'Origin: http://localhost:3000' \
		-H "content-type: $ct" --data-binary "$LIST")
	same "a simple request (Content-Type [$ct]) from a loopback page is 415" "$CODE" 415
	lacks "...and not run" "$(cat "$T/b")" '"tools"'
done
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'content-type: application/json; charset=utf-8' --data-binary "$LIST")
same "application/json with a charset is taken" "$CODE" 200
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'content-type: application/jsonx' --data-binary "$LIST")
same "application/jsonx is not application/json" "$CODE" 415
start "$T/s11.log" --token-file "$T/given.token"
TOK=$(cat "$T/given.token" 2>/dev/null); AUTH=(-H "authorization: Bearer $TOK")
has "--token-file is named on stderr" "$(cat "$T/s11.log")" "token in $T/given.token"
post "$INIT"
same "the token written to --token-file is the one" "$CODE" 200
mkdir -p "$T/cfg"
echo '{"agentControl": {"token": "cfgtok", "allowedOrigins": ["https://cfg.example"]}}' > "$T/cfg/c.json"
start "$T/s12.log" --config "$T/cfg/c.json"
post "$INIT"
same "with the config's token set, none is 401" "$CODE" 401
AUTH=(-H "authorization: Bearer cfgtok")
post "$INIT"
same "the config's token is the HTTP token too" "$CODE" 200
post "$INIT" -H 'Origin: https://cfg.example'
same "the config's allowedOrigins widen HTTP's Origin check too" "$CODE" 200
post "$INIT" -H 'Origin: http://evil.example'
same "but a foreign Origin is still 403" "$CODE" 403
AUTH=()

# ---- hostile clients: refused from the headers, memory flat ----
start "$T/s13.log" --token floodtok --max-message 1048576
python3 tests/serve/flood.py 127.0.0.1 "$port" "$SPID" floodtok 1048576 > "$T/flood" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "flood: ${line#ok * - }" ;;
	"not ok "*) fail "flood: ${line#not ok * - }" ;;
	*) echo "$line" ;;
	esac
done < "$T/flood"
WAP_HTTP_BODY_TIMEOUT=2 start "$T/s14.log" --token slowtok
python3 - "$port" > "$T/slow" <<'PY'
import socket, sys, threading, time
port = int(sys.argv[1])
def run(kind):
    s = socket.create_connection(("127.0.0.1", port))
    t0 = time.time()
    if kind == "body":   # authenticated, the body a byte every 0.2 s
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Authorization: Bearer slowtok\r\nContent-Length: 1000\r\n\r\n")
        data = b" " * 1000
    else:                # slowloris: headers that never end
        data = b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-a: " + b"a" * 1000
    try:
        for b in data:
            s.sendall(bytes([b]))
            time.sleep(0.2)
            if time.time() - t0 > 30:
                break
        print(kind, 99)
    except OSError:
        print(kind, int(time.time() - t0))
ts = [threading.Thread(target=run, args=(k,)) for k in ("body", "head")]
[t.start() for t in ts]
[t.join() for t in ts]
PY
b=$(sed -n 's/^body //p' "$T/slow"); hd=$(sed -n 's/^head //p' "$T/slow")
check "a body trickled byte by byte is cut at the body timeout (${b}s)" test "${b:-99}" -le 5
check "headers trickled byte by byte are cut after 10 s (${hd}s)" test "${hd:-99}" -le 15

# requests pipelined on one connection (the next sent before the reply):
# the first answered, the connection closed, and no loop left behind
# (libwebsockets handed the next request back as the first's body
# completion, forever, the server spinning at 100% CPU); GETs are all
# answered in turn; a POST behind a GET is refused saying why, not misread
# (libwebsockets gave it its own header bytes as its body).  Answering
# pipelined POSTs is not done: README "Not done yet" says why
start "$T/s17.log" --no-auth
python3 - "$port" "$SPID" > "$T/pipe" <<'PY'
import json, socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def req(body, sid=None):
    b = json.dumps(body).encode()
    h = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n"
    if sid:
        h += "mcp-session-id: %s\r\n" % sid
    return (h + "content-length: %d\r\n\r\n" % len(b)).encode() + b
def drain(s):
    got = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            got += c
    except socket.timeout:
        got += b"<hung>"
    return got
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(10)
s.sendall(req({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
d = b""
while b"\r\n\r\n" not in d:
    d += s.recv(65536)
h = d.split(b"\r\n\r\n")[0].decode().lower()
sid = [l.split(":", 1)[1].strip() for l in h.split("\r\n") if l.startswith("mcp-session-id")][0]
s.close()
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(10)
s.sendall(b"".join(req({"jsonrpc": "2.0", "id": i, "method": "ping"}, sid) for i in (1, 2, 3)))
got = drain(s)
if got.endswith(b"<hung>"):
    print("hung")
print("first answered" if b'"id":1' in got else "first not answered")
s.close()
# GETs pipelined: every one answered, in turn
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(3)
s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3)
got = drain(s)
print("gets:", got.count(b"HTTP/1.1 200"), got.count(b'"status":"ok"'))
s.close()
# a POST pipelined behind a GET: answered, or refused saying why; never
# read wrong (libwebsockets handed it its own header bytes as its body)
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(3)
s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + req({"jsonrpc": "2.0", "id": 7, "method": "ping"}, sid))
got = drain(s).decode(errors="replace")
print("post behind get:", "answered" if '"id":7,"result"' in got else
      "refused, saying why" if "pipelined" in got and "Parse error" not in got else "misread: " + got[-200:].replace("\r\n", " "))
s.close()
# the same in another spelling ("post": libwebsockets takes methods in any
# case), and with a body past what one read takes in (libwebsockets freed
# the buffer under the rest of the body: ASan saw wap copy it, a
# heap-use-after-free; tests/serve/httpfuzz.py found it); each refused
# saying why, and the server goes on
for name, method, n in (("lower case", b"post", 10), ("a body of 200 KB", b"POST", 200000),
                        ("lower case, 200 KB", b"pOsT", 200000)):
    b = req({"jsonrpc": "2.0", "id": 8, "method": "ping", "pad": "x" * n}, sid).replace(b"POST", method, 1)
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(3)
    try:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + b)
        got = drain(s).decode(errors="replace")
    except OSError as e:
        got = str(e)
    print("post behind get, %s:" % name, "answered" if '"id":8,"result"' in got else
          "refused, saying why" if "pipelined" in got and "Parse error" not in got else "misread: " + got[-200:].replace("\r\n", " "))
    s.close()
c0 = cpu(); time.sleep(1); print("cpu ticks in 1 s:", cpu() - c0)
PY
has "pipelined requests: the first is answered" "$(cat "$T/pipe")" "first answered"
same "pipelined GETs: every one answered" "$(sed -n 's/^gets: //p' "$T/pipe")" "3 3"
check "a POST pipelined behind a GET: answered or refused saying why" grep -qE '^post behind get: (answered|refused, saying why)$' "$T/pipe"
lacks "a POST pipelined behind a GET: not misread" "$(sed -n 's/^post behind get: //p' "$T/pipe")" "misread"
for v in "lower case" "a body of 200 KB" "lower case, 200 KB"; do
	check "a POST pipelined behind a GET, $v: answered or refused saying why" \
		grep -qE "^post behind get, $v: (answered|refused, saying why)\$" "$T/pipe"
done
check "pipelined requests: the server is alive" kill -0 "$SPID"
lacks "pipelined requests: the connection does not hang" "$(cat "$T/pipe")" "hung"
ticks=$(sed -n 's/^cpu ticks in 1 s: //p' "$T/pipe")
check "pipelined requests: no loop left spinning (${ticks:-?} ticks of CPU in 1 s)" test "${ticks:-99}" -le 10
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
same "pipelined requests: the server still answers" "$CODE" 200

# Slots cannot be held by connections that never send a request: when
# all are taken, a new connection pushes out the one idle the longest
# (never a request under way), so a flood of half-open connections that
# reconnect as they are dropped leaves room for the clients with the token.
start "$T/s16.log" --token slottok --max-connections 5
# a token given on the command line is wiped from it: /proc/PID/cmdline
# is readable by every process of the user, the commands wap runs too
lacks "--token: not in /proc/PID/cmdline once read" "$(tr '\0' ' ' < /proc/$SPID/cmdline)" "slottok"
has "--token: x's in its place" "$(tr '\0' ' ' < /proc/$SPID/cmdline)" "--token xxxxxxx"
python3 - "$port" > "$T/mc" <<'PY'
import json, socket, sys, threading, time, urllib.request
port = int(sys.argv[1])
def req(path="/health", body=None, timeout=5):
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body,
        headers={"Authorization": "Bearer slottok", "Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream"})
    return urllib.request.urlopen(r, timeout=timeout)
held = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
time.sleep(0.3)
try:
    print("sixth", req().status)
except OSError as e:
    print("sixth refused", e)
gone = []
for i, h in enumerate(held):
    h.settimeout(0.5)
    try:
        if h.recv(1) == b"":
            gone.append(i)
    except socket.timeout:
        pass
    except OSError:
        gone.append(i)
print("oldest closed", gone)
# a call under way is not pushed out
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
       "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
r = req("/mcp", init)
sid = r.headers["mcp-session-id"]
out = {}
def slow():
    rq = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=json.dumps({"jsonrpc": "2.0", "id": 2,
         "method": "tools/call", "params": {"name": "exec", "arguments": {"command": "sleep 1; echo held"}}}).encode(),
         headers={"Authorization": "Bearer slottok", "Content-Type": "application/json", "mcp-session-id": sid,
                  "Accept": "application/json, text/event-stream"})
    try:
        out["slow"] = urllib.request.urlopen(rq, timeout=10).read().decode()
    except OSError as e:
        out["slow"] = "lost: %s" % e
t = threading.Thread(target=slow)
t.start()
time.sleep(0.2)
# the flood: half-open connections, each made again as soon as it is dropped
stop = False
def flood():
    socks = []
    while not stop:
        try:
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        except OSError:
            pass
        if len(socks) > 40:
            socks.pop(0).close()
        time.sleep(0.002)
    for s in socks:
        s.close()
f = threading.Thread(target=flood)
f.start()
time.sleep(0.3)
ok = 0
for _ in range(20):
    try:
        ok += req(timeout=3).status == 200
    except OSError:
        pass
stop = True
f.join()
t.join()
print("answered under the flood", ok)
print("call under way", "kept" if "held" in out["slow"] else out["slow"])
print("after", req().status)
PY
has "--max-connections 5, all held half-open: a client with the token is answered" "$(cat "$T/mc")" "sixth 200"
has "--max-connections 5: the connection idle the longest is the one closed" "$(cat "$T/mc")" "oldest closed [0]"
has "a flood of half-open connections: the client with the token is answered every time" "$(cat "$T/mc")" "answered under the flood 20"
has "a flood of half-open connections: a call under way is not pushed out" "$(cat "$T/mc")" "call under way kept"
has "after the flood, connections are accepted again" "$(cat "$T/mc")" "after 200"

# ---- SIGTERM drains: the call under way is answered, new ones are not ----
start "$T/s15.log" --token draintok
AUTH=(-H "authorization: Bearer draintok")
post "$INIT"
SD="-H mcp-session-id:$(tr -d '\r' < "$T/h" | sed -n 's/^mcp-session-id: //Ip')"
curl -s -o "$T/drain.out" -X POST "$U/mcp" "${AUTH[@]}" -H 'content-type: application/json' $SD \
	--data-binary '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 1; echo drained"}}}' &
bg=$!
sleep 0.3
kill -TERM "$SPID"
sleep 0.1
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$U/health")
same "draining: /health is 503" "$CODE" 503
post '{"jsonrpc":"2.0","id":3,"method":"ping"}' $SD
case $CODE in 503|000) ok "draining: a new request is refused ($CODE)" ;; *) fail "draining: a new request got $CODE" ;; esac
wait $bg
jcheck "draining: the call under way got its whole result" "$(cat "$T/drain.out")" \
	'j["id"]==2 and j["result"]["structuredContent"]["stdout"]=="drained\n"'
wait "$SPID"; st=$?
PIDS=${PIDS% $SPID}
same "draining: then the server exits 0" "$st" 0
AUTH=()

# clean shutdown on SIGTERM; under ASan, no leak and no error in any server
for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
st=0
for p in $PIDS; do wait "$p" || st=$?; done
PIDS=
same "servers exit 0 on SIGTERM" "$st" 0
lacks "no sanitizer report from the servers" "$(cat "$T"/s*.log)" "Sanitizer"
