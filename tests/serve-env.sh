# serve-env: `wap serve` configured from the environment, as a container
# is (PORT, WAP_HTTP, WAP_PROFILE, WAP_ALLOWED_HOSTS, LOG_LEVEL), and a port
# it cannot bind is a clear error with a non-zero exit, never a server
# that says it serves and serves nothing.
. tests/lib.sh
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan-lws.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
echo hello > "$W/a.txt"
unset PORT WAP_HTTP WAP_PROFILE WAP_ALLOWED_HOSTS WAP_ALLOWED_ORIGINS LOG_LEVEL WAP_TOKEN
# the generated tokens' files go here, not to ~/.cache
export XDG_RUNTIME_DIR=$T/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
PIDS=
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# bg LOG CMD...: start CMD in the background, wait for its "MCP at" line
bg() {
	log=$1; shift
	: > "$log"
	"$@" 2>"$log" &
	PIDS="$PIDS $!"
	for _ in $(seq 1 100); do
		grep -q 'MCP at' "$log" && break
		sleep 0.05
	done
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
mcp() { # URL BODY [CURL ARGS...]
	u=$1 b=$2; shift 2
	curl -s -X POST "$u/mcp" -H 'content-type: application/json' -H "Authorization: Bearer $TOK" \
		-H 'accept: application/json, text/event-stream' "$@" --data-binary "$b"
}
session() { # URL: initialize, then print the Mcp-Session-Id
	curl -s -o /dev/null -D "$T/sh" -X POST "$1/mcp" -H 'content-type: application/json' -H "Authorization: Bearer $TOK" \
		-H 'accept: application/json, text/event-stream' --data-binary "$INIT"
	sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([^\r]*\).*/\1/p' "$T/sh"
}

# ---- a port that cannot be bound ----
# the holder picks the port itself: a port found free and bound a moment
# later can meanwhile become some connection's local port (busy machine)
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' > "$T/held" &
HOLD=$!
PIDS="$PIDS $HOLD"
P=
for _ in $(seq 100); do P=$(cat "$T/held"); [ -n "$P" ] && break; sleep 0.1; done
expect "port in use: exit 125" 125 timeout 10 wap serve --http 127.0.0.1:$P
has "port in use: says so" "$ERR" "cannot listen on 127.0.0.1:$P: Address already in use"
lacks "port in use: no 'MCP at' line" "$ERR" "MCP at"
expect "port in use on 0.0.0.0: exit 125" 125 timeout 10 wap serve --http 0.0.0.0:$P
kill "$HOLD" 2>/dev/null; wait "$HOLD" 2>/dev/null
if [ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null || echo 1024)" -le 80 ]; then
	ok "non-root on port 80 # SKIP net.ipv4.ip_unprivileged_port_start lets anyone bind 80"
elif ! command -v setpriv >/dev/null; then
	ok "non-root on port 80 # SKIP no setpriv to drop root"
else
	# a copy nobody can run: the checkout may sit in a directory only root may enter
	chmod 755 "$T" "$T/bin"
	mkdir -p "$T/nr-bin" && chmod 755 "$T/nr-bin"
	NRWAP=$T/nr-bin/wap
	cp "$WAP" "$NRWAP" && chmod 755 "$NRWAP"
	# and the leak suppressions where that user can read them (ASan builds)
	cp tests/lsan-lws.supp "$T/nr-bin/" && chmod 644 "$T/nr-bin/lsan-lws.supp"
	LSAN_OPTIONS=$(printf %s "$LSAN_OPTIONS" | sed "s|$PWD/tests/lsan-lws.supp|$T/nr-bin/lsan-lws.supp|")
	expect "non-root on 0.0.0.0:80: exit 125" 125 timeout 10 \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$NRWAP" serve --http 0.0.0.0:80 --root /
	has "non-root on port 80: says why" "$ERR" "a port below 1024 needs root or CAP_NET_BIND_SERVICE"
	mkdir -p "$T/nr/root" && chmod -R 777 "$T/nr"
	expect "non-root on ws://0.0.0.0:80: exit non-zero, not a silent start" 125 timeout 10 \
		setpriv --reuid 65534 --regid 65534 --clear-groups env XDG_CONFIG_HOME="$T/nr" \
		"$NRWAP" serve --ws 0.0.0.0:80 --token-file "$T/nr/tok" --root "$T/nr/root"
	has "ws: says it cannot listen" "$ERR" "Cannot listen on ws://0.0.0.0:80"
	lacks "ws: no 'Agent Control Protocol on' line" "$ERR" "Agent Control Protocol on"
fi

# ---- PORT, WAP_HTTP ----
P=$(free_port)
bg "$T/p.log" env PORT=$P wap serve --http 127.0.0.1
has "--http HOST takes \$PORT" "$(cat "$T/p.log")" "MCP at http://127.0.0.1:$P/mcp"
same "/health on \$PORT" "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$P/health)" 200
P=$(free_port)
bg "$T/w.log" env WAP_HTTP=127.0.0.1:$P wap serve
has "WAP_HTTP serves HTTP without --http" "$(cat "$T/w.log")" "MCP at http://127.0.0.1:$P/mcp"
P2=$(free_port)
bg "$T/w2.log" env WAP_HTTP=127.0.0.1:$P PORT=1 wap serve --http 127.0.0.1:$P2
has "--http wins over WAP_HTTP and PORT" "$(cat "$T/w2.log")" "MCP at http://127.0.0.1:$P2/mcp"
expect "PORT not a number: exit 2" 2 env PORT=http wap serve --http 0.0.0.0
has "PORT not a number: says so" "$ERR" "PORT must be a port number"

# ---- WAP_PROFILE, WAP_ALLOWED_HOSTS, LOG_LEVEL ----
P=$(free_port)
TOK=s3cret-from-the-env
bg "$T/l.log" env WAP_ROOT="$W" WAP_TOKEN=$TOK WAP_PROFILE=langop WAP_ALLOWED_HOSTS=wap.example.test,other.test LOG_LEVEL=debug \
	wap serve --http 127.0.0.1:$P
U=http://127.0.0.1:$P
has "WAP_PROFILE picks the profile" "$(cat "$T/l.log")" "(profile langop)"
SID=$(session "$U")
R=$(mcp "$U" "$LIST" -H "Mcp-Session-Id: $SID")
has "langop tools listed (WAP_TOKEN is the bearer token)" "$R" '"read_file"'
same "a wrong token is refused" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" \
	-H "Authorization: Bearer wrong" -H 'content-type: application/json' \
	-H 'accept: application/json, text/event-stream' --data-binary "$INIT")" 401
same "Host from WAP_ALLOWED_HOSTS accepted" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'Host: wap.example.test:80' -H "Authorization: Bearer $TOK" \
		-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' --data-binary "$INIT")" 200
same "second Host from WAP_ALLOWED_HOSTS accepted" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'Host: other.test' -H "Authorization: Bearer $TOK" \
		-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' --data-binary "$INIT")" 200
same "other Hosts still refused" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/mcp" -H 'Host: evil.test' -H "Authorization: Bearer $TOK" \
		-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' --data-binary "$INIT")" 403
mcp "$U" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}' -H "Mcp-Session-Id: $SID" >/dev/null
sleep 0.2
has "LOG_LEVEL=debug: audit lines on stderr" "$(cat "$T/l.log")" '"op":"read'
P=$(free_port)
LOG_LEVEL=error wap serve --http 127.0.0.1:$P 2>"$T/q.log" &
PIDS="$PIDS $!"
wait_for 30 curl -s -o /dev/null "http://127.0.0.1:$P/health"
same "LOG_LEVEL=error: serving" "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$P/health)" 200
lacks "LOG_LEVEL=error: no start-up line" "$(cat "$T/q.log")" "MCP at"
expect "LOG_LEVEL bogus: exit 2" 2 env LOG_LEVEL=chatty wap serve --http 127.0.0.1:0
has "LOG_LEVEL bogus: says so" "$ERR" "LOG_LEVEL must be debug, info, warn or error"
