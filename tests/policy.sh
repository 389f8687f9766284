# policy: what the agent must never change, through every door.
#  - .git (top level, nested, a .git file) is read-only to every applet but
#    `wap git`: no hooks, core.fsmonitor, core.hooksPath or alternates;
#  - .wap and the config file are read-only, and the config is not read
#    from the workspace unless the invoker names it;
#  - restrictedPaths hold for every path length, and stay anchored to the
#    configured root when an MCP client narrows the root;
#  - one table of mutating ops: read-only mode, requireApproval, audit.
. tests/lib.sh
ROOT=$(cd "$W" && pwd -P)

setup() {
	rm -rf "$W"; mkdir -p "$W"
	(cd "$W" && wap git init -q . >/dev/null 2>&1 || git init -q . 2>/dev/null)
	mkdir -p "$W/.git/hooks" "$W/sub/nested/.git" "$W/wt" "$W/plain" "$W/.wap"
	printf 'ref: refs/heads/main\n' > "$W/sub/nested/.git/HEAD"
	printf '[core]\n\tbare = false\n' > "$W/sub/nested/.git/config"
	printf 'gitdir: ../elsewhere\n' > "$W/wt/.git"
	printf 'a\n' > "$W/a.txt"
	printf '#!/bin/sh\necho pwned\n' > "$W/payload"
	printf '{"security": {"restrictedPaths": ["private/**"]}}\n' > "$W/.wap/config.json"
	mkdir -p "$W/private"; printf 'key\n' > "$W/private/key"
	ln -s .git "$W/gitlink"
	ln -s sub/nested/.git "$W/nestlink"
}
snap() { (cd "$W" && find .git sub wt .wap -printf '%p %y %s %m %l\n' | sort
	find .git sub wt .wap -type f -exec md5sum {} + | sort); }

setup
BEFORE=$(snap)
GITCFG=$(cat "$W/.git/config")

# --- .git through the CLI: each refused with PATH_RESTRICTED (exit 5) ---
expect "write .git/hooks/pre-commit" 5 wap write .git/hooks/pre-commit --content 'echo pwned'
has "  says why" "$ERR" ".git"
expect "write through a symlink to .git" 5 wap write gitlink/hooks/post-checkout --content x
expect "write into a nested repo's .git" 5 wap write sub/nested/.git/hooks/pre-commit --content x
expect "write through a symlink to a nested .git" 5 wap write nestlink/config --content x
expect "write over a .git file (gitdir link)" 5 wap write wt/.git --content 'gitdir: /tmp'
expect "write a new .git file" 5 wap write plain/.git --content 'gitdir: ../../.git'
expect "write .GIT (case-insensitive file systems)" 5 wap write plain/.GIT/config --content x
expect "edit .git/config adding core.fsmonitor" 5 wap edit .git/config --old '[core]' --new "[core]
	fsmonitor = ./payload"
