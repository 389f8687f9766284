# cli: the global options (--root, --config, --json, --read-only,
# --restrict, --help, --version) are taken before the applet's name as well
# as after it, by `wap` and by a wap-APPLET link alike; an unknown one is
# refused; nothing after "--", and no value of the applet's own options, is
# taken for one.
. tests/lib.sh
unset WAP_ROOT
src=$PWD
R=$T/other
mkdir -p "$R"
echo hello > "$R/f"
echo elsewhere > "$W/f"
cd "$T"

# the root, before and after the applet's name
expect "wap --root X read f" 0 wap --root "$R" read f
has "... reads beneath X" "$OUT" "1: hello"
expect "wap read --root X f" 0 wap read --root "$R" f
has "... reads beneath X" "$OUT" "1: hello"
expect "wap --root=X read f" 0 wap --root="$R" read f
has "... reads beneath X" "$OUT" "1: hello"
expect "wap-read --root X f (link)" 0 wap-read --root "$R" f
has "... reads beneath X" "$OUT" "1: hello"
expect "wap-read f --root X (link, after the operand)" 0 wap-read f --root "$R"
has "... reads beneath X" "$OUT" "1: hello"

# several globals before the applet
expect "wap --json --root X grep hello" 0 wap --json --root "$R" grep hello
jcheck "... one JSON object with the match" "$OUT" "'hello' in json.dumps(j)"
expect "wap --root X --json read f" 0 wap --root "$R" --json read f
jcheck "... the result as JSON" "$OUT" "'hello' in j['content']"
expect "wap --root X --read-only write f" 5 wap --root "$R" --read-only write f --content x
same "... the file unchanged" "$(cat "$R/f")" "hello"
expect "wap --root X --restrict 'f' read f" 5 wap --root "$R" --restrict f read f
expect "wap --restrict=f --root X read f" 5 wap --restrict=f --root "$R" read f
printf '{"security": {"readOnly": true}}' > "$T/ro.json"
expect "wap --config FILE --root X write f" 5 wap --config "$T/ro.json" --root "$R" write f --content x
same "... the file unchanged" "$(cat "$R/f")" "hello"

# help and version in either place
expect "wap --help read" 0 wap --help read
has "... the applet's help" "$OUT" "usage: wap read"
expect "wap --root X read --help" 0 wap --root "$R" read --help
has "... the applet's help" "$OUT" "usage: wap read"
expect "wap -h" 0 wap -h
has "... the main help lists the globals" "$OUT" "--read-only"
expect "wap --version" 0 wap --version
has "... the version" "$OUT" "wap "
expect "wap read --version" 0 wap read --version
has "... the version" "$OUT" "wap "
expect "wap --root X --list" 0 wap --root "$R" --list
has "... lists the applets" "$OUT" "read"

# nettle's fat set-up (its cpuid) runs at the first hash, not at every
# start (scripts/nettle-lazy); NETTLE_FAT_VERBOSE makes it say when
printf 'hello\n' >"$R/nettle.txt"
NETTLE_FAT_VERBOSE=1 wap --root "$R" read --json nettle.txt >"$T/out" 2>"$T/err"
if grep -q '^libnettle: fat' "$T/err"; then
	has "a read sets nettle's dispatch up at its first hash" "$(cat "$T/err")" "sha1_compress_init"
	jcheck "... and the version is git's blob id" "$(cat "$T/out")" \
		'j["version"] == "ce013625030ba8dba906f756967f9e9ca394464a"'
	expect "wap --version sets nothing of nettle up" 0 env NETTLE_FAT_VERBOSE=1 wap --version
	lacks "... no libnettle line" "$ERR" "libnettle"
else
	ok "nettle set up at the first hash # SKIP nettle here is not a fat build"
fi

# the help of wap names every global of the one table, and so do the
# completions made from it
for g in --root --config --json --read-only --restrict --help --version; do
	expect "wap --help names $g" 0 wap --help
	has "... $g" "$OUT" "$g"
done

# refused
expect "wap --bogus read f: unknown global" 2 wap --bogus read f
has "... names it" "$ERR" "unknown option '--bogus'"
expect "wap read --bogus f: unknown option" 2 wap read --bogus f
has "... names it" "$ERR" "'--bogus'"
expect "wap --root (no value)" 2 wap --root
has "... says it needs a value" "$ERR" "needs a value"
expect "wap read f --root (no value)" 2 wap read f --root
has "... says it needs a value" "$ERR" "needs a value"
expect "wap --json=1 read f: a flag takes no value" 2 wap --json=1 --root "$R" read f
expect "wap --root X (no applet)" 2 wap --root "$R"
has "... prints the usage" "$ERR" "usage: wap"
expect "wap --json --root X nosuch" 127 wap --json --root "$R" nosuch
has "... unknown applet" "$ERR" "unknown applet 'nosuch'"

