#!/bin/sh
# bench/serve.sh - tools/call throughput and latency of `wap serve` (stdio
# and HTTP) side by side with the official MCP filesystem server
# (@modelcontextprotocol/server-filesystem, stdio only), driven by the same
# lean pipelining client (bench/jsonl-client.mjs): a small-file read and a
# glob, sequential (1 in flight) and 8 concurrent (8 in flight on stdio, 8
# HTTP connections).  Prints a markdown table; N=... scales the call counts.
#   bench/serve.sh [WAP]
set -eu
cd "$(dirname "$0")"
WAP=$(cd .. && pwd)/${1:-wap}
S=${N:-1}
[ -d node_modules/@modelcontextprotocol/server-filesystem ] || npm ci --no-audit --no-fund >/dev/null 2>&1
FS="node $(pwd)/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
D=$(mktemp -d /tmp/wap-bench.XXXXXX)
trap 'kill $hp 2>/dev/null; rm -rf "$D"' EXIT
hp=
echo "small file, read in every call" > "$D/small.txt"
for d in $(seq 1 20); do
	mkdir -p "$D/tree/d$d/sub"
	for f in $(seq 1 25); do echo "int f$f;" > "$D/tree/d$d/f$f.c"; echo x > "$D/tree/d$d/sub/g$f.txt"; done
done
"$WAP" serve --http 127.0.0.1:0 --no-auth --root "$D" 2>"$D/http.log" &
hp=$!
sleep 0.3
U=http://127.0.0.1:$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$D/http.log")

row() { # LABEL SERVER TRANSPORT DEPTH N TOOL ARGS [CMD...]
	label=$1 server=$2 tr=$3 depth=$4 n=$5 tool=$6 args=$7; shift 7
	if [ "$tr" = http ]; then
		r=$(node jsonl-client.mjs http "$n" "$depth" "$tool" "$args" "$U" "$hp")
	else
		r=$(node jsonl-client.mjs stdio "$n" "$depth" "$tool" "$args" -- "$@")
	fi
	echo "$r" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("| %s | %s | %s | %s | %d | %d | %.3f | %.3f | %s |" % (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], j["calls"], j["calls_per_s"], j["p50_ms"], j["p99_ms"], "%.1f MB" % (j["rss_kb"]/1024) if j["rss_kb"] else "?"))' "$label" "$server" "$tr" "$depth"
}
echo "| call | server | transport | in flight | calls | calls/s | p50 ms | p99 ms | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|"
RD='{"path":"small.txt"}' RF="{\"path\":\"$D/small.txt\"}"
GW='{"pattern":"**/*.c"}' GF="{\"path\":\"$D\",\"pattern\":\"**/*.c\"}"
row "read small file" wap stdio 1 $((3000 * S)) read "$RD" "$WAP" serve --root "$D"
row "read small file" server-filesystem stdio 1 $((1000 * S)) read_text_file "$RF" $FS "$D"
row "read small file" wap http 1 $((3000 * S)) read "$RD"
row "read small file" wap stdio 8 $((5000 * S)) read "$RD" "$WAP" serve --root "$D"
row "read small file" server-filesystem stdio 8 $((1000 * S)) read_text_file "$RF" $FS "$D"
row "read small file" wap http 8 $((5000 * S)) read "$RD"
row "glob **/*.c (500 of 1000 files)" wap stdio 1 $((300 * S)) glob "$GW" "$WAP" serve --root "$D"
row "glob **/*.c (500 of 1000 files)" server-filesystem stdio 1 $((30 * S)) search_files "$GF" $FS "$D"
row "glob **/*.c (500 of 1000 files)" wap http 1 $((300 * S)) glob "$GW"
row "glob **/*.c (500 of 1000 files)" wap stdio 8 $((500 * S)) glob "$GW" "$WAP" serve --root "$D"
row "glob **/*.c (500 of 1000 files)" server-filesystem stdio 8 $((30 * S)) search_files "$GF" $FS "$D"
row "glob **/*.c (500 of 1000 files)" wap http 8 $((500 * S)) glob "$GW"