expect "edit through the symlink" 5 wap edit gitlink/config --old '[core]' --new '[core] hooksPath = /tmp'
printf -- '--- a/.git/config\n+++ b/.git/config\n@@ -1 +1,2 @@\n [core]\n+\thooksPath = hooks2\n' > "$T/p.diff"
cp "$T/p.diff" "$W/p.diff"
expect "edit --patch on .git/config" 5 wap edit --patch "$W/p.diff"
printf '*** Begin Patch\n*** Add File: .git/hooks/pre-push\n+echo pwned\n*** End Patch\n' > "$W/add.patch"
expect "edit --patch adding a hook" 5 wap edit --patch "$W/add.patch"
printf '*** Begin Patch\n*** Update File: a.txt\n*** Move to: .git/info/alternates\n@@\n-a\n+/tmp/objects\n*** End Patch\n' > "$W/mv.patch"
expect "edit --patch moving a file into .git" 5 wap edit --patch "$W/mv.patch"
check "  a.txt still there" test -f "$W/a.txt"
expect "mv a file onto .git/config" 5 wap mv --force payload .git/config
expect "mv a file into .git/hooks" 5 wap mv payload .git/hooks/pre-commit
expect "mv .git/config out" 5 wap mv .git/config stolen
expect "mv a dir holding a nested repo" 5 wap mv sub moved
expect "mv a dir onto .git" 5 wap mv plain .git/modules
expect "cp into .git/hooks" 5 wap cp payload .git/hooks/pre-commit
expect "cp through the symlink" 5 wap cp payload gitlink/hooks/pre-merge-commit
expect "cp -r a tree holding a .git" 5 wap cp -r sub copied
check "  nothing copied" test ! -e "$W/copied"
expect "rm .git/HEAD" 5 wap rm .git/HEAD
expect "rm -r .git" 5 wap rm -r .git
expect "rm -r a dir holding a nested repo" 5 wap rm -r sub
expect "rm a .git file" 5 wap rm wt/.git
expect "mkdir .git/hooks/x" 5 wap mkdir .git/hooks/x
expect "mkdir through the symlink" 5 wap mkdir gitlink/info/x
printf 'bare = false\n' > "$W/x.txt"
expect "grep --write on a file in .git" 2 wap grep 'bare = false' -r 'fsmonitor = ./payload' --write .git/config
has "  (PATH_RESTRICTED)" "$ERR" "Path restricted"
expect "grep --write through the nested repo" 2 wap grep bare -r x --write sub/nested/.git/config
has "  (PATH_RESTRICTED)" "$ERR" "Path restricted"
expect "grep --write through the symlink" 2 wap grep bare -r x --write gitlink/config
has "  (PATH_RESTRICTED)" "$ERR" "Path restricted"
same "nothing under any .git changed" "$(snap)" "$BEFORE"
same "  .git/config as it was" "$(cat "$W/.git/config")" "$GITCFG"
check "  no hook planted" test ! -e "$W/.git/hooks/pre-commit"

# reading .git stays allowed; work-tree files are still written
expect "read .git/config" 0 wap read .git/config
expect "write a work-tree file" 0 wap write sub/file.txt --content ok
expect "a file named .gitignore is no .git" 0 wap write .gitignore --content '*.o'
expect "nor .github/x" 0 wap write .github/workflows/x.yml --content 'on: push'

# `wap git` itself keeps writing its repository
wap write tracked.txt --content t >/dev/null
expect "wap git add" 0 wap git add tracked.txt
expect "wap git commit" 0 env GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@e wap git commit -m first
check "  the commit is in .git" test -n "$(ls "$W/.git/objects" | grep -v -e info -e pack)"

# --- .wap and the config (13.5) ---
expect "ROOT/.wap/config.json is not read by default" 0 wap read private/key
expect "write .wap/config.json" 5 wap write .wap/config.json --content '{}'
expect "rm -r .wap" 5 wap rm -r .wap
expect "mv .wap away" 5 wap mv .wap old-wap
expect "edit .wap/config.json" 5 wap edit .wap/config.json --old private --new public
has "  .wap untouched" "$(cat "$W/.wap/config.json")" private
expect "--config names it: its policy holds" 5 wap read --config "$W/.wap/config.json" private/key
mkdir -p "$W/cfgdir"
printf '{"security": {"restrictedPaths": ["private/**"]}}\n' > "$W/cfgdir/pol.json"
export WAP_CONFIG=$W/cfgdir/pol.json
expect "a config under the root named by WAP_CONFIG: read" 5 wap read private/key
expect "  and not writable" 5 wap write cfgdir/pol.json --content '{}'
expect "  nor its directory movable" 5 wap mv cfgdir cfg2
expect "  nor removable" 5 wap rm -r cfgdir
expect "  but its siblings are writable" 0 wap write cfgdir/other.txt --content ok
ln -s cfgdir "$W/cfglink"
expect "  nor writable through a symlink" 5 wap write cfglink/pol.json --content '{}'
unset WAP_CONFIG
mkdir -p "$T/xdg/wap"
printf '{"security": {"restrictedPaths": ["a.txt"]}}\n' > "$T/xdg/wap/config.json"
expect "the default config is \$XDG_CONFIG_HOME/wap/config.json" 5 env XDG_CONFIG_HOME=$T/xdg wap read a.txt
mkdir -p "$T/home/.config/wap"
cp "$T/xdg/wap/config.json" "$T/home/.config/wap/config.json"
expect "else ~/.config/wap/config.json" 5 env -u XDG_CONFIG_HOME HOME=$T/home wap read a.txt