# after "--", what looks like a global is an argument
echo '--json' > "$R/--json"
expect "wap read --root X -- --json: a file named --json" 0 wap read --root "$R" -- --json
has "... read as a file, not as a flag" "$OUT" "1: --json"
expect "wap --root X exec -- echo --json --root /: not taken" 0 wap --root "$R" exec -- echo --json --root /
same "... echo got them" "$OUT" "--json --root /"
# a command's own arguments are its own, "--" or not
expect "wap --root X exec echo --json: the command's argument" 0 wap --root "$R" exec echo --json
same "... echo got it" "$OUT" "--json"
expect "wap-exec --root X echo a --read-only" 0 wap-exec --root "$R" echo a --read-only
same "... echo got it" "$OUT" "a --read-only"
# the value of an applet's option is the applet's
expect "wap --root X grep -e --json: a pattern" 1 wap --root "$R" grep -e --json f
lacks "... not JSON output" "$OUT" "{"
echo 'x --json y' > "$R/g"
expect "wap grep --root X -e --json g: finds it" 0 wap grep --root "$R" -e --json g
has "... the line" "$OUT" "x --json y"
expect "wap grep --root X --regexp=--root g" 1 wap grep --root "$R" --regexp=--root g

# the bash completion made from the same table finds the applet after them
comp() { # WORDS...: complete the last word
	bash -c '. "$0"/completions/wap.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _wap; echo "${COMPREPLY[*]}"' "$src" "$@"
}
has "completion: wap --root X re -> read" "$(comp wap --root /x re)" "read"
has "completion: wap --json --root X grep --ign -> --ignore-case" "$(comp wap --json --root /x grep --ign)" "--ignore-case"
has "completion: wap grep --re -> --regexp" "$(comp wap grep --re)" "--regexp"
has "completion: wap grep --re -> --read-only" "$(comp wap grep --re)" "--read-only"
has "completion: wap --ver -> --version" "$(comp wap --ver)" "--version"

# --config FILE: a value of the wrong kind is refused when the config is
# loaded, naming the key, never taken for the default ("readOnly": "true"
# left the workspace writable) nor wrapped round (a maxFileSize of -1 lifted
# the limit, a maxExecutionTime of 0 refused every command with a message
# about the caller's timeout): found while fuzzing the config loader
# (tests/fuzz/fuzz_config, its inputs in tests/fuzz/seeds-config)
badcfg() { # JSON MESSAGE
	printf '%s' "$1" > "$T/bad.json"
	expect "config $1: refused" 2 wap --config "$T/bad.json" --root "$R" read f
	same "... says which key and why" "$ERR" "wap read: $2"
	same "... the file unchanged" "$(cat "$R/f")" "hello"
}
badcfg '{"security": {"readOnly": "true"}}' 'config: security.readOnly must be true or false'
badcfg '{"security.sandbox": 1}' 'config: security.sandbox must be true or false'
badcfg '{"agentControl": {"security": {"allowCommandExecution": null}}}' \
	'config: security.allowCommandExecution must be true or false'
badcfg '{"limits": {"maxFileSize": -1}}' \
	'config: limits.maxFileSize must be a whole number from 0 to 9223372036854775807 (it is -1)'
badcfg '{"limits": {"maxDirectoryEntries": "500"}}' \
	'config: limits.maxDirectoryEntries must be a whole number from 0 to 9223372036854775807 (it is "500")'
badcfg '{"limits": {"maxSearchResults": 2.5}}' \
	'config: limits.maxSearchResults must be a whole number from 0 to 9223372036854775807 (it is 2.5)'
badcfg '{"limits": {"maxOutputSize": 1e300}}' \
	'config: limits.maxOutputSize must be a whole number from 0 to 9223372036854775807 (it is 1e300)'
badcfg '{"limits": {"maxExecutionTime": 0}}' \
	'config: limits.maxExecutionTime must be a whole number from 1 to 31536000000 (it is 0)'
badcfg '{"limits.maxExecutionTimeCap": 99999999999999}' \
	'config: limits.maxExecutionTimeCap must be a whole number from 1 to 31536000000 (it is 99999999999999)'
badcfg '{"lsp": {"idleTimeout": 1e17}}' \
	'config: lsp.idleTimeout must be a whole number from 0 to 31536000 (it is 1e17)'
badcfg '{"rateLimit": {"requestsPerSecond": -3}}' \
	'config: rateLimit.requestsPerSecond must be a whole number from 0 to 1000000000 (it is -3)'
# what is right still loads: whole numbers written as reals, each kind's edge
printf '{"limits": {"maxFileSize": 4e3, "maxDirectoryEntries": 0, "maxExecutionTime": 1},
  "security": {"readOnly": false}, "lsp": {"idleTimeout": 0}}' > "$T/edge.json"
expect "a config at the edges loads" 0 wap --config "$T/edge.json" --root "$R" info --json
jcheck "... as written" "$OUT" 'j["limits"]["maxFileSize"] == 4000 and j["limits"]["maxExecutionTime"] == 1'
