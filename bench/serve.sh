#!/bin/sh
# bench/serve.sh - tools/call throughput and latency of `wap serve` against
# its peers in the same run, each driven by the same lean client
# (bench/jsonl-client.mjs over stdio, bench/httpload.c over HTTP), ROUNDS
# rounds (default 3) taken in turn, medians and per-round ratios:
#   1. small reads over stdio, pipelined (DEPTH in flight, default 32):
#      wap; the client's own ceiling (the same client fed wap's replies,
#      recorded in this run, with no server behind them); a do-nothing
#      server on real pipes (bench/stdiofloor.c, the same replies); the
#      official MCP filesystem server (@modelcontextprotocol/server-filesystem);
#   2. small reads over Streamable HTTP with 1, 8 and 64 clients (a
#      session and a connection each) in closed loop, and 8 in open loop
#      at RATE calls/s (default 10000), driven by a C client
#      (bench/httpload.c): wap against the official SDK's Streamable HTTP
#      server (bench/sdk-http-server.mjs), and the client's own ceiling: a
#      C server that only answers each POST with wap's recorded reply
#      (bench/httpfloor.c); the CPU time a call of the client and of each
#      server;
#   3. wap's RSS after 100k and 1M pipelined reads (stdio);
#   4. a glob over stdio, one call at a time: wap and the filesystem server.
# Prints markdown tables and the load average.  N=2 doubles the calls,
# STDIO=0 skips 1, RSS=0 skips 3, RT=0 runs the open-loop client at normal
# priority (by default SCHED_FIFO when allowed, so that its own wake-ups are
# on time; its lateness is reported beside the latency).
#   bench/serve.sh [WAP]
set -eu
cd "$(dirname "$0")"
WAP=$(cd .. && pwd)/${1:-wap}
S=${N:-1}
ROUNDS=${ROUNDS:-3}
DEPTH=${DEPTH:-32}
[ -d node_modules/@modelcontextprotocol/server-filesystem ] || npm ci --no-audit --no-fund >/dev/null 2>&1
FS="node $(pwd)/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
D=$(mktemp -d /tmp/wap-bench.XXXXXX)
hp= sp= fp=
trap 'kill $hp $sp $fp 2>/dev/null; rm -rf "$D"' EXIT
TXT="small file, read in every call"
echo "$TXT" > "$D/small.txt"
for d in $(seq 1 20); do
	mkdir -p "$D/tree/d$d/sub"
	for f in $(seq 1 25); do echo "int f$f;" > "$D/tree/d$d/f$f.c"; echo x > "$D/tree/d$d/sub/g$f.txt"; done
done
RD='{"path":"small.txt"}'
C="node jsonl-client.mjs"
load() { cut -d' ' -f1-3 /proc/loadavg; }

# the replies wap gives, recorded for the client's ceiling
calls=$((20000 * S))
python3 - "$calls" "$RD" > "$D/req.jsonl" <<'PY'
import json, sys
n, args = int(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}))
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
for i in range(1, n + 1):
    print(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "read", "arguments": args}}, separators=(",", ":")))
PY
"$WAP" serve --drain --root "$D" < "$D/req.jsonl" > "$D/replies.jsonl"

if [ "${STDIO:-1}" != 0 ]; then
echo "## stdio: small reads, $DEPTH in flight (load before: $(load))"
echo
echo "| round | client ceiling calls/s | do-nothing server calls/s | wap calls/s | server-filesystem calls/s | wap / ceiling | wap / do-nothing | wap / server-filesystem | wap p50 / p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|"
: > "$D/ratios"
${CC:-cc} -O2 -o "$D/stdiofloor" stdiofloor.c
sed -n '1p;3p' "$D/replies.jsonl" > "$D/floor.jsonl"	# initialize's reply, a read's
r=1
while [ "$r" -le "$ROUNDS" ]; do
	ceil=$($C replay "$calls" "$DEPTH" read "$RD" "$D/replies.jsonl")
	nil=$($C stdio "$calls" "$DEPTH" read "$RD" -- "$D/stdiofloor" "$D/floor.jsonl")
	w=$($C stdio "$calls" "$DEPTH" read "$RD" -- "$WAP" serve --root "$D")
	f=$($C stdio $((2000 * S)) "$DEPTH" read_text_file "{\"path\":\"$D/small.txt\"}" -- $FS "$D")
	echo "$ceil" > "$D/c$r"; echo "$w" > "$D/w$r"; echo "$f" > "$D/f$r"; echo "$nil" > "$D/n$r"
	python3 - "$r" "$D/c$r" "$D/w$r" "$D/f$r" "$D/n$r" >> "$D/ratios" <<'PY'
import json, sys
c, w, f, n = (json.load(open(p)) for p in sys.argv[2:6])
print(sys.argv[1], c["calls_per_s"], w["calls_per_s"], f["calls_per_s"],
      w["calls_per_s"] / c["calls_per_s"], w["calls_per_s"] / f["calls_per_s"], w["p50_ms"], w["p99_ms"],
      n["calls_per_s"], w["calls_per_s"] / n["calls_per_s"])
PY
	tail -n 1 "$D/ratios" | awk '{ printf "| %s | %d | %d | %d | %d | %.2f | %.2f | %.1f | %.3f / %.3f |\n", $1, $2, $9, $3, $4, $5, $10, $6, $7, $8 }'
	r=$((r + 1))