# --- restrictedPaths for every path length (13.6) ---
# A glob PCRE2 gives up on (its match limit, on a long path whose every
# component backtracks) must deny, not let the path through.
printf '{"security": {"restrictedPaths": ["**/a*a*a*a*a*a*b/**/*.key"]}}' > "$T/deep.json"
A=$(printf 'a%.0s' $(seq 200))
D="$W/aaaaaab"; deep=aaaaaab
for i in 1 2 3 4 5 6 7 8; do D="$D/$A"; deep="$deep/$A"; done
mkdir -p "$D"; printf 'hidden\n' > "$D/f.key"
expect "a restricted file deep down is not read" 5 wap read --config "$T/deep.json" "$deep/f.key"
expect "  nor found by grep" 1 wap grep --config "$T/deep.json" hidden .
lacks "  (no match printed)" "$OUT" hidden
wap glob --config "$T/deep.json" '**/*.key' > "$T/g.out" 2>&1
lacks "  nor by glob" "$(cat "$T/g.out")" f.key
expect "  nor written" 5 wap write --config "$T/deep.json" "$deep/g.key" --content x
rm -rf "$W/aaaaaab"

# a tree reached through a symlink is judged where it really is: with
# restrictedPaths "conf/**/*.key" and lnk -> conf, lnk/sub/a.key is
# conf/sub/a.key (ninth hostile review: mv, cp -r and grep carried or
# showed it, rm -r removed it, ls and glob listed it, judged by the name asked)
printf '{"security": {"restrictedPaths": ["conf/**/*.key"]}}' > "$T/lk.json"
lk_setup() { rm -rf "$W/conf" "$W/lnk" "$W/out"; mkdir -p "$W/conf/sub"
	printf 'TOPSECRET\n' > "$W/conf/sub/a.key"; ln -s conf "$W/lnk"; }
lk_setup
expect "a restricted file through a linked dir: read refused" 5 wap read --config "$T/lk.json" lnk/sub/a.key
expect "  a missing one answers the same (its existence is not told)" 5 wap read --config "$T/lk.json" lnk/sub/nope.key
expect "  stat --exists too" 5 wap stat --exists --config "$T/lk.json" lnk/sub/nope.key
expect "  a missing dir on the way too" 5 wap stat --exists --config "$T/lk.json" lnk/sub/no/nope.key
expect "  a missing name the glob does not deny: not found" 3 wap read --config "$T/lk.json" lnk/sub/nope.txt
expect "  mv of its dir out through the link refused" 5 wap mv --config "$T/lk.json" lnk/sub out
check "  (still there)" test -f "$W/conf/sub/a.key"
lk_setup
expect "  cp -r of its dir through the link refused" 5 wap cp -r --config "$T/lk.json" lnk/sub out
check "  (no copy)" test ! -e "$W/out"
lk_setup
expect "  rm -r of its dir through the link refused" 5 wap rm -r --config "$T/lk.json" lnk/sub
check "  (still there)" test -f "$W/conf/sub/a.key"
lk_setup
wap grep --config "$T/lk.json" TOPSECRET lnk > "$T/g.out" 2>&1
lacks "  grep under the link does not show it" "$(cat "$T/g.out")" TOPSECRET
wap grep --config "$T/lk.json" -L TOPSECRET . > "$T/g.out" 2>&1
lacks "  grep --follow does not show it" "$(cat "$T/g.out")" TOPSECRET
wap glob --config "$T/lk.json" '**' lnk > "$T/g.out" 2>&1
lacks "  glob under the link does not list it" "$(cat "$T/g.out")" a.key
wap ls -r --config "$T/lk.json" lnk > "$T/g.out" 2>&1
lacks "  ls -r under the link does not list it" "$(cat "$T/g.out")" a.key
wap ls --config "$T/lk.json" lnk/sub > "$T/g.out" 2>&1
lacks "  ls under the link does not list it" "$(cat "$T/g.out")" a.key
wap read --config "$T/lk.json" lnk/sub > "$T/g.out" 2>&1
lacks "  read of the dir under the link does not list it" "$(cat "$T/g.out")" a.key
lk_setup
mkdir -p "$W/d/x"; printf 'k\n' > "$W/d/x/b.key"
expect "  mv of a tree into it through the link refused" 5 wap mv --config "$T/lk.json" d lnk/d
check "  (not moved)" test -f "$W/d/x/b.key"
lk_setup; mkdir -p "$W/d/x"; printf 'k\n' > "$W/d/x/b.key"
expect "  cp -r of a tree into it through the link refused" 5 wap cp -r --config "$T/lk.json" d lnk/d
check "  (not copied)" test ! -e "$W/conf/d"
rm -rf "$W/conf" "$W/lnk" "$W/out" "$W/d"

