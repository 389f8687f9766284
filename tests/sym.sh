# sym: code intelligence against real language servers no one here wrote:
# clangd on a generated C project (overview, find, refs, def, hover,
# rename across files then a compile, diagnostics after a deliberate error,
# all-or-nothing over 50 files), universal-ctags as the fallback,
# typescript-language-server on a TypeScript project, and no server
# outliving `wap serve`.
. tests/lib.sh

ctags_ok=false
ctags --version 2>/dev/null | grep -q 'Universal Ctags' && ctags_ok=true

# ---- the C project ----
mkdir -p "$W/src"
cat > "$W/src/util.h" <<'EOF'
#ifndef UTIL_H
#define UTIL_H
struct point { int x; int y; };
int add(int a, int b);
int scale(struct point *p, int k);
#endif
EOF
cat > "$W/src/util.c" <<'EOF'
#include "util.h"
/* é ünïcödé 😀 */ int add(int a, int b) { return a + b; }
int scale(struct point *p, int k)
{
	p->x *= k;
	p->y *= k;
	return add(p->x, p->y);
}
EOF
cat > "$W/src/main.c" <<'EOF'
#include "util.h"
int main(void)
{
	struct point p = { 1, 2 };
	return add(p.x, p.y) + scale(&p, 2);
}
EOF
cdb() {	# the compile database of every src/*.c
	python3 - "$W" <<'EOF'
import json, os, sys
w = sys.argv[1]
files = sorted(f for f in os.listdir(os.path.join(w, "src")) if f.endswith(".c"))
json.dump([{"directory": w, "file": "src/" + f, "arguments": ["cc", "-c", "src/" + f]} for f in files],
          open(os.path.join(w, "compile_commands.json"), "w"))
EOF
}
cdb
compiles() { (cd "$W" && for f in src/*.c; do cc -fsyntax-only "$f" || exit 1; done) 2>"$T/cc"; }

if ! command -v clangd >/dev/null; then
	ok "clangd # SKIP clangd is not installed (apt-get install clangd)"
else
	expect "overview of a C file" 0 wap sym overview src/util.c --json
	J=$OUT
	jcheck "clangd answered" "$J" 'j["source"] == "clangd" and j["path"] == "src/util.c"'
	jcheck "add and scale, lines from 1" "$J" '[(s["name"], s["kind"], s["line"]) for s in j["symbols"]] == [("add", "function", 2), ("scale", "function", 3)]'
	# 'a' of add follows 22 characters, one of them (the emoji) two UTF-16 units
	jcheck "columns in characters, the wire's UTF-16 beside them" "$J" 'j["symbols"][0]["column"] == 19 and j["symbols"][0]["selection_range"]["start"]["character"] == 23 and j["symbols"][0]["range"]["start"] == {"line": 1, "character": 19}'
	jcheck "scale spans its body" "$J" 'j["symbols"][1]["end_line"] == 8'
	expect "overview text" 0 wap-sym overview src/util.h
	has "header names the source" "$OUT" "src/util.h (clangd)"
	has "struct fields nested" "$OUT" "    field x  3"
	expect "overview --depth 0" 0 wap sym overview src/util.h --depth 0 --json
	jcheck "no children" "$OUT" 'all("children" not in s for s in j["symbols"])'
	expect "overview --include-body" 0 wap sym overview src/util.c --include-body --json
	jcheck "the body is the symbol's text" "$OUT" 'j["symbols"][1]["body"].startswith("int scale(struct point *p, int k)\n{") and j["symbols"][1]["body"].endswith("}")'
	# a server that answers initialize and then nothing: the request's own
	# time limit ends it (a real server may answer within any limit)
	cat > "$W/mute-lsp.sh" <<'SH'
IFS= read -r h; IFS= read -r blank
head -c "$(printf %s "$h" | tr -dc 0-9)" >/dev/null
b='{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"documentSymbolProvider":true}}}'
printf 'Content-Length: %s\r\n\r\n%s' "${#b}" "$b"
exec cat >/dev/null
SH
	echo 'x' > "$W/a.mute"
	mkdir -p "$XDG_CONFIG_HOME/wap"
	printf '{"lsp": {"servers": {"mute": {"command": ["sh", "%s"], "extensions": ["mute"]}}}}\n' "$W/mute-lsp.sh" > "$XDG_CONFIG_HOME/wap/config.json"
	expect "a request past --timeout-ms is TIMEOUT" 124 wap sym overview a.mute --timeout-ms 300
	has "says which request and how long" "$ERR" "textDocument/documentSymbol took more than 300 ms"
	# a language server is a program (some run the workspace's code): not
	# started where commands are not allowed (wap's own tags answer)
	printf 'echo LSP-STARTED >&2; exit 3\n' > "$T/ran-lsp.sh"
	printf '{"security": {"allowCommandExecution": false}, "lsp": {"servers": {"mute": {"command": ["sh", "%s"], "extensions": ["mute"]}}}}\n' "$T/ran-lsp.sh" > "$XDG_CONFIG_HOME/wap/config.json"
	expect "where commands are not allowed, the overview still answers" 0 wap sym overview a.mute --timeout-ms 300
	lacks "no language server was started" "$ERR" "LSP-STARTED"
	has "the tags answered" "$OUT" "(ctags)"
	# nor where the command lists refuse the server's program (exec of
	# it is refused: so is its start as a server)
	for l in '"restrictedCommands": ["sh"]' '"allowedCommands": ["ls"]'; do
		printf '{"security": {%s}, "lsp": {"servers": {"mute": {"command": ["sh", "%s"], "extensions": ["mute"]}}}}\n' "$l" "$T/ran-lsp.sh" > "$XDG_CONFIG_HOME/wap/config.json"
		expect "a server the command lists refuse ($l): COMMAND_RESTRICTED (exit 14)" 14 wap sym overview a.mute --timeout-ms 300
		lacks "  ... no language server was started" "$ERR" "LSP-STARTED"
		has "  ... the error names the program" "$ERR" "Command not allowed: sh "
	done
	# nor are the workspace's ctags option files read
	mkdir -p "$W/.ctags.d" && echo '--exclude=*.c' > "$W/.ctags.d/x.ctags"
	expect "ctags with an option file in the workspace" 0 wap sym overview src/util.c --ctags --json
	jcheck "its options are not read (util.c is not excluded)" "$OUT" 'len(j["symbols"]) > 0'
	rm -r "$W/.ctags.d"
	# ctags follows symlinks: a file restrictedPaths deny, reached through
	# a linked dir, gave its symbols' names (ninth hostile review)
	mkdir -p "$W/conf" && printf 'int secret_fn_TOPSECRET(void) { return 42; }\n' > "$W/conf/k.c"
	ln -s conf "$W/lnk"
	expect "ctags overview of a restricted file through a linked dir: refused" 5 wap sym overview lnk/k.c --ctags --restrict 'conf/**'
	lacks "  (no symbol shown)" "$OUT" TOPSECRET
	wap sym find secret_fn_TOPSECRET --ctags --json --restrict 'conf/**' > "$T/sf.out" 2>&1
	lacks "ctags find across the workspace leaves it out" "$(cat "$T/sf.out")" lnk/k.c
	rm -r "$W/conf" "$W/lnk"
	rm "$XDG_CONFIG_HOME/wap/config.json" "$W/mute-lsp.sh" "$W/a.mute"
	[ -e "$W/.cache" ] && fail "clangd wrote its index into the workspace" || ok "the server cannot write the workspace (no .cache)"

	if $ctags_ok; then
		expect "find by name path across the workspace" 0 wap sym find point/x --json
		jcheck "the field, from clangd" "$OUT" '[(s["path"], s["name_path"], s["line"], s["source"]) for s in j["symbols"]] == [("src/util.h", "point/x", 3, "clangd")] and j["source"] == "clangd"'
		expect "find a function" 0 wap sym find scale
		has "its definition" "$OUT" "src/util.c:3:1: function scale"
		expect "find an unknown name: exit 1" 1 wap sym find no_such_thing
	else
		ok "find across the workspace # SKIP no universal-ctags (apt-get install universal-ctags)"
	fi
	expect "find in one file" 0 wap sym find add src/util.c --json
	jcheck "in that file" "$OUT" 'len(j["symbols"]) == 1 and j["symbols"][0]["path"] == "src/util.c"'

	expect "references" 0 wap sym refs src/util.h add --json
	jcheck "in the three files" "$OUT" 'sorted(set(l["path"] for l in j["locations"])) == ["src/main.c", "src/util.c", "src/util.h"]'
	jcheck "each with its line and text" "$OUT" 'any(l["path"] == "src/main.c" and l["line"] == 5 and l["column"] == 9 and "add(p.x" in l["text"] for l in j["locations"])'
	jcheck "the non-ASCII line: column in characters" "$OUT" 'any(l["path"] == "src/util.c" and l["line"] == 2 and l["column"] == 23 and l["range"]["start"]["character"] == 23 for l in j["locations"])'
	expect "definition at a position (line, column)" 0 wap sym def src/main.c --line 5 --column 30 --json
	jcheck "scale's" "$OUT" 'j["locations"] and j["locations"][0]["path"] in ("src/util.c", "src/util.h") and "scale" in j["locations"][0]["text"]'
	expect "hover" 0 wap sym hover src/main.c --line 5 --column 10
	has "the signature" "$OUT" "int add(int a, int b)"
	# the server reads the whole root: what it answers from a restricted
	# file is judged as a read of it (a hover showed a restricted header's
	# #define, def and refs its lines)
	expect "hover of a symbol defined in a restricted file: PATH_RESTRICTED" 5 \
		wap sym hover src/main.c --line 5 --column 10 --restrict 'src/util.*'
	lacks "  ... its signature not shown" "$OUT$ERR" "int add(int a, int b)"
	# a command list that does not name the server: it starts, under the
	# list's sandbox layer, and answers
	printf '{"security": {"restrictedCommands": ["curl"]}}\n' > "$T/curl.json"
	expect "hover under restrictedCommands [curl]: clangd answers" 0 wap sym hover src/main.c --line 5 --column 10 --config "$T/curl.json"
	has "  ... the signature" "$OUT" "int add(int a, int b)"
	expect "def into a restricted file: none left (exit 1)" 1 wap sym def src/main.c --line 5 --column 30 --json --restrict 'src/util.*'
	jcheck "  ... leaves the location out, counted" "$OUT" 'j["locations"] == [] and j["restricted"] >= 1'
	expect "a position needs a line" 2 wap sym hover src/main.c
	expect "an unknown symbol" 11 wap sym refs src/util.c nothing_here

	expect "no diagnostics in a clean file" 0 wap sym diag src/main.c --json
	jcheck "none" "$OUT" 'j["diagnostics"] == [] and j["complete"]'
	# a deliberate error, written by wap itself
	expect "break main.c" 0 wap edit src/main.c --old 'return add(p.x, p.y)' --new 'return add(p.x, p.zz)'
	expect "diagnostics after the error" 0 wap sym diag src/main.c --json
	jcheck "an error on line 5" "$OUT" 'any(d["severity"] == "error" and d["line"] == 5 and "zz" in d["message"] for d in j["diagnostics"])'
	expect "mend it" 0 wap edit src/main.c --old 'p.zz' --new 'p.y'

	cp -r "$W/src" "$T/src.before"
	expect "rename --dry-run" 0 wap sym rename src/util.h add --new-name plus --dry-run --json
	jcheck "three files in the diff, nothing applied" "$OUT" 'not j["applied"] and j["changed"] == 3 and "+int plus(int a, int b);" in j["diff"]'
	check "dry run wrote nothing" diff -r "$T/src.before" "$W/src"
	V=$(jget "$(wap read src/util.h --json)" 'j["version"]')
	expect "rename with a stale expected version" 13 wap sym rename src/util.h add --new-name plus --expected-version 0123456789012345678901234567890123456789
	check "a conflict changes nothing" diff -r "$T/src.before" "$W/src"
	expect "rename across files" 0 wap sym rename src/util.h add --new-name plus --expected-version "$V" --json
	jcheck "applied to three files" "$OUT" 'j["applied"] and j["changed"] == 3 and sorted(f["path"] for f in j["files"]) == ["src/main.c", "src/util.c", "src/util.h"]'
	same "no add left" "$(grep -rw add "$W/src")" ""
	has "the non-ASCII line renamed in place" "$(cat "$W/src/util.c")" "/* é ünïcödé 😀 */ int plus(int a, int b)"
	if compiles; then ok "the renamed project compiles (cc)"; else fail "the renamed project compiles: $(head -c 300 "$T/cc")"; fi
	expect "read-only mode refuses a rename" 5 wap --read-only sym rename src/util.h plus --new-name add
	expect "but answers reads" 0 wap --read-only sym overview src/util.h

	expect "insert after a symbol" 0 wap sym insert-after src/util.c plus --text 'int twice(int a) { return plus(a, a); }'
	has "inserted after its last line" "$(sed -n 3p "$W/src/util.c")" "int twice(int a)"
	expect "replace a body" 0 wap sym replace-body src/util.c twice --text 'int twice(int a) { return 2 * a; }'
	has "replaced" "$(cat "$W/src/util.c")" "return 2 * a;"
	if compiles; then ok "still compiles"; else fail "still compiles: $(head -c 300 "$T/cc")"; fi

	# ---- rename across 50 files, all or nothing (clangd 14 renames in 50
	# files at most) ----
	for i in $(seq 1 47); do
		printf '#include "util.h"\nint use%d(void) { return plus(%d, %d); }\n' "$i" "$i" "$i" > "$W/src/m$i.c"
	done
	cdb
	cp -r "$W/src" "$T/src50"
	chmod a-w "$W/src/m33.c"
	expect "one read-only file: refused" 6 wap sym rename src/util.h plus --new-name sum
	check "none changed" diff -r "$T/src50" "$W/src"
	chmod u+w "$W/src/m33.c"
	expect "rename across 50 files" 0 wap sym rename src/util.h plus --new-name sum --json
	jcheck "every file changed" "$OUT" 'j["changed"] == 50'
	same "no plus left" "$(grep -rlw plus "$W/src" | wc -l)" 0
	if compiles; then ok "50 files compile after the rename"; else fail "50 files compile: $(head -c 300 "$T/cc")"; fi
	rm -f "$W"/src/m*.c
	cdb
	cp "$T/src.before/"* "$W/src/"

	# ---- the Agent Control Protocol's state.* on the same servers ----
	WSDIR=$(cd "$(dirname "$0")/ws" && pwd)
	if [ ! -d "$WSDIR/node_modules/ws" ]; then
		ok "state.* over WebSocket # SKIP no ws package (npm ci in tests/ws)"
	else
		wap serve --ws 127.0.0.1:0 --token-file "$T/acp.token" 2>"$T/acp.log" &
		AP=$!
		PORT=
		for _ in $(seq 100); do
			PORT=$(sed -n 's/.*on ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/acp.log")
			[ -n "$PORT" ] && break
			sleep 0.1
		done
		node "$WSDIR/lsp-test.js" "$PORT" "$(cat "$T/acp.token")" "$W" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /&ws: /'
		kill $AP
		wait $AP 2>/dev/null
		rm -f "$W/src/bad.c" "$W/src/ugly.c"
	fi

	# ---- no server outlives wap serve ----
	ours() {	# clangd processes working in this workspace
		for p in $(pgrep clangd); do
			[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$W" ] && echo "$p"
		done
	}
	mcp_call() {
		printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
			'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
			'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sym","arguments":{"action":"overview","path":"src/util.c"}}}'
	}
	mkfifo "$T/in"
	wap serve < "$T/in" > "$T/serve.out" 2>"$T/serve.err" &
	SP=$!
	exec 7>"$T/in"
	mcp_call >&7
	for i in $(seq 1 100); do grep -q '"id":2' "$T/serve.out" && break; sleep 0.1; done
	has "an MCP tools/call of sym" "$(cat "$T/serve.out")" '"source":"clangd"'
	P=$(ours)
	[ -n "$P" ] && ok "the server stays warm in wap serve" || fail "the server stays warm in wap serve"
	printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sym","arguments":{"action":"overview","path":"src/main.c"}}}' >&7
	for i in $(seq 1 100); do grep -q '"id":3' "$T/serve.out" && break; sleep 0.1; done
	same "one server for the language, reused" "$(ours)" "$P"
	kill -9 $P
	sleep 0.3
	printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sym","arguments":{"action":"overview","path":"src/util.h"}}}' >&7
	for i in $(seq 1 100); do grep -q '"id":4' "$T/serve.out" && break; sleep 0.1; done
	has "a crashed server is started again" "$(grep '"id":4' "$T/serve.out")" '"source":"clangd"'
	P2=$(ours)
	[ -n "$P2" ] && [ "$P2" != "$P" ] && ok "a new one" || fail "a new one: [$P2] after [$P]"
	# diagnostics after a header changed through another tool of the session
	mcp() { printf '%s\n' "$1" >&7; for i in $(seq 1 150); do grep -q "\"id\":$2[,}]" "$T/serve.out" && break; sleep 0.1; done; grep "\"id\":$2[,}]" "$T/serve.out"; }
	R=$(mcp '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sym","arguments":{"action":"diag","path":"src/main.c"}}}' 5)
	has "warm diag: clean" "$R" '"diagnostics":[]'
	R=$(mcp '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"edit","arguments":{"path":"src/util.h","old":"int x;","new":"int xx;"}}}' 6)
	lacks "edit the header through MCP" "$R" '"isError":true'
	R=$(mcp '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sym","arguments":{"action":"diag","path":"src/main.c"}}}' 7)
	has "warm diag sees the header's change" "$R" "No member named 'x' in 'struct point'"
	cp "$T/src.before/util.h" "$W/src/util.h"
	exec 7>&-
	wait $SP
	sleep 0.5
	same "none left after wap serve ends" "$(ours)" ""
	wap serve < "$T/in" > "$T/serve.out" 2>"$T/serve.err" &
	SP=$!
	exec 7>"$T/in"
	mcp_call >&7
	for i in $(seq 1 100); do grep -q '"id":2' "$T/serve.out" && break; sleep 0.1; done
	[ -n "$(ours)" ] && ok "warm again" || fail "warm again"
	kill -9 $SP
	wait $SP 2>/dev/null
	exec 7>&-
	for i in $(seq 1 50); do [ -z "$(ours)" ] && break; sleep 0.1; done
	same "none left after wap serve is killed (SIGKILL)" "$(ours)" ""
fi

# ---- the ctags fallback ----
if $ctags_ok; then
	mkdir -p "$XDG_CONFIG_HOME/wap"
	printf '{"lsp": {"servers": {"c": false}}}\n' > "$XDG_CONFIG_HOME/wap/config.json"
	expect "overview with no server" 0 wap sym overview src/util.h --json
	jcheck "ctags answered, and says so" "$OUT" 'j["source"] == "ctags" and ("point/x", 3) in [(s["name_path"], s["line"]) for s in j["symbols"]]'
	expect "find with no server" 0 wap sym find point/y --json
	jcheck "ctags" "$OUT" 'j["source"] == "ctags" and j["symbols"][0]["path"] == "src/util.h"'
	expect "refs need a server" 15 wap sym refs src/util.h point/x
	has "says why" "$ERR" "No language server handles src/util.h"
	rm "$XDG_CONFIG_HOME/wap/config.json"
	expect "--ctags asks ctags" 0 wap sym overview --ctags src/util.c --json
	jcheck "ctags" "$OUT" 'j["source"] == "ctags"'
	expect "ctags cannot read a restricted file" 5 wap --restrict 'src/util.c' sym overview --ctags src/util.c
else
	ok "ctags fallback # SKIP no universal-ctags (apt-get install universal-ctags)"
fi
expect "no server, an unknown extension" 15 wap sym refs compile_commands.json x
expect "servers lists the table" 0 wap sym servers --json
jcheck "clangd and typescript-language-server rows" "$OUT" '{"c", "typescript", "python", "go", "rust"} <= set(s["language"] for s in j["servers"])'

# ---- TypeScript: typescript-language-server ----
tsbin=$(cd "$(dirname "$0")" && pwd)/protocol/node_modules/.bin
if [ ! -x "$tsbin/typescript-language-server" ]; then
	ok "typescript-language-server # SKIP not installed (npm ci in tests/protocol)"
else
	PATH=$tsbin:$PATH
	mkdir -p "$W/ts"
	printf '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["*.ts"]}\n' > "$W/ts/tsconfig.json"
	cat > "$W/ts/greeter.ts" <<'EOF'
// ünïcödé 😀
export class Greeter {
	constructor(private name: string) {}
	greet(): string { return "héllo " + this.name; }
}
EOF
	cat > "$W/ts/main.ts" <<'EOF'
import { Greeter } from "./greeter";
const g = new Greeter("world");
console.log(g.greet());
EOF
	expect "ts: overview" 0 wap sym overview ts/greeter.ts --json
	jcheck "ts: typescript-language-server answered with the class and its method" "$OUT" 'j["source"] == "typescript-language-server" and any(c["name_path"] == "Greeter/greet" and c["line"] == 4 for s in j["symbols"] for c in s.get("children", []))'
	expect "ts: find Greeter/greet" 0 wap sym find Greeter/greet ts/greeter.ts --json
	jcheck "ts: found" "$OUT" 'len(j["symbols"]) == 1 and j["symbols"][0]["line"] == 4'
	expect "ts: references" 0 wap sym refs ts/greeter.ts Greeter/greet --json
	jcheck "ts: in both files" "$OUT" 'sorted(set(l["path"] for l in j["locations"])) == ["ts/greeter.ts", "ts/main.ts"]'
	expect "ts: rename" 0 wap sym rename ts/greeter.ts Greeter/greet --new-name salute --json
	jcheck "ts: two files" "$OUT" 'j["changed"] == 2'
	has "ts: the call renamed" "$(cat "$W/ts/main.ts")" "g.salute()"
	expect "ts: a deliberate error" 0 wap edit ts/main.ts --old 'g.salute()' --new 'g.salute(42)'
	expect "ts: diagnostics" 0 wap sym diag ts/main.ts --json
	jcheck "ts: the error, on line 3" "$OUT" 'any(d["severity"] == "error" and d["line"] == 3 for d in j["diagnostics"])'
	if [ -x "$tsbin/tsc" ]; then
		wap edit ts/main.ts --old 'g.salute(42)' --new 'g.salute()' >/dev/null
		if (cd "$W/ts" && "$tsbin/tsc" --noEmit -p .) >"$T/tsc" 2>&1; then ok "ts: the renamed project type-checks (tsc)"; else fail "ts: tsc: $(head -c 300 "$T/tsc")"; fi
	fi
fi
