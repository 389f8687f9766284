# tests/peers/replay.sh - a git repository's history replayed as patches
# through `wap edit --patch`.  For each of the last N commits (one parent,
# newest first): the parent's tree is checked out into a scratch
# directory, `git diff --binary PARENT COMMIT` is applied to it, and the
# result must be the commit's tree (every file's bytes, its executable
# bit, every symlink's target).  Then the same with GNU `diff -ruN` of the
# two trees (content and symlinks only: diff -ruN carries no modes, and
# not binary files or symlinks, so a commit with those is not applicable).
#
# REPLAY_REPO (or the first argument) names the repository (its work tree
# or git directory), REPLAY_N (or the second argument) how many commits
# (default 300), REPLAY_REV the newest (default HEAD).  Run from the top of wap's tree:
#   WAP=$PWD/wap bash tests/peers/replay.sh /path/to/repo 300  Without a repository this prints a skip line.  Prints a
# table as TAP comments and one ok/not ok line per patch form.
. tests/lib.sh
R=${1:-${REPLAY_REPO:-}}
N=${2:-${REPLAY_N:-300}}
if [ -z "$R" ] || ! git -C "$R" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	echo "ok - history replay # SKIP no repository (set REPLAY_REPO to a git repository)"
	exit 0
fi
G=$(git -C "$R" rev-parse --absolute-git-dir)
export GIT_DIR=$G
unset WAP_ROOT
# a commit's patch may be larger than wap's 1 MiB default limit (a diff -ruN
# of renamed files holds them whole): the replay measures the patching, so
# the limit is REPLAY_MAX_FILE_SIZE (default 256 MiB)
mkdir -p "$XDG_CONFIG_HOME/wap"
printf '{"limits": {"maxFileSize": %d}}\n' "${REPLAY_MAX_FILE_SIZE:-268435456}" > "$XDG_CONFIG_HOME/wap/config.json"

# tree REV DIR: REV's files into DIR, through a scratch index (the
# repository's own index and work tree are not touched)
tree() {
	rm -rf "$2" "$T/idx"
	mkdir -p "$2"
	GIT_INDEX_FILE=$T/idx git read-tree "$1" &&
	GIT_INDEX_FILE=$T/idx git checkout-index -a -f --prefix="$2/"
}

# same A B [nomode]: the same files and symlinks (bytes, targets) and,
# unless nomode, the same executable files
same_tree() {
	diff -r --no-dereference "$1" "$2" > "$T/treediff" 2>&1 || return 1
	[ "${3:-}" = nomode ] && return 0
	[ "$(cd "$1" && find . -type f -perm /111 | LC_ALL=C sort)" = \
	  "$(cd "$2" && find . -type f -perm /111 | LC_ALL=C sort)" ] ||
		{ echo "executable bits differ" > "$T/treediff"; return 1; }
}

# classify an error message: paths and numbers out
class() { sed -E 's/^wap[^:]*: //; s/"[^"]*"//g; s/[^ ]*\/[^ ]*//g; s/[0-9]+//g; s/  +/ /g' | head -1 | cut -c1-70; }

# one FORM (git or gnu) of commit C, whose parent's tree is in $T/old and
# its own in $T/new: prints "ok", "na REASON" or "fail REASON"
replay() {
	form=$1 c=$2
	if [ "$form" = git ]; then
		git diff --binary --no-ext-diff --no-color --no-textconv "$c^" "$c" > "$T/patch"
		git diff --raw "$c^" "$c" | grep -qE '^:160000 |^:[0-7]{6} 160000 ' &&
			{ echo "na submodule"; return; }
	else
		(cd "$T" && LC_ALL=C diff -ruN --no-dereference old new > patch)
		grep -q '^Binary files \|^Symbolic links \|^File .* is a ' "$T/patch" &&
			{ echo "na binary file or symlink"; return; }
	fi
	[ -s "$T/patch" ] || { echo "na no change"; return; }
	rm -rf "$T/work"
	cp -a "$T/old" "$T/work"
	if ! (cd "$T/work" && WAP_ROOT=$T/work wap edit --patch - < "$T/patch" > /dev/null 2> "$T/err"); then
		echo "fail $(class < "$T/err")"
		return
	fi
	m=
	[ "$form" = gnu ] && m=nomode
	if same_tree "$T/work" "$T/new" $m; then
		echo ok
	else
		echo "fail tree differs: $(head -1 "$T/treediff" | sed "s|$T/||g" | cut -c1-60)"
	fi
}

commits=$(git rev-list --no-merges --max-count="$N" "${REPLAY_REV:-HEAD}")
: > "$T/res.git"
: > "$T/res.gnu"
for c in $commits; do
	git rev-parse -q --verify "$c^" >/dev/null || continue
	if ! tree "$c^" "$T/old" || ! tree "$c" "$T/new"; then
		printf '%s\tna checkout failed\n' "$c" | tee -a "$T/res.git" >> "$T/res.gnu"
		continue
	fi
	for form in git gnu; do
		printf '%s\t%s\n' "$c" "$(replay "$form" "$c")" >> "$T/res.$form"
	done
done

# the repository's name: its directory's (a bare one's parent's when it
# is called .git or repo, as `fetch` mirrors are)
name=$(basename "$G")
case $name in .git|repo) name=$(basename "$(dirname "$G")");; esac
echo "# history replay of $name: $(echo "$commits" | wc -l) commits (--no-merges, newest first)"
printf '# %-14s %10s %10s %8s %8s\n' form applicable rebuilt failed n/a
for form in git gnu; do
	f=$T/res.$form
	ok_=$(grep -c '	ok$' "$f")
	fl=$(grep -c '	fail ' "$f")
	na=$(grep -c '	na ' "$f")
	label="git diff"
	[ "$form" = gnu ] && label="diff -ruN"
	printf '# %-14s %10d %10d %8d %8d\n' "$label" $((ok_ + fl)) "$ok_" "$fl" "$na"
	cut -f2 "$f" | grep '^fail ' | sort | uniq -c | sort -rn | sed 's/^/#     failed: /'
	cut -f2 "$f" | grep '^na ' | sort | uniq -c | sort -rn | sed 's/^/#     n\/a: /'
	grep '	fail ' "$f" | head -3 | sed 's/^/#     e.g. /'
	if [ "$fl" = 0 ]; then ok "$label replay of $name: $ok_ of $ok_ rebuilt exactly"
	else fail "$label replay of $name: $fl of $((ok_ + fl)) not rebuilt"; fi
done