# a glob with a trailing slash names a directory, as in .gitignore: it
# restricted nothing (ninth hostile review)
mkdir -p "$W/sec/in"; printf 'key\n' > "$W/sec/in/k"
expect "restrictedPaths 'sec/' denies what is under sec" 5 wap read --restrict sec/ sec/in/k
expect "  at any depth, as a name alone" 5 wap read --restrict in/ sec/in/k
expect "  'sec//' too" 5 wap read --restrict 'sec//' sec/in/k
expect "  'sec/in/' too" 5 wap read --restrict 'sec/in/' sec/in/k
wap grep --restrict sec/ key . > "$T/g.out" 2>&1
lacks "  grep does not show it" "$(cat "$T/g.out")" sec/in/k
rm -rf "$W/sec"

# deeper than PATH_MAX: the path the kernel opened cannot be named, so
# policy cannot be checked: refused, not let through
mkdir -p "$W/lp"; (cd "$W/lp" && for i in $(seq 22); do mkdir "$A" && cd "$A" || exit 1; done)
L1=lp; for i in $(seq 11); do L1="$L1/$A"; done
REST=$A; for i in $(seq 10); do REST="$REST/$A"; done
ln -s "$L1" "$W/l1"
expect "a write whose real path is longer than PATH_MAX is refused" 4 wap write "l1/$REST/new.txt" --content x
has "  and says why" "$ERR" "cannot tell where"
rm -rf "$W/lp" "$W/l1"

# --- the same through wap serve (MCP over stdio, every profile) ---
setup
mkdir -p "$W/plain" "$W/secret/inner" "$W/sub/secret/inner"
printf 's\n' > "$W/secret/x.txt"; printf 'z\n' > "$W/secret/inner/z.txt"
printf 'y\n' > "$W/sub/secret/inner/y.txt"; printf 'k\n' > "$W/sub/k.key"
python3 tests/serve/policy.py "$WAP" "$W" > "$T/serve.tap" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "serve: ${line#ok * - }" ;;
	"not ok "*) fail "serve: ${line#not ok * - }" ;;
	*) fail "serve: $line" ;;
	esac
done < "$T/serve.tap"

# --- one table of ops: read-only mode and requireApproval on every door ---
setup
printf 'a\n' > "$W/a.txt"; printf 'a\n' > "$W/ok.txt"
printf '{"security": {"readOnly": true}}' > "$T/ro.json"
printf '{"security": {"requireApproval": true}}' > "$T/appr.json"
for c in "write a.txt --content x" "edit a.txt --old a --new b" "mv a.txt b.txt" "cp a.txt c.txt" \
	 "rm a.txt" "mkdir newdir" "git add a.txt" "git branch --create nb"; do
	# shellcheck disable=SC2086
	expect "read-only (config): $c" 5 wap $c --config "$T/ro.json"
	# shellcheck disable=SC2086
	expect "requireApproval, no approver on the CLI: $c" 125 wap $c --config "$T/appr.json"
