# lint: the house rules a grep can check, so breaking one fails here and
# not later in review.
. tests/lib.sh
# every source of lib/, its subdirectories too (lib/git/...)
libc=$(find lib -name '*.c' | sort)
libch=$(find lib -name '*.[ch]' | sort)
# banned libc calls (as git's banned.h)
hits=$(grep -nE '\b(strcpy|sprintf|vsprintf|strcat|gets|strtok)[[:space:]]*\(' $libc applets/*.c main.c)
same "no banned libc calls (strcpy, sprintf, strcat, gets, strtok)" "$hits" ""
# lib/ returns errors: it never prints, exits or aborts, assert() included
# (a server must outlive a failed call; a forked child
# ends with _exit, which is allowed)
hits=$(grep -nE '(^|[^_a-z])(exit|_Exit|quick_exit|abort|assert|printf|puts|perror|err|errx|warn)[[:space:]]*\(' $libc | grep -vE '^\S+:\s*(/\*|\*)')
same "lib/ never prints, exits or aborts" "$hits" ""
hits=$(grep -nE '\b(stdout|stderr)\b' $libc | grep -vE '^\S+:\s*(/\*|\*)' | grep -vE 'STDOUT_FILENO|STDERR_FILENO|"stdout"|"stderr"')
same "lib/ never writes to stdout or stderr" "$hits" ""
# lib/ never includes anything from applets/
hits=$(grep -n '#include "\(\.\./\)*applets' $libch)
same "lib/ does not include applets/" "$hits" ""
# the layers (ARCHITECTURE.md): lib/FOLDER/x.c includes headers of its own
# folder and of lower layers only, never of a higher one; peers (same rank,
# other folder) only along an edge named here.  A folder not in the table
# fails until it is given a rank.
layers="core:0 fs:1 search:2 edit:2 proc:2 git:2 serve:3"
# edit>git: lib/edit/diff.c and patch.c make diffs with libgit2, loaded and
#   initialised once by wap_git_init (lib/git/git.c)
# git>proc: lib/git/sandbox.c runs each git action under Landlock
peers="edit>git git>proc"
hdrs=$(find lib -mindepth 2 -name '*.h' | sort)
layer_check() {	# FILES...: one line per include that breaks the rule
	# lazy.h is generated into the build dir from lib/core/lazy.list
	grep -Hn '#include "' "$@" | awk -v layers="$layers" -v peers="$peers" -v hdrs="$hdrs" '
	BEGIN {
		n = split(layers, a, " "); for (i = 1; i <= n; i++) { split(a[i], b, ":"); rank[b[1]] = b[2] }
		n = split(peers, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1
		n = split(hdrs, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], b, "/"); home[b[3]] = b[2] }
		home["lazy.h"] = "core"
	}
	{
		split($0, f, ":"); split(f[1], p, "/"); from = p[2]
		h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h)
		if (!(from in rank)) { print f[1] ": folder lib/" from " has no layer rank"; next }
		if (!(h in home)) { print f[1] ":" f[2] ": \"" h "\" is no header of lib/"; next }
		to = home[h]
		if (to == from || rank[to] < rank[from] || ok[from ">" to]) next
		print f[1] ":" f[2] ": " from " (rank " rank[from] ") includes " to "/" h " (rank " rank[to] ")"
	}'
}
same "lib/ layers: no file includes a header of a higher or peer layer" "$(layer_check $libch)" ""
# the rule has teeth: planted includes of a higher layer and of a peer
plant=$(mktemp -d)
mkdir -p "$plant/lib/core" "$plant/lib/search"
printf '#include "strbuf.h"\n#include "ws.h"\n' > "$plant/lib/core/bad.c"
printf '#include "walk.h"\n#include "edit.h"\n' > "$plant/lib/search/bad.c"
hits=$(cd "$plant" && layer_check lib/core/bad.c lib/search/bad.c)
rm -rf "$plant"
same "lib/ layers: planted core -> fs and search -> edit includes are caught" "$hits" \
"lib/core/bad.c:2: core (rank 0) includes fs/ws.h (rank 1)
lib/search/bad.c:2: search (rank 2) includes edit/edit.h (rank 2)"
# no realpath()-and-prefix confinement (lib/proc/landlock.c resolves system
# directories for the command lists, /bin -> /usr/bin and PATH dirs, which
# the agent cannot change; the workspace is never confined that way).
# lib/git/git.c wraps libgit2's own realpath calls (--wrap=realpath, a memo
# through one action): __wrap_realpath and __real_realpath confine nothing.
hits=$(grep -n 'realpath(' $libc applets/*.c | grep -v -e 'lib/fs/ws.c' -e 'lib/proc/landlock.c' |
	grep -vE '^lib/git/git\.c:[0-9]+:.*__(wrap|real)_realpath\(')
same "realpath() only names the root (lib/fs/ws.c) and system dirs (lib/proc/landlock.c)" "$hits" ""
# every file of lib/ says what it is for: '/* NAME - summary', NAME its
# path beneath lib/ (fs/ws.c, git/repo.c)
for f in $libch; do
	n=${f#lib/}
	check "$f starts with '/* $n - summary'" sh -c "head -n 1 '$f' | grep -qF '/* $n - '"
done
# every applet is one file with a header comment of the agreed shape
for f in applets/*.c; do
	check "$f starts with '/* wap NAME: summary'" sh -c "head -n 1 '$f' | grep -qE '^/\* wap [a-z0-9-]+: '"
done
