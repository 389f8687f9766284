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

# ---- robustness: 1,000 malformed or hostile messages ----
mkdir -p "$W/sub" && echo hi > "$W/a.txt" && ln -sf /etc/passwd "$W/escape"
python3 tests/serve/hostile.py "$WAP" "$W" > "$T/hostile" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "hostile: ${line#ok * - }" ;;
	"not ok "*) fail "hostile: ${line#not ok * - }" ;;
	esac
done < "$T/hostile"
# the scenarios' valid requests mutated (hostile values, bytes), per
# profile: all answered, no crash, no sanitizer report, no growth
python3 tests/serve/stdiofuzz.py "$WAP" 160 > "$T/stdiofuzz" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "stdiofuzz: ${line#ok * - }" ;;
	"not ok "*) fail "stdiofuzz: ${line#not ok * - }" ;;
	esac
done < "$T/stdiofuzz"
grep -q '^ok ' "$T/stdiofuzz" || fail "stdiofuzz ran: $(tail -3 "$T/stdiofuzz" | tr '\n' ' ')"

# One of the scripts beside: `serve_py DIR LABEL SCRIPT ARGS...` runs
# tests/serve/SCRIPT with wap and the root $T/DIR, its TAP lines under LABEL.
serve_py() {
	_d=$1 _l=$2 _s=$3
	shift 3
	mkdir -p "$T/$_d"
	python3 "tests/serve/$_s" "$WAP" "$T/$_d" "$@" > "$T/$_d.out" 2>&1
	tap_in "$_l" "$T/$_d.out"
}
# big messages behind a slow call: held to a cap, the reader waits
serve_py bq "bigqueue: " bigqueue.py
# a batch runs on a worker: pings and cancels are read meanwhile
serve_py bs "batch: " batchstdio.py
# a tree's check and its move are one step against a write meanwhile
serve_py tr "tree lock: " treerace.py 3
# a write waiting for its directory's lock (held by another) is cancelled
serve_py dl "dir lock: " dirlock.py
# what only reads (grep without --write) holds no tree lock
serve_py tw "tree lock, reads: " treewait.py
# a git checkout and an edit of a file it changes are one before the other
serve_py gr "tree lock, checkout: " gitrace.py 40
# a pull, fetch or push waiting on a slow remote holds up no write nor move
# (libgit2 1.5 leaks on git_remote_lookup: tests/lsan-libgit2.supp)
LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	serve_py pw "tree lock, pull: " pullwait.py
# ... and its fast-forward and an edit are one before the other
LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	serve_py gp "tree lock, pull: " gitrace.py 40 pull
# a sym rename waiting on a language server holds up no move nor write
serve_py sw "tree lock, sym: " symwait.py

# ---- audit log: one line per operation, never contents, output or tokens ----
rpc() { # ID TOOL ARGS
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "$3"
}
{
	rpc 1 write '{"path":"secret.txt","content":"CONTENT-SECRET-1234\n"}'
	rpc 2 read '{"path":"secret.txt"}'
	rpc 3 exec '{"command":"printf %s-%s OUTPUT SECRET42; cat","stdin":"STDIN-SECRET"}'
	rpc 4 read '{"path":"missing.txt"}'
	rpc 5 exec '{"command":"true","env":{"TOKEN":"ENV-SECRET-9"}}'
} | wap serve --drain --audit "$T/audit.jsonl" --workers 1 > "$T/audit.out" 2>"$T/audit.err"
same "audit: one line per operation" "$(wc -l < "$T/audit.jsonl" | tr -d ' ')" 5
AUD=$(cat "$T/audit.jsonl")
lacks "audit: no file contents" "$AUD" "CONTENT-SECRET"
lacks "audit: no command output" "$AUD" "OUTPUT-SECRET42"
lacks "audit: no stdin" "$AUD" "STDIN-SECRET"
lacks "audit: no environment values" "$AUD" "ENV-SECRET"
has "audit: the command is recorded" "$AUD" '"command":"printf %s-%s OUTPUT SECRET42; cat"'
L1=$(sed -n 1p "$T/audit.jsonl")
jcheck "audit: fields of a line" "$L1" 'all(k in j for k in ("time","op","workspace","session","duration_ms","outcome","request")) and j["op"]=="write" and j["outcome"]=="ok" and j["request"]["path"]=="secret.txt" and j["request"]["content_bytes"]==20'
L4=$(sed -n 4p "$T/audit.jsonl")
jcheck "audit: failures carry the error code" "$L4" 'j["outcome"]=="error" and j["error"]=="FILE_NOT_FOUND" and j["op"]=="read"'
jcheck "audit: stdio session named" "$L4" 'j["session"].startswith("stdio-")'
expect "audit: unwritable log is refused" 125 wap serve --audit /nonexistent/dir/log < /dev/null
has "audit: says why" "$ERR" "cannot open the audit log"
: > "$T/a2"
printf '%s\n' "$(rpc 1 info '{}')" | wap serve --drain --audit - 2>"$T/a2" >/dev/null
jcheck "audit: - writes to stderr" "$(grep '^{' "$T/a2" | head -1)" 'j["op"]=="info"'
# the audit log beneath the root is no client's to rewrite: a write that
# replaced its inode took every later line (wap appended to the old one),
# a sandboxed "> audit.jsonl" emptied it
R=$T/auditroot; mkdir -p "$R/logs"
{
	rpc 1 write '{"path":"logs/audit.jsonl","content":"{\"FORGEDLINE\":true}\n"}'
	rpc 2 rm '{"path":"logs/audit.jsonl"}'
	rpc 3 mv '{"source":"logs","destination":"old"}'
	rpc 4 exec '{"command":"printf %s%s FORGED LINE > logs/audit.jsonl; rm -f logs/audit.jsonl"}'
	rpc 5 edit '{"path":"logs/audit.jsonl","old":"op","new":"FORGEDLINE"}'
	rpc 6 write '{"path":"ok.txt","content":"x"}'
} | (cd "$R" && WAP_ROOT=$R wap serve --drain --audit logs/audit.jsonl --workers 1 > "$T/auditroot.out" 2>"$T/auditroot.err")
AUD=$(cat "$R/logs/audit.jsonl" 2>/dev/null)
lacks "audit log in the root: not rewritten by a tool or a command" "$AUD" FORGEDLINE
same "audit log in the root: every call on it, and the one after, recorded" \
	"$(printf '%s\n' "$AUD" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["op"]+":"+json.loads(l)["outcome"] for l in sys.stdin))')" \
	"write:error rm:error mv:error exec:ok edit:error write:ok"