done
expect "read-only: grep --write" 2 wap grep a -r b --write a.txt --read-only
has "  (read-only)" "$ERR" "read-only"
same "  nothing changed" "$(cat "$W/a.txt")" a
expect "read-only: edit --dry-run still runs" 0 wap edit a.txt --old a --new b --dry-run --read-only
expect "read-only: git status still runs" 0 wap git status --read-only
expect "read-only: git branch (listing) still runs" 0 wap git branch --read-only
expect "requireApproval: reads run" 0 wap read a.txt --config "$T/appr.json"

# MCP over stdio: requireApproval and the --approver, for tools and the acp profile
cat > "$T/approve.sh" <<EOF2
#!/bin/sh
echo "\$1 \$2" >> "$T/approvals.log"
cat > /dev/null
test "\$2" = ok.txt
EOF2
chmod +x "$T/approve.sh"
mcp() { # PROFILE CONFIG ARGS... < requests
	wap serve --drain --root "$W" --profile "$1" --config "$2" --approver "$T/approve.sh \"\$@\"" --audit "$T/audit.jsonl"
}
R=$(printf '%s\n' \
 '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.txt","content":"x"}}}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"ok.txt","content":"approved\n"}}}' \
 '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' \
 '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"command":"touch ran.txt"}}}' \
 | mcp wap "$T/appr.json" 2>/dev/null)
jcheck "mcp: a refused write is an error result" "$(echo "$R" | grep '"id":1')" 'j["result"]["isError"] and "approver refused" in j["result"]["content"][0]["text"]'
same "  a.txt unchanged" "$(cat "$W/a.txt")" a
jcheck "mcp: an approved write runs" "$(echo "$R" | grep '"id":2')" 'not j["result"]["isError"]'
same "  ok.txt written" "$(cat "$W/ok.txt")" approved
jcheck "mcp: a read is not asked about" "$(echo "$R" | grep '"id":3')" 'not j["result"]["isError"]'
jcheck "mcp: exec needs approval too" "$(echo "$R" | grep '"id":4')" 'j["result"]["isError"]'
check "  nothing ran" test ! -e "$W/ran.txt"
lacks "the approver never saw the read" "$(cat "$T/approvals.log")" "read a.txt"
has "the approver saw write and its path" "$(cat "$T/approvals.log")" "write a.txt"
R=$(printf '%s\n' \
 '{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s","path":"'"$W"'/a.txt","content":"x"}}' \
 '{"jsonrpc":"2.0","id":2,"method":"terminal/create","params":{"sessionId":"s","command":"touch","args":["ran.txt"]}}' \
 | mcp acp "$T/appr.json" 2>/dev/null)
jcheck "acp stdio: fs/write_text_file refused" "$(echo "$R" | grep '"id":1')" '"error" in j'
jcheck "acp stdio: terminal/create refused" "$(echo "$R" | grep '"id":2')" '"error" in j'
sleep 0.3
check "  nothing ran" test ! -e "$W/ran.txt"
same "  a.txt unchanged" "$(cat "$W/a.txt")" a
R=$(printf '%s\n' \
 '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"x"}}}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_directory","arguments":{"path":"d"}}}' \
 | mcp langop "$T/ro.json" 2>/dev/null)
jcheck "langop, read-only: write_file refused" "$(echo "$R" | grep '"id":1')" 'j["result"]["isError"]'
jcheck "langop, read-only: create_directory refused" "$(echo "$R" | grep '"id":2')" 'j["result"]["isError"]'
# the langop profile's get_file_info is the stat op (links followed, as
# the document's File.stat): its gate, its audit line
ln -s a.txt "$W/alink"
printf '{"security":{"restrictedPaths":["a.txt"]}}\n' > "$T/ra.json"
R=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_file_info","arguments":{"path":"alink"}}}' \
 | mcp langop "$T/ro.json" 2>/dev/null)
