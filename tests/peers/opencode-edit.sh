# tests/peers/opencode-edit.sh - OpenCode's own replacer test cases run
# through `wap edit --match opencode`.  The cases (content, oldString,
# newString, replaceAll, fail) are read from OpenCode's test file, and the
# answer each case must give is computed by OpenCode's own replace() from
# its packages/opencode/src/tool/edit.ts (see opencode-edit.mjs); wap must
# leave the same file, or fail where OpenCode throws.
#
# Needs a copy of the OpenCode repository: PEERS_OPENCODE names its git
# directory (read at HEAD, or PEERS_OPENCODE_REV) or a checkout, and node.
# Without them this prints a skip line.  Nothing is downloaded and nothing
# of OpenCode's is kept here.  WAP_EDIT_MODE (default "opencode") picks the
# --match mode under test, to measure the others.
. tests/lib.sh
P=packages/opencode
if [ -z "${PEERS_OPENCODE:-}" ]; then
	echo "ok - opencode edit replacer cases # SKIP no opencode copy (set PEERS_OPENCODE to its git dir or checkout)"
	exit 0
fi
if ! command -v node >/dev/null 2>&1; then
	echo "ok - opencode edit replacer cases # SKIP no node to read OpenCode's test cases"
	exit 0
fi
O=$T/opencode
mkdir -p "$O"
if [ -d "$PEERS_OPENCODE/$P" ]; then
	cp -a "$PEERS_OPENCODE/$P/src/tool/edit.ts" "$O/edit.ts" || exit 1
	grep -rl 'const testCases' "$PEERS_OPENCODE/$P/test" 2>/dev/null | while read -r f; do
		cp "$f" "$O/case-$(basename "$f")"
	done
elif git --git-dir="$PEERS_OPENCODE" rev-parse -q --verify "${PEERS_OPENCODE_REV:-HEAD}^{commit}" >/dev/null 2>&1; then
	rev=${PEERS_OPENCODE_REV:-HEAD}
	git --git-dir="$PEERS_OPENCODE" show "$rev:$P/src/tool/edit.ts" > "$O/edit.ts" || exit 1
	git --git-dir="$PEERS_OPENCODE" ls-tree -r --name-only "$rev" -- "$P/test" | grep '\.test\.ts$' |
	while read -r f; do
		git --git-dir="$PEERS_OPENCODE" show "$rev:$f" > "$O/t" &&
			grep -q 'const testCases' "$O/t" && mv "$O/t" "$O/case-$(basename "$f")"
	done
else
	echo "not ok - PEERS_OPENCODE=$PEERS_OPENCODE is neither an opencode checkout nor a git dir holding $P"
	exit 1
fi
# the replacer tests: a test file importing replace from src/tool/edit
cases=$(grep -l 'import { replace } from "../../src/tool/edit"' "$O"/case-* 2>/dev/null | head -1)
if [ -z "$cases" ]; then
	echo "not ok - no replacer test file (const testCases, replace from src/tool/edit) in $P/test"
	exit 1
fi
TMPDIR=$T node tests/peers/opencode-edit.mjs "$O/edit.ts" "$cases" "$W" "${WAP_EDIT_MODE-opencode}"
