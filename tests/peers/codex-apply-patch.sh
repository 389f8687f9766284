# tests/peers/codex-apply-patch.sh - Codex's own apply_patch scenarios run
# through `wap edit --patch`.  Each scenario of
# codex-rs/apply-patch/tests/fixtures/scenarios is an input/ tree, a
# patch.txt and the expected/ tree (files and directories) after Codex's
# apply_patch; wap must leave the same tree, except where README.md lists a
# deliberate difference (then wap's own documented result is checked).
#
# Needs a copy of the Codex repository: PEERS_CODEX names its git directory
# (bare or not: the fixtures are read with git archive from HEAD, or
# PEERS_CODEX_REV) or a checkout.  Without one this prints a skip line.
# Nothing is downloaded and nothing of Codex's is kept here.
. tests/lib.sh
S=codex-rs/apply-patch/tests/fixtures/scenarios
if [ -z "${PEERS_CODEX:-}" ]; then
	echo "ok - codex apply_patch scenarios # SKIP no codex copy (set PEERS_CODEX to its git dir or checkout)"
	exit 0
fi
F=$T/codex
mkdir -p "$F"
if [ -d "$PEERS_CODEX/$S" ]; then
	cp -a "$PEERS_CODEX/$S/." "$F/"
elif git --git-dir="$PEERS_CODEX" rev-parse -q --verify "${PEERS_CODEX_REV:-HEAD}^{commit}" >/dev/null 2>&1; then
	git --git-dir="$PEERS_CODEX" archive "${PEERS_CODEX_REV:-HEAD}" "$S" | tar -x -C "$F" --strip-components=5
else
	echo "not ok - PEERS_CODEX=$PEERS_CODEX is neither a codex checkout nor a git dir holding $S"
	exit 1
fi

# Deliberate differences (README.md, "Patches"): wap applies a patch all or
# nothing, where Codex keeps the files it wrote before a later hunk failed.
# For these the check is wap's rule: the tree is left exactly as input/.
deliberate() {
	case $1 in
	015_failure_after_partial_success_leaves_changes) echo "all-or-nothing: a failing patch changes nothing";;
	*) return 1;;
	esac
}

# one line per file (path and content hash) and per directory, sorted
tree() { (cd "$1" 2>/dev/null && find . -mindepth 1 \( -type d -printf 'd %p\n' \) -o \( -type f -printf 'f %p ' -exec sh -c 'md5sum < "$1" | cut -c1-32' sh {} \; \) | LC_ALL=C sort); }

n=0 same_=0
for d in "$F"/*/; do
	d=${d%/}; name=$(basename "$d")
	[ -f "$d/patch.txt" ] || continue
	n=$((n + 1))
	rm -rf "$W" && mkdir -p "$W"
	if [ -d "$d/input" ]; then cp -a "$d/input/." "$W/"; fi
	wap edit --patch - < "$d/patch.txt" > "$T/out" 2> "$T/err"; st=$?
	got=$(tree "$W")
	if why=$(deliberate "$name"); then
		want=$(tree "$d/input")
		if [ "$got" = "$want" ] && [ "$st" != 0 ]; then
			ok "$name: deliberate difference ($why)"
		else
			fail "$name: wanted wap's documented result ($why), exit $st: $(printf '%s' "$got" | head -c 300)"
		fi
		continue
	fi
	want=$(tree "$d/expected")
	if [ "$got" = "$want" ]; then
		ok "$name: Codex's tree"; same_=$((same_ + 1))
	else
		fail "$name: tree differs from Codex's (exit $st: $(head -c 200 "$T/err")): $(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -c 400)"
	fi
done
check "found the scenarios" test "$n" -gt 0
echo "# codex apply_patch: $same_ of $n scenarios give Codex's tree"
