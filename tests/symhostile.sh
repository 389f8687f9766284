# symhostile: wap sym against hostile servers and a hostile workspace.  A
# language server may run the workspace's code (tsserver from
# node_modules, a tsconfig plugin, a proc macro, a build script), so a
# server is played here by tests/py/fakels.py doing what that code could:
# read what its sandbox lets it, flood wap with messages, propose edits.
# universal-ctags reads the hostile workspace itself.
. tests/lib.sh

PY=/usr/bin/python3
# the server's program where its sandbox reads it: its install prefix
mkdir -p "$T/srv/bin"
FAKE=$T/srv/bin/fakels
cp tests/py/fakels.py "$FAKE"
chmod +x "$FAKE"
mkdir -p "$XDG_CONFIG_HOME/wap"
# fake MODE ARGS...: the config's server for .fk files
fake() {
	python3 - "$XDG_CONFIG_HOME/wap/config.json" "$@" <<'PYEOF'
import json, sys
json.dump({"lsp": {"servers": {"fk": {"command": sys.argv[2:], "extensions": ["fk"]}}}}, open(sys.argv[1], "w"))
PYEOF
}
printf 'one two\nthree four\n' > "$W/a.fk"

if [ ! -x $PY ]; then
	ok "fake servers # SKIP no $PY"
else
	# ---- what the server reads: its install prefix, never $HOME ----
	# read_by DIR FILE WHAT: a hover from the server installed in
	# $T/home/DIR/bin that answers with FILE's content
	read_by() {
		mkdir -p "$T/home/$1/bin"
		cp tests/py/fakels.py "$T/home/$1/bin/fakels"
		chmod +x "$T/home/$1/bin/fakels"
		fake "$T/home/$1/bin/fakels" hover-file "$2"
		HOME=$T/home expect "$3" 0 wap sym hover a.fk --line 1 --column 1 --json
	}
	# a server installed in ~/bin (npm's prefix ~): its prefix is $HOME,
	# which holds the user's keys
	mkdir -p "$T/home/.ssh"
	echo "PRIVATE KEY 42" > "$T/home/.ssh/id_ed25519"
	read_by . "$T/home/.ssh/id_ed25519" "hover from a server in ~/bin"
	lacks "the server read no key in \$HOME" "$OUT" "PRIVATE KEY"
	has "its read was refused" "$OUT" "DENIED"
	# and it still reads its own install (the bin dir it was found in)
	read_by . "$T/home/bin/fakels" "hover reading its own program"
	has "the server reads its own bin dir" "$OUT" "hostile language server"
	# a prefix in $HOME is a user's dir of config and data, not only the
	# server's: ~/.cargo holds credentials.toml (a registry token), ~/.local
	# share/ (keyrings, every app's data); the server reads its bin dir and
	# the prefix's lib dirs (its code: pip --user's site-packages)
	mkdir -p "$T/home/.cargo" "$T/home/.local/share/keyrings" "$T/home/.local/lib/python3/site-packages"
	echo 'token = "CARGO TOKEN 42"' > "$T/home/.cargo/credentials.toml"
	echo "KEYRING 42" > "$T/home/.local/share/keyrings/login.keyring"
	echo "OWN MODULE 42" > "$T/home/.local/lib/python3/site-packages/mod.py"
	read_by .cargo "$T/home/.cargo/credentials.toml" "hover from a server in ~/.cargo/bin"
	lacks "the server read no ~/.cargo/credentials.toml" "$OUT" "CARGO TOKEN"
	has "its read of the credentials was refused" "$OUT" "DENIED"
	read_by .local "$T/home/.local/share/keyrings/login.keyring" "hover from a server in ~/.local/bin"
	lacks "the server read nothing of ~/.local/share" "$OUT" "KEYRING"
	read_by .local "$T/home/.local/lib/python3/site-packages/mod.py" "hover reading its own module"
	has "the server reads its prefix's lib dir" "$OUT" "OWN MODULE"
	read_by .cargo "$T/home/.cargo/bin/fakels" "hover reading its own program in ~/.cargo/bin"
	has "the server reads its own bin dir in ~/.cargo" "$OUT" "hostile language server"
fi

# ---- universal-ctags: links out of the root ----
if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
	ok "ctags # SKIP universal-ctags is not installed"
else
	mkdir -p "$T/outside"
	printf 'int outside_secret_fn(void) { return 1; }\n' > "$T/outside/o.c"
	ln -s "$T/outside" "$W/lnk"
	ln -s /usr/include "$W/inc"
	printf 'int inside_fn(void) { return 0; }\n' > "$W/in.c"
	# (EOF is a macro of /usr/include/stdio.h, outside_secret_fn a function
	# outside the root: neither is the workspace's)
	expect "find --ctags of a name only /usr/include has" 1 wap sym find EOF --ctags --json
	jcheck "no symbol of /usr/include through a link" "$OUT" 'j["symbols"] == []'
	expect "find --ctags of a name only a dir outside has" 1 wap sym find outside_secret_fn --ctags --json
	jcheck "no symbol of a file outside through a link" "$OUT" 'j["symbols"] == []'
	expect "find --ctags of a name inside" 0 wap sym find inside_fn --ctags --json
	jcheck "the workspace's own symbols are found" "$OUT" '[s["path"] for s in j["symbols"]] == ["in.c"]'
	expect "find --ctags of a file through a link" 4 wap sym find EOF inc/stdio.h --ctags --json
	rm "$W/lnk" "$W/inc" "$W/in.c"
