# protocol/sdk: the official MCP TypeScript SDK (pinned in
# tests/protocol/package.json and package-lock.json) as the client, over
# stdio and over Streamable HTTP (also with client roots).  scripts/deps --test
# installs the SDK (npm ci); without it this skips, never downloads.
. tests/lib.sh
P=$(pwd)/tests/protocol
if [ ! -d "$P/node_modules/@modelcontextprotocol/sdk" ]; then	# scripts/deps --test installs it
	echo "ok 1 - MCP SDK tests # SKIP not installed (scripts/deps --test runs npm ci in tests/protocol)"
	exit 0
fi
for d in "$W" "$T/ws2"; do
	mkdir -p "$d/sub"
	printf 'hello\n' > "$d/a.txt"
	printf '# Notes\nTODO: one\n' > "$d/notes.md"
	echo 'int x;' > "$d/sub/b.c"
done
wap serve --http 127.0.0.1:0 --no-auth --root "$T/ws2" 2>"$T/http.log" &
pid=$!
# a second server that follows the client's roots (--roots-from-client)
wap serve --http 127.0.0.1:0 --no-auth --root "$T/ws2" --roots-from-client 2>"$T/roots.log" &
pid2=$!
trap 'kill $pid $pid2 2>/dev/null; wait $pid $pid2 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 1 100); do
	port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/http.log")
	port2=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/roots.log")
	[ -n "$port" ] && [ -n "$port2" ] && break
	sleep 0.05
done
node "$P/sdk.mjs" "$WAP" "$W" "http://127.0.0.1:$port" "http://127.0.0.1:$port2" "$T/ws2"
kill -TERM $pid2 2>/dev/null
wait $pid2
same "the --roots-from-client server exits 0 on SIGTERM" "$?" 0
lacks "no sanitizer report from the --roots-from-client server" "$(cat "$T/roots.log")" "Sanitizer"