same "audit log in the root: the tools refused with PATH_RESTRICTED" \
	"$(python3 -c 'import json,sys; print(" ".join(json.loads(json.loads(l)["result"]["content"][0]["text"]).get("code", "-") for l in open(sys.argv[1]) if json.loads(l).get("id") in (1,2,3,5)))' "$T/auditroot.out")" \
	"PATH_RESTRICTED PATH_RESTRICTED PATH_RESTRICTED PATH_RESTRICTED"
jcheck "audit log in the root: the command could not write it" "$(sed -n 4p "$T/auditroot.out")" \
	'j["result"]["structuredContent"]["exit_code"] != 0'

# ---- profiles and options ----
expect "unknown profile is a usage error" 2 wap serve --profile nope < /dev/null
has "unknown profile names the choices" "$ERR" "wap-1.0, langop, opencode, wti, acp"
expect "--workers out of range" 2 wap serve --workers 0 < /dev/null
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2"}}' |
	WAP_MCP_PAGE_SIZE=2 wap serve)
jcheck "tools/list pages: first page and a cursor" "$(echo "$out" | sed -n 1p)" 'len(j["result"]["tools"])==2 and j["result"]["nextCursor"]=="2"'
jcheck "tools/list pages: the cursor continues" "$(echo "$out" | sed -n 2p)" 'j["result"]["tools"][0]["name"] not in ("cp",) and len(j["result"]["tools"])<=2'
all=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | wap serve)
names=$(jget "$all" '" ".join(t["name"] for t in j["result"]["tools"])')
# serve and acp drive the doors themselves (an MCP server, an ACP agent): no tools
same "wap profile: one tool per applet but serve and acp" "$names" "$(wap --list | grep -vx 'serve\|acp' | tr '\n' ' ' | sed 's/ $//')"
jcheck "every tool has schemas, title and annotations" "$all" 'all(t["inputSchema"]["type"]=="object" and t["outputSchema"]["type"]=="object" and t["title"] and t["description"] and t["annotations"]["openWorldHint"] is False and set(t["annotations"])>={"readOnlyHint","destructiveHint","idempotentHint"} for t in j["result"]["tools"])'
jcheck "read is read-only, rm destructive" "$all" '[t["annotations"]["readOnlyHint"] for t in j["result"]["tools"] if t["name"]=="read"]==[True] and all(t["annotations"]["destructiveHint"] for t in j["result"]["tools"] if t["name"]=="rm")'

# ---- progress and cancellation over stdio ----
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 1.6; echo done"},"_meta":{"progressToken":"tok"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 20"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}'; sleep 2.2; } |
	timeout 15 wap serve)
has "progress notifications while exec runs" "$out" '"method":"notifications/progress","params":{"progressToken":"tok","progress":1'
has "the call still answers" "$out" '"id":1,"result"'
lacks "a cancelled call gets no reply" "$out" '"id":2'

# ---- roots from the client narrow the root ----
python3 tests/serve/roots.py "$WAP" "$W" > "$T/roots" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "roots: ${line#ok * - }" ;;
	"not ok "*) fail "roots: ${line#not ok * - }" ;;
	*) fail "roots: $line" ;;
	esac
done < "$T/roots"

# ---- memory returns to its baseline (LeakSanitizer covers leaks under ASAN=1) ----
if [ -n "${ASAN:-}" ]; then
	echo "ok - memory baseline # SKIP ASan's quarantine holds freed memory"
else
	python3 tests/serve/baseline.py "$WAP" "$W" > "$T/base" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "baseline: ${line#ok * - }" ;;
		*) fail "baseline: ${line#not ok * - }" ;;
		esac
	done < "$T/base"
fi
