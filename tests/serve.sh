# serve: MCP over stdio.  Replayed JSONL scenarios (tests/serve/*.jsonl:
# requests in, expected replies out, volatile fields matched loosely)
# covering every tool of every profile and every error class; the audit
# log; "same answer on every door" (CLI --json, stdio, HTTP); and 1,000
# malformed or hostile messages after which the server still answers.
. tests/lib.sh
python3 tests/serve/replay.py "$WAP" tests/serve/[0-9]*.jsonl | sed "s/^\(not \)\{0,1\}ok [0-9]*/&/" > "$T/replay"
cat "$T/replay" | while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP"*) ok "replay: ${line#ok * - }" ;;
	"ok "*) ok "replay: ${line#ok * - }" ;;
	*) fail "replay: ${line#not ok * - }" ;;
	esac
done