done
# CPU per call, which the load does not change: wap fed the same calls
# from a file, and the client alone (replay)
wcpu=$(python3 -c 'import resource, subprocess, sys
n, req, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
subprocess.run(cmd, stdin=open(req), stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f" % ((r.ru_utime + r.ru_stime) * 1e6 / n))' "$calls" "$D/req.jsonl" "$WAP" serve --drain --root "$D")
ccpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["client_cpu_us_per_call"])' "$D/c$ROUNDS")
echo
echo "CPU per call (user + system): wap $wcpu us (\`wap serve --drain\` fed the same $calls calls from a file), the client alone $ccpu us (replay)"
sort -k5 -g "$D/ratios" | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2) { printf "\nmedian wap / ceiling: %.2f; ", $5 }'
sort -k10 -g "$D/ratios" | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2) { printf "median wap / do-nothing server: %.2f; ", $10 }'
sort -k6 -g "$D/ratios" | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2) { printf "median wap / server-filesystem: %.1fx", $6 }'
echo " (load after: $(load))"
echo
fi

echo "## Streamable HTTP: small reads, one session and connection per client (load before: $(load))"
echo
"$WAP" serve --http 127.0.0.1:0 --no-auth --root "$D" 2>"$D/http.log" &
hp=$!
${CC:-cc} -O2 -o "$D/httpfloor" httpfloor.c
${CC:-cc} -O2 -o "$D/httpload" httpload.c
sed -n 3p "$D/replies.jsonl" > "$D/one.jsonl"	# a read's reply
"$D/httpfloor" "$D/one.jsonl" > "$D/floor.url" &
fp=$!
node sdk-http-server.mjs "$D" > "$D/sdk.url" 2>"$D/sdk.err" &
sp=$!
for i in $(seq 100); do
	grep -q 'http://127.0.0.1' "$D/http.log" 2>/dev/null && [ -s "$D/sdk.url" ] && [ -s "$D/floor.url" ] && break
	sleep 0.1
done
WU=http://127.0.0.1:$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$D/http.log" | head -n 1)
SU=$(cat "$D/sdk.url")
FU=$(cat "$D/floor.url")
echo "| clients | load | server | calls | calls/s | p50 ms | p99 ms | p99.9 ms | client late p99 ms | reply p99 ms | peak RSS | server CPU us/call | client CPU us/call |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# closed loop with 1, 8 and 64 clients, then open loop at RATE calls/s
# spread over 8 (latency from when a call was due)
RATE=${RATE:-10000}
for k in 1 8 64 open; do
	for who in floor wap sdk; do
		n=$((20000 * S)) ns=$((2000 * S)) opt= c=$k mode="closed"
		if [ "$k" = open ]; then
			n=$((2 * RATE * S)) ns=$((3000 * S)) opt="-r $RATE" c=8 mode="open, $RATE/s"
			[ "${RT:-1}" = 0 ] || opt="$opt -R"
		fi
		case $who in
		floor) out=$("$D/httpload" $opt -p "$fp" -c "$TXT" "$FU" "$n" "$c" read "$RD"); name="client ceiling (httpfloor.c)" ;;
		wap) out=$("$D/httpload" $opt -p "$hp" -c "$TXT" "$WU" "$n" "$c" read "$RD"); name=wap ;;
		sdk) out=$("$D/httpload" $opt -p "$sp" -c "$TXT" "$SU" "$ns" "$c" read_text_file "$RD"); name="SDK StreamableHTTPServerTransport" ;;
		esac
		echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); o=lambda k: "%.3f" % j[k] if k in j else "-"; print("| %s | %s | %s | %d | %d | %.3f | %.3f | %.3f | %s | %s | %.1f MB | %.1f | %.1f |" % (sys.argv[1], sys.argv[2], sys.argv[3], j["calls"], j["calls_per_s"], j["p50_ms"], j["p99_ms"], j["p999_ms"], o("lag_p99_ms"), o("svc_p99_ms"), j["rss_kb"] / 1024, j["server_cpu_us_per_call"], j["client_cpu_us_per_call"]))' "$c" "$mode" "$name"
	done
done
kill $hp $sp $fp 2>/dev/null || true
wait $hp $sp $fp 2>/dev/null || true
hp= sp= fp=
echo
echo "(load after: $(load))"
echo

if [ "${RSS:-1}" != 0 ]; then
	echo "## RSS of wap serve (stdio), 1,000,000 pipelined reads (load before: $(load))"
	echo
	out=$(RSS_AT=1000,100000,1000000 $C stdio 1000000 "$DEPTH" read "$RD" -- "$WAP" serve --root "$D")
	echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); a=j["rss_at"]; print("| after calls | 1,000 | 100,000 | 1,000,000 |\n|---|---|---|---|\n| RSS | %.1f MB | %.1f MB | %.1f MB |\n\n%d calls/s over the million" % (a["1000"]/1024, a["100000"]/1024, a["1000000"]/1024, j["calls_per_s"]))'
	echo
fi

echo "## glob **/*.c (500 of 1,000 files), one call at a time (load before: $(load))"
echo
echo "| server | calls | calls/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|"
g=$($C stdio $((300 * S)) 1 glob '{"pattern":"**/*.c"}' -- "$WAP" serve --root "$D")
echo "$g" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("| wap | %d | %d | %.3f | %.3f |" % (j["calls"], j["calls_per_s"], j["p50_ms"], j["p99_ms"]))'
g=$($C stdio $((30 * S)) 1 search_files "{\"path\":\"$D\",\"pattern\":\"**/*.c\"}" -- $FS "$D")
echo "$g" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("| server-filesystem | %d | %d | %.3f | %.3f |" % (j["calls"], j["calls_per_s"], j["p50_ms"], j["p99_ms"]))'
echo
echo "(load after: $(load); $(nproc) CPUs)"