fi

# ---- a server's messages cost wap a bounded memory ----
if [ -x $PY ] && [ -x /usr/bin/time ]; then
	# diagnostics published for files wap never opened (300 of 1 MB) are
	# no one's to ask for: kept, they grew wap (wap serve for good)
	fake "$FAKE" flood 300 1000000
	/usr/bin/time -f %M -o "$T/rss" wap sym diag a.fk --json >"$T/out" 2>"$T/err"
	same "diag beside a flood of others' diagnostics" "$?" 0
	rss=$(tail -1 "$T/rss")
	echo "# peak RSS $rss kB"
	# (under ASan freed memory waits in its quarantine: only the call is judged)
	if [ -n "${ASAN:-}" ]; then ok "peak RSS # SKIP under ASan"
	elif [ "$rss" -lt 200000 ]; then ok "wap kept no diagnostics of files it did not open (peak $rss kB)"
	else fail "wap kept 300 MB of diagnostics of files it did not open (peak $rss kB)"; fi
fi

# ---- the edits a server proposes ----
if [ -x $PY ]; then
	printf 'one two\nthree four\n' > "$W/a.fk"
	mkdir -p "$W/.git" && echo "[core]" > "$W/.git/config"
	before=$(cat "$W/a.fk")
	ed=0
	for we in \
		'{"changes": {"file:///etc/passwd": []}}' \
		'{"changes": {"@URI@/../../../../etc/x": []}}' \
		'{"changes": {"@URI@%2f..%2f..%2f..%2f..%2fetc/x": []}}' \
		'{"changes": {"https://evil/x": []}}' \
		'{"documentChanges": [{"kind": "create", "uri": "@URI@.new"}]}' \
		'{"documentChanges": [{"kind": "delete", "uri": "@URI@"}]}' \
		'{"changes": {"@URI@": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}, "newText": "X"}, {"range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 5}}, "newText": "Y"}]}}'; do
		ed=$((ed + 1))
		fake "$FAKE" wedit "$we"
		wap sym rename a.fk --line 1 --column 1 --new-name z --json >"$T/out" 2>&1
		rc=$?
		if [ $rc -ne 0 ] && [ "$(cat "$W/a.fk")" = "$before" ] && [ ! -e "$W/a.fk.new" ]; then
			ok "hostile WorkspaceEdit $ed refused, nothing changed ($(jget "$(cat "$T/out")" 'j["code"]'))"
		else
			fail "hostile WorkspaceEdit $ed: exit $rc, $(head -c 300 "$T/out")"
		fi
	done
	gituri=$(python3 -c 'import sys, urllib.parse; print("file://" + urllib.parse.quote(sys.argv[1]))' "$(cd "$W" && pwd -P)/.git/config")
	fake "$FAKE" wedit '{"changes": {"@URI@": [], "'"$gituri"'": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "[core]\nhooksPath = /tmp\n"}]}}'
	expect "an edit in .git refused" 5 wap sym rename a.fk --line 1 --column 1 --new-name z --json
	same ".git/config untouched" "$(cat "$W/.git/config")" "[core]"

	# a server's many small edits: each applied to a copy of the whole
	# file made it quadratic (100,000 edits in 1 MB: 100 GB copied)
	python3 -c 'import sys; open(sys.argv[1], "w").write(("x" * 49 + "\n") * 20000)' "$W/big.fk"
	fake "$FAKE" edits 100000
	t0=$(date +%s)
	expect "100,000 edits of a 1 MB file (dry run)" 0 timeout 120 wap sym rename big.fk --line 1 --column 1 --new-name z --dry-run --json --timeout-ms 60000
	t1=$(date +%s)
	if [ $((t1 - t0)) -lt 45 ]; then ok "applied in $((t1 - t0)) s"; else fail "100,000 edits took $((t1 - t0)) s"; fi
	# a message of many small values: refused by its count before jansson
	# parses it (some 20 times its size: 3 Mi zeros, 6 MB, took 130 MB)
	fake "$FAKE" values 3145728
	expect "a hover of 3 Mi values refused" 125 wap sym hover a.fk --line 1 --column 1 --json
	has "the reason named" "$OUT" "more than 2 Mi JSON values"
	fake "$FAKE" values 1000
	expect "a hover of 1,000 values answered" 0 wap sym hover a.fk --line 1 --column 1 --json
	# and its many locations: each placed by a scan from the file's start
	# (line and column) made refs quadratic too (100,000 at the end of 1 MB)
	fake "$FAKE" refs 100000
	t0=$(date +%s)
	expect "100,000 references near the end of a 1 MB file" 0 timeout 120 wap sym refs big.fk --line 1 --column 1 --json --timeout-ms 60000
	t1=$(date +%s)
	jcheck "the references placed" "$OUT" 'len(j["locations"]) == 100000 and j["locations"][0]["line"] == 20000 and j["locations"][0]["column"] == 2 and j["locations"][0]["text"] == "x" * 49'
	if [ $((t1 - t0)) -lt 45 ]; then ok "placed in $((t1 - t0)) s"; else fail "100,000 references took $((t1 - t0)) s"; fi
	rm -rf "$W/big.fk" "$W/.git"
fi