has "langop get_file_info: a link is followed" "$R" 'Type: file\nSize: 2 B'
jcheck "  ... through the stat op (audited as stat)" "$(grep '"op":"stat"' "$T/audit.jsonl" | grep alink | head -1)" 'j["request"]["path"] == "alink" and j["outcome"] == "ok"'
R=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_file_info","arguments":{"path":"alink"}}}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_files","arguments":{"path":"alink","pattern":"*"}}}' \
 | mcp langop "$T/ra.json" 2>/dev/null)
jcheck "langop get_file_info: a link to a restricted file is refused" "$(echo "$R" | grep '"id":1')" 'j["result"]["isError"] and "Access denied" in j["result"]["content"][0]["text"]'
jcheck "langop search_files: not a directory" "$(echo "$R" | grep '"id":2')" 'j["result"]["isError"]'
rm "$W/alink"
jcheck "audit: a write is marked mutating" "$(grep '"write"' "$T/audit.jsonl" | head -1)" 'j["mutating"] is True'
jcheck "audit: a read is not" "$(grep '"op":"read"' "$T/audit.jsonl" | head -1)" 'j["mutating"] is False'
jcheck "audit: terminal/create is audited, mutating" "$(grep 'terminal/create' "$T/audit.jsonl" | head -1)" 'j["mutating"] is True and j["outcome"] == "error"'

# The approver judges what runs (eleventh hostile review).  Its stdin was
# written without blocking and cut at the pipe's 64 KiB: a request padded
# with 200 kB of stdin before its command reached the approver without the
# command; its $2 named one target of the op (mv's source, grep's
# pattern), so an approver allowing by path allowed `mv ok.txt a.txt`;
# control characters in a path rewrote a terminal prompt; and what the
# approver's shell started outlived a cancelled or timed-out wait.  The
# calls below run at once, so approve3.sh writes each line in one write
# (two appends of two approvers interleaved and joined two lines in one).
printf 'a\n' > "$W/a.txt"; printf 'ok\n' > "$W/ok.txt"; printf 'has ok.txt\n' > "$W/g.txt"
cat > "$T/approve3.sh" <<EOF2
#!/bin/sh
cat > "$T/apin"
a=\$(printf '%s|' "\$@"); printf '%s\n' "\$a" >> "$T/apargs"
shift
for t; do [ "\$t" = ok.txt ] || exit 1; done
EOF2
chmod +x "$T/approve3.sh"
mcp3() { wap serve --drain --root "$W" --config "$T/appr.json" --approver "$T/approve3.sh \"\$@\"" 2>/dev/null; }
python3 - "$T/big.jsonl" <<'EOF2'
import json, sys
a = {"stdin": "x" * 200000, "command": "touch ran.txt"}
r = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "exec", "arguments": a}}
open(sys.argv[1], "w").write(json.dumps(r) + "\n")
EOF2
rm -f "$T/apin"
mcp3 < "$T/big.jsonl" > /dev/null
jcheck "approver: a request past 64 KiB reaches its stdin whole" "$(cat "$T/apin")" \
	'j["params"]["command"] == "touch ran.txt" and len(j["params"]["stdin"]) == 200000'
rm -f "$T/apargs"
R=$(printf '%s\n' \
 '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mv","arguments":{"source":"ok.txt","destination":"a.txt","force":true}}}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"ok.txt","replace":"X","write":true}}}' \
 '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cp","arguments":{"source":"ok.txt","destination":"c.txt"}}}' \
 '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write","arguments":{"path":"ok.txt\n\u001b[1A\u001b[2Kwrite\tok.txt\u202e","content":"x"}}}' \
 | mcp3)
