# protocol/conformance: the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned in tests/protocol/package.json
# and package-lock.json, installed by scripts/deps --test)
# against `wap serve --http`: every server scenario that applies to wap.
# The others need the suite's own test tools, prompts or resources
# (test_simple_text, test://static-text, ...) or client features wap
# does not use (sampling, elicitation), and are named below with why.
. tests/lib.sh
P=$(pwd)/tests/protocol
C=$P/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$C" ]; then	# never downloaded here: scripts/deps --test installs it
	echo "ok 1 - MCP conformance suite # SKIP not installed (scripts/deps --test runs npm ci in tests/protocol)"
	exit 0
fi
wap serve --http 127.0.0.1:0 --no-auth --root "$W" 2>"$T/http.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 1 100); do
	port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/mcp.*|\1|p' "$T/http.log")
	[ -n "$port" ] && break
	sleep 0.05
done
# server-sse-polling checks nothing unless the server resumes SSE streams
# (SEP-1699, 2025-11-25), which wap does not: it is run for the record.
for s in server-initialize ping logging-set-level completion-complete resources-list tools-list \
	 server-sse-multiple-streams server-sse-polling dns-rebinding-protection; do
	timeout 120 node "$C" server --url "http://127.0.0.1:$port/mcp" --scenario "$s" > "$T/$s.out" 2>&1
	st=$?
	res=$(sed 's/\x1b\[[0-9;]*m//g' "$T/$s.out" | sed -n 's/^Passed: \([0-9]*\)\/\([0-9]*\), \([0-9]*\) failed.*/\1 \2 \3/p' | tail -1)
	set -- $res
	if [ $# = 3 ] && [ "$3" = 0 ] && [ "$1" = "$2" ] && [ $st = 0 ]; then
		ok "conformance: $s ($1/$2)"
	else
		fail "conformance: $s (status $st): $(sed 's/\x1b\[[0-9;]*m//g' "$T/$s.out" | grep -E 'FAILURE|Error|Passed' | head -5 | tr '\n' ' ')"
	fi
done
echo "ok - conformance: not applicable: tools-call-* (the suite's test tools), resources-read-*, resources-templates-read, resources-(un)subscribe (its test:// resources; wap serves file:// ones, tested in tests/profiles.sh), prompts-* (wap has no prompts), elicitation-*, json-schema-2020-12 (its test tools) # SKIP not wap's tools"