jcheck "approver: mv is asked with its destination too" "$(echo "$R" | grep '"id":1')" 'j["result"]["isError"]'
same "  a.txt not overwritten" "$(cat "$W/a.txt")" a
jcheck "approver: grep --write is asked with what it rewrites (the root)" "$(echo "$R" | grep '"id":2')" 'j["result"]["isError"]'
same "  g.txt not rewritten" "$(cat "$W/g.txt")" "has ok.txt"
has "approver: cp's targets are \$2 and \$3" "$(cat "$T/apargs")" "cp|ok.txt|c.txt|"
same "approver: no control character reaches its arguments" \
	"$(grep -c . "$T/apargs")|$(tr -d '\n' < "$T/apargs" | LC_ALL=C tr -d '[:print:]\t' | wc -c)" "4|0"
has "  a newline and an escape shown as ^J and ^[" "$(cat "$T/apargs")" 'write|ok.txt^J^[[1A^[[2Kwrite	ok.txt<U+202E>|'
# an argument is at most 128 KiB (what is typed into a terminal is not):
# each is cut after 4 KiB, the whole request is on stdin
R=$(python3 -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"touch long.txt #" + "x" * 100000}}}))' \
 | wap serve --drain --root "$W" --config "$T/appr.json" --approver "echo \${#2} > '$T/len'; cat > '$T/apin'" 2>/dev/null)
jcheck "approver: a 100 kB command is asked about" "$R" 'not j["result"]["isError"]'
check "  and it ran" test -e "$W/long.txt"
same "  its \$2 cut after 4 KiB" "$(cat "$T/len")" 4099
jcheck "  its stdin whole" "$(cat "$T/apin")" 'len(j["params"]["command"]) == 100016'
rm -f "$W/long.txt"
# what the approver started ends with the wait: cancelled here
rm -f "$T/late"
(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"b.txt","content":"x"}}}'
 sleep 1
 printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
 sleep 0.5) | wap serve --drain --root "$W" --config "$T/appr.json" --approver "(sleep 2; touch '$T/late'); exit 0" >/dev/null 2>&1
sleep 3
check "approver: nothing it started outlives a cancelled wait" test ! -e "$T/late"
check "  and the write did not run" test ! -e "$W/b.txt"

# security.allowedMethodCategories is the config's, for every door (eleventh
# hostile review): only the Agent Control door judged it, so with ["fs"] the
# same server's MCP tools, the acp profile and the CLI ran commands and git
printf '{"security": {"allowedMethodCategories": ["fs"]}}' > "$T/cats.json"
rm -f "$T/audit.jsonl" "$W/ran.txt"
R=$(printf '%s\n' \
 '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"touch ran.txt"}}}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"git","arguments":{"action":"commit","message":"m","all":true}}}' \
 '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"a"}}}' \
 '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' \
 | wap serve --drain --root "$W" --config "$T/cats.json" --audit "$T/audit.jsonl" 2>/dev/null)
jcheck "categories on MCP: exec refused (FEATURE_DISABLED)" "$(echo "$R" | grep '"id":1')" \
	'j["result"]["isError"] and "FEATURE_DISABLED" in j["result"]["content"][0]["text"] and "allowedMethodCategories" in j["result"]["content"][0]["text"]'
check "  nothing ran" test ! -e "$W/ran.txt"
jcheck "categories on MCP: git refused" "$(echo "$R" | grep '"id":2')" 'j["result"]["isError"] and "allowedMethodCategories" in j["result"]["content"][0]["text"]'
jcheck "categories on MCP: grep (search) refused" "$(echo "$R" | grep '"id":3')" 'j["result"]["isError"]'
jcheck "categories on MCP: a read (fs) runs" "$(echo "$R" | grep '"id":4')" 'not j["result"]["isError"]'
jcheck "  the refusal is audited" "$(grep '"op":"exec"' "$T/audit.jsonl")" 'j["outcome"] == "error" and j["error"] == "FEATURE_DISABLED"'
R=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"terminal/create","params":{"sessionId":"s","command":"touch","args":["ran.txt"]}}' \
 | wap serve --drain --root "$W" --profile acp --config "$T/cats.json" 2>/dev/null)
jcheck "categories on the acp profile: terminal/create refused" "$R" 'j["error"]["code"] == -32009'
sleep 0.3
check "  nothing ran" test ! -e "$W/ran.txt"
expect "categories on the CLI: exec refused" 15 wap exec --config "$T/cats.json" -- touch ran.txt
check "  nothing ran" test ! -e "$W/ran.txt"
expect "categories on the CLI: a write (fs) runs" 0 wap write c.txt --content c --config "$T/cats.json"
rm -f "$W/c.txt"

# wap's records beneath the root, planted before it starts (ninth hostile
# review): an audit log that is a symlink was followed, so wap appended the
# agent's lines (a path holding $(...)) to a file outside the root, a
# transcript so linked was truncated; a FIFO held the server's start
rm -f "$T/outside.txt"; ln -s "$T/outside.txt" "$W/planted.jsonl"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
 '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
 '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"p$(id)","content":"a"}}}' \
 | timeout 20 wap serve --root "$W" --audit "$W/planted.jsonl" > "$T/out" 2> "$T/err"
check "an audit log planted as a link out of the root: not followed" test ! -s "$T/outside.txt"
has "  and the server says why" "$(cat "$T/err")" "planted.jsonl"
echo keep > "$T/outside.txt"
expect "a transcript planted as a link out of the root: refused" 125 wap acp run --approve all --transcript "$W/planted.jsonl" --prompt p -- /bin/true
same "  the file it names is not truncated" "$(cat "$T/outside.txt")" keep
rm -f "$W/planted.jsonl" "$T/outside.txt" "$W/p\$(id)"; mkfifo "$W/planted.jsonl"
printf '' | timeout 20 wap serve --root "$W" --audit "$W/planted.jsonl" > /dev/null 2>&1
if [ $? != 124 ]; then ok "an audit log planted as a FIFO does not hold the start"; else fail "an audit log planted as a FIFO held the start"; fi
rm -f "$W/planted.jsonl"

# the Agent Control Protocol over WebSocket
WSDIR=$(cd "$(dirname "$0")/ws" && pwd)
if [ ! -d "$WSDIR/node_modules/ws" ]; then
	(cd "$WSDIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) || fail "npm ci in tests/ws"
fi
PIDS=
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
start_ws() { # NAME ARGS...: sets PID, PORT
	n=$1; shift
	wap serve --ws 127.0.0.1:0 --root "$W" --token tok "$@" 2>"$T/$n.log" &
	PID=$!; PIDS="$PIDS $PID"; PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*on ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/$n.log")
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "server $n did not start: $(cat "$T/$n.log")"
}
wstap() {
	node "$WSDIR/policy-test.js" "$@" > "$T/ws.tap" 2>&1
	while IFS= read -r l; do
		case $l in "ok "*) ok "ws: ${l#ok * - }";; "not ok "*) fail "ws: ${l#not ok * - }";; esac
	done < "$T/ws.tap"
}
if [ -d "$WSDIR/node_modules/ws" ]; then
	printf 'a\n' > "$W/a.txt"; printf 'a\n' > "$W/ok.txt"; rm -f "$T/approvals.log"
	cat > "$T/approve2.sh" <<EOF2
#!/bin/sh
echo "\$1 \$2" >> "$T/approvals.log"
cat > /dev/null
test "\$2" = ok.txt
EOF2
	chmod +x "$T/approve2.sh"
	start_ws appr --config "$T/appr.json" --approver "$T/approve2.sh \"\$@\""
	wstap approval "$PORT" tok "$W"
	kill $PID; wait $PID 2>/dev/null
	printf 'a\n' > "$W/a.txt"
	start_ws ro --config "$T/ro.json"
	wstap readonly "$PORT" tok "$W"
	kill $PID; wait $PID 2>/dev/null
	setup
	GSNAP=$(snap)
	start_ws git
	wstap gitprotect "$PORT" tok "$W"
	kill $PID; wait $PID 2>/dev/null
	same "ws: nothing under .git or .wap changed" "$(snap)" "$GSNAP"
fi
