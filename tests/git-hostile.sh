# git-hostile: wap git against repositories an agent has booby-trapped.
# Nothing may be written outside the root (through a symlink in the work
# tree or in .git), no object store, common dir or git dir outside the root
# is used, the token goes only to the hosts the invoker named, and a
# checkout never changes a restricted file.
. tests/lib.sh

export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 TZ=UTC
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
unset WAP_GIT_TOKEN WAP_GIT_TOKEN_HOST WAP_GIT_AUTHOR_NAME WAP_GIT_AUTHOR_EMAIL GIT_DIR GIT_WORK_TREE WAP_LANDLOCK_ABI
mkdir -p "$HOME"
git config --global user.name "Test User"
git config --global user.email test@example.com
git config --global init.defaultBranch main
OUTD=$T/outside			# what must stay untouched
# snap: a listing of every file under $OUTD with its content's hash
snap() { (cd "$OUTD" && find . -print0 | sort -z | xargs -0 -r sh -c 'for f; do if [ -f "$f" ] && [ ! -L "$f" ]; then printf "%s %s\n" "$f" "$(md5sum < "$f")"; else printf "%s\n" "$f"; fi; done' sh); }
outside_untouched() { same "$1: nothing written outside the root" "$(snap)" "$BEFORE"; }
fresh_outside() { rm -rf "$OUTD"; mkdir -p "$OUTD"; echo OUTSIDE > "$OUTD/f"; echo log > "$OUTD/file"; BEFORE=$(snap); }
# newrepo DIR: a repository with d/f on main and a branch "other" that
# changes d/f and adds d/g
newrepo() {
	rm -rf "$1"; mkdir -p "$1/d"
	git -C "$1" init -q
	echo v1 > "$1/d/f" && echo top > "$1/top.txt"
	git -C "$1" add -A && git -C "$1" commit -qm base
	git -C "$1" checkout -qb other
	echo v2 > "$1/d/f" && echo g > "$1/d/g" && echo top2 > "$1/top.txt"
	git -C "$1" add -A && git -C "$1" commit -qm other
	git -C "$1" checkout -q main
}
abi=$(python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(max(l.syscall(444, None, 0, 1), 0))')

# Every write wap git makes stays beneath the root: run twice, with wap's
# own checks for links, then with the kernel's layer (Landlock) alone.
outside_suites() {
# ---- 1. a tracked directory replaced by a symlink out of the root ----
	hostile_wt() { # DESC ARGS...: d -> $OUTD, then run wap git ARGS
		d=$1; shift
		newrepo "$W"; fresh_outside
		rm -rf "$W/d" && ln -s "$OUTD" "$W/d"
		"$@" >"$T/out" 2>"$T/err"; st=$?
		outside_untouched "$L$d (exit $st: $(head -c 200 "$T/err"))"
	}
	hostile_wt "checkout other" wap git checkout other
	hostile_wt "checkout other --force" wap git checkout other --force
	hostile_wt "checkout a revision --force" wap git checkout other~0 --force
	hostile_wt "checkout --create from other --force" wap git checkout new --create --from other --force
	hostile_wt "unstage (reset) d/f" wap git reset d/f
	hostile_wt "add d/f" wap git add d/f
	# the same through a symlinked parent two levels down
	newrepo "$W"; fresh_outside
	mkdir -p "$OUTD/deep" && BEFORE=$(snap)
	rm -rf "$W/d" && ln -s "$OUTD/deep/.." "$W/d"
	wap git checkout other --force >/dev/null 2>&1
	outside_untouched "${L}checkout --force through d -> outside/deep/.."
	
	# pull (fast-forward) into a work tree whose d points out of the root
	newrepo "$W/up"
	rm -rf "$W/cl" && git clone -q "$W/up" "$W/cl" 2>/dev/null
	git -C "$W/cl" branch -q --set-upstream-to=origin/other main
	fresh_outside
	rm -rf "$W/cl/d" && ln -s "$OUTD" "$W/cl/d"
	wap git pull --dir cl >/dev/null 2>&1
	outside_untouched "${L}pull (fast-forward) with d -> outside"
	
# ---- 2. files inside .git that are symlinks out of the root ----
	hostile_git() { # DESC SETUP ARGS...: SETUP (a shell snippet) in .git, then wap git ARGS
		d=$1 setup=$2; shift 2
		newrepo "$W"; fresh_outside
		echo change >> "$W/top.txt"
		(cd "$W/.git" && eval "$setup")
		BEFORE=$(snap)
		"$@" >"$T/out" 2>"$T/err"; st=$?
		outside_untouched "$L$d (exit $st: $(head -c 200 "$T/err"))"
	}
	hostile_git "commit, .git/logs/HEAD -> outside file" 'rm -f logs/HEAD; ln -s "$OUTD/file" logs/HEAD' \
		wap git commit -m x top.txt
	hostile_git "commit, .git/logs -> outside dir" 'cp -r logs/. "$OUTD/"; rm -rf logs; ln -s "$OUTD" logs' \
		wap git commit -m x top.txt
	hostile_git "commit, .git/refs/heads -> outside dir" 'cp -r refs/heads/. "$OUTD/"; rm -rf refs/heads; ln -s "$OUTD" refs/heads' \
		wap git commit -m x top.txt
	hostile_git "commit, .git/objects -> outside dir" 'cp -r objects/. "$OUTD/"; rm -rf objects; ln -s "$OUTD" objects' \
		wap git commit -m x top.txt
	hostile_git "add, .git/index -> outside file" 'cp index "$OUTD/index"; rm index; ln -s "$OUTD/index" index' \
		wap git add top.txt
	hostile_git "unstage, .git/index -> outside file" 'cp index "$OUTD/index"; rm index; ln -s "$OUTD/index" index' \
		wap git reset top.txt
	hostile_git "checkout, .git/index -> outside file" 'cp index "$OUTD/index"; rm index; ln -s "$OUTD/index" index' \
		wap git checkout other --force
	hostile_git "checkout, .git/HEAD -> outside file" 'cp HEAD "$OUTD/HEAD"; rm HEAD; ln -s "$OUTD/HEAD" HEAD' \
		wap git checkout other --force
	hostile_git "branch --create, .git/refs/heads -> outside dir" 'cp -r refs/heads/. "$OUTD/"; rm -rf refs/heads; ln -s "$OUTD" refs/heads' \
		wap git branch --create x
	hostile_git "branch --delete, .git/packed-refs -> outside file" 'git pack-refs --all; cp packed-refs "$OUTD/packed-refs"; rm packed-refs; ln -s "$OUTD/packed-refs" packed-refs' \
		wap git branch --delete other --force
	hostile_git "init again, .git/config -> outside file" 'cp config "$OUTD/config"; rm config; ln -s "$OUTD/config" config' \
		wap git init
	hostile_git "checkout with upstream, .git/config -> outside file" 'git update-ref refs/remotes/origin/topic HEAD; git config remote.origin.url /nonexistent; cp config "$OUTD/config"; rm config; ln -s "$OUTD/config" config' \
		wap git checkout topic
	
	# fetch: FETCH_HEAD and the remote-tracking refs
	hostile_fetch() { # DESC SETUP
		newrepo "$W"; newrepo "$W/src"; fresh_outside
		git -C "$W/src" commit -q --allow-empty -m newer
		git -C "$W" remote add origin "$W/src"
		(cd "$W/.git" && eval "$2")
		BEFORE=$(snap)
		# the slow unwinder: libgit2 leaks when the indexer cannot start (lsan-libgit2.supp)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" wap git fetch origin >"$T/out" 2>"$T/err"; st=$?
		outside_untouched "$L$1 (exit $st: $(head -c 200 "$T/err"))"
	}
	hostile_fetch "fetch, .git/FETCH_HEAD -> outside file" 'ln -s "$OUTD/file" FETCH_HEAD'
	hostile_fetch "fetch, .git/refs/remotes -> outside dir" 'ln -s "$OUTD" refs/remotes'
	hostile_fetch "fetch, .git/objects/pack -> outside dir" 'rm -rf objects/pack; ln -s "$OUTD" objects/pack'
	
}
L="" outside_suites
export WAP_GIT_NO_LINK_CHECKS=1
L="Landlock alone: " outside_suites
newrepo "$W"; fresh_outside; rm -rf "$W/d" && ln -s "$OUTD" "$W/d"
expect "Landlock alone: checkout --force through d -> outside: exit 4" 4 wap git checkout other --force
has "Landlock alone: says writes stay beneath the root" "$ERR" "may read and write only beneath the workspace root"
newrepo "$W"; fresh_outside; echo change >> "$W/top.txt"
rm -f "$W/.git/logs/HEAD" && ln -s "$OUTD/file" "$W/.git/logs/HEAD"
expect "Landlock alone: commit, .git/logs/HEAD -> outside: exit 4" 4 wap git commit -m x top.txt
has "Landlock alone: says so" "$ERR" "may read and write only beneath the workspace root"
# reads: what .git names outside the root is refused by the kernel, whatever
# wap's own readers of .git make of it (their checks are off here)
newrepo "$W"; fresh_outside; echo change >> "$W/top.txt"
printf '[user]\n\tname = Outside Secret\n\temail = secret@outside\n' > "$OUTD/secret.cfg"
printf '[include]\n\tpath = %s\n' "$OUTD/secret.cfg" >> "$W/.git/config"
expect "Landlock alone: commit, .git/config includes an outside file: exit 4" 4 wap git commit -m x top.txt
has "Landlock alone: says the read is refused" "$ERR" "may read and write only beneath the workspace root"
lacks "Landlock alone: the outside config's name is not the author" "$(git -C "$W" log -1 --format=%an)" "Outside Secret"
newrepo "$W"; newrepo "$OUTD/o"
git -C "$OUTD/o" commit -q --allow-empty -m OUTSIDE-COMMIT
echo "$OUTD/o/.git/objects" > "$W/.git/objects/info/alternates"
# (the slow unwinder: libgit2 leaks its odb when an alternate cannot be read, lsan-libgit2.supp)
expect "Landlock alone: show of an object only in an outside alternate: exit 2" 2 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" wap git show "$(git -C "$OUTD/o" rev-parse HEAD)"
lacks "Landlock alone: the outside commit is not shown" "$OUT" "OUTSIDE-COMMIT"
has "Landlock alone: it is unknown here" "$ERR" "Unknown revision"
unset WAP_GIT_NO_LINK_CHECKS
# a .gitignore linked to a file outside: git does not follow the link (its
# patterns would tell the outside file's lines); wap is refused the read and
# lists what git lists
newrepo "$W"; fresh_outside; printf '*.txt\n' > "$OUTD/ign"
ln -s "$OUTD/ign" "$W/.gitignore"; echo n > "$W/new.txt"
expect "status, .gitignore -> outside file: exit 0" 0 wap git status
has "status, .gitignore -> outside file: its patterns are not read (new.txt listed, as git lists it)" "$OUT" "?? new.txt"
has "status, .gitignore -> outside file: git lists it too" "$(git -C "$W" status --porcelain 2>/dev/null)" "?? new.txt"
rm -f "$W/.gitignore" "$W/new.txt"
# $HOME the workspace: its global config is the workspace's, and what it
# includes from outside is not read, by init (no repository opened first)
# as by the rest; with wap's checks (refused before anything is made) and
# with the kernel's layer alone
rm -rf "$W"/*; mkdir -p "$W/home"; fresh_outside
printf '[init]\n\tdefaultBranch = outsidesecret\n' > "$OUTD/leak.cfg"
printf '[include]\n\tpath = %s\n' "$OUTD/leak.cfg" > "$W/home/.gitconfig"
expect "init, \$HOME in the root whose .gitconfig includes an outside file: exit 4" 4 env HOME="$W/home" XDG_CONFIG_HOME="$W/home/.config" wap git init nr
has "... says the include is refused" "$ERR" "home/.gitconfig names $OUTD/leak.cfg in include.path"
check "... nothing made" test ! -e "$W/nr"
expect "Landlock alone: init, the same: exit 4" 4 env WAP_GIT_NO_LINK_CHECKS=1 HOME="$W/home" XDG_CONFIG_HOME="$W/home/.config" wap git init nr
has "Landlock alone: says the read is refused" "$ERR" "may read and write only beneath the workspace root"
lacks "Landlock alone: the outside branch name is not used" "$(cat "$W/nr/.git/HEAD" 2>/dev/null)" "outsidesecret"
rm -rf "$W/home" "$W/nr"
# $HOME the workspace: the user's set-up there is the workspace's, and no
# link in it steers what the kernel lets libgit2 read.  XDG ignore linked
# to a file outside (its lines would hide the files they name), XDG
# attributes linked to / (every file readable), then an alternate and a
# ref linked to another repository's
rm -rf "$W"/*; fresh_outside; printf '*.txt\n' > "$OUTD/secret"
newrepo "$W"; mkdir -p "$W/home/.config/git"; echo n > "$W/new.txt"
ln -s "$OUTD/secret" "$W/home/.config/git/ignore"
expect "\$HOME in the root, ~/.config/git/ignore -> outside file: status exit 0" 0 env HOME="$W/home" XDG_CONFIG_HOME= wap git status
has "... the outside lines are not read as patterns (new.txt listed)" "$OUT" "?? new.txt"
rm "$W/home/.config/git/ignore"; ln -s / "$W/home/.config/git/attributes"
newrepo "$OUTD/o"; echo OTHER-REPO-SECRET > "$OUTD/o/s.txt"; git -C "$OUTD/o" add s.txt; git -C "$OUTD/o" commit -qm o
echo "$OUTD/o/.git/objects" > "$W/.git/objects/info/alternates"
expect "Landlock alone: \$HOME in the root, ~/.config/git/attributes -> /: show of an outside object: exit 2" 2 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" WAP_GIT_NO_LINK_CHECKS=1 HOME="$W/home" XDG_CONFIG_HOME= wap git show "$(git -C "$OUTD/o" rev-parse HEAD)"
lacks "Landlock alone: ... the outside repository's file is not shown" "$OUT$ERR" "OTHER-REPO-SECRET"
rm "$W/.git/objects/info/alternates"
ln -s "$OUTD/o/.git/refs/heads/main" "$W/.git/refs/heads/stolen"
wap git branch --json > "$T/out" 2>&1
lacks "\$HOME in the root, attributes -> /: a ref linked to an outside repository's is not read" "$(cat "$T/out")" "$(git -C "$OUTD/o" rev-parse HEAD)"
rm -rf "$W/home" "$W/.git/refs/heads/stolen" "$W/new.txt"
# what wap reads to check where .git and alternates lead is read whole, or
# refused: libgit2 reads all of it, and an outside path after 64 KiB of
# comments (alternates) or a gitdir past 4 KiB (.git) went unchecked
newrepo "$W"; rm -rf "$OUTD/o"; newrepo "$OUTD/o"
{ i=0; while [ $i -lt 1100 ]; do printf '#%063d\n' 0; i=$((i+1)); done; echo "$OUTD/o/.git/objects"; } > "$W/.git/objects/info/alternates"
expect "alternates past 64 KiB: exit 4" 4 wap git show "$(git -C "$OUTD/o" rev-parse HEAD)"
has "... says it is too long to check" "$ERR" "alternates is longer than the 65535 bytes"
rm -rf "$W"/* "$W/.git"; mkdir -p "$W/inner"
p=inner/; while [ ${#p} -lt 4100 ]; do p="$p./"; done
printf 'gitdir: %s../../outside/o/.git\n' "$p" > "$W/.git"
expect "a .git file past 4 KiB: exit 4" 4 wap git log
has "... says it is too long to check" "$ERR" ".git is longer than the 4095 bytes"
rm -rf "$W/.git" "$W/inner"
# a FIFO where libgit2 reads a file is refused, never waited on (it held
# the call, and a server's worker, for good)
newrepo "$W"; mkfifo "$W/.gitignore"; echo n > "$W/new.txt"
expect "a FIFO as .gitignore: status ends, exit 0" 0 timeout 20 wap git status
has "... and lists the rest" "$OUT" "?? new.txt"
rm "$W/.gitignore"; mv "$W/.git/HEAD" "$W/.git/HEAD.keep"; mkfifo "$W/.git/HEAD"
expect "a FIFO as .git/HEAD: log ends, exit 3 (no repository)" 3 timeout 20 wap git log
rm "$W/.git/HEAD"; mv "$W/.git/HEAD.keep" "$W/.git/HEAD"; mkfifo "$W/.gitattributes"; echo change >> "$W/top.txt"
expect "a FIFO as .gitattributes: diff ends, exit 0" 0 timeout 20 wap git diff
has "... and shows the change" "$OUT" "+change"
rm -f "$W/.gitattributes" "$W/new.txt"
# the user's own set-up outside the root is read: a global config's include
mkdir -p "$T/user"; printf '[user]\n\tname = Included User\n' > "$T/user/extra.cfg"
printf '[includeIf "gitdir:/"]\n\tpath = %s\n' "$T/user/extra.cfg" >> "$HOME/.gitconfig"
newrepo "$W"; echo change >> "$W/top.txt"
expect "the user's global config includes a file outside the root: commit exit 0" 0 wap git commit -m x top.txt
same "... its user.name is the author, as git's" "$(git -C "$W" log -1 --format=%an)" "$(git -C "$W" config user.name)"
same "... which is the included one" "$(git -C "$W" log -1 --format=%an)" "Included User"
git config --global --remove-section 'includeIf.gitdir:/'
newrepo "$W"; fresh_outside; rm -rf "$W/d" && ln -s "$OUTD" "$W/d"
expect "checkout --force through d -> outside: exit 2" 2 wap git checkout other --force
has "says the link is in the way" "$ERR" "beyond a symbolic link"
newrepo "$W"; fresh_outside; echo change >> "$W/top.txt"
rm -f "$W/.git/logs/HEAD" && ln -s "$OUTD/file" "$W/.git/logs/HEAD"
expect "commit, .git/logs/HEAD -> outside: exit 4" 4 wap git commit -m x top.txt
has "says the link is refused" "$ERR" ".git/logs/HEAD is a symbolic link"

# a link inside the root is not written through either: a tracked
# directory made a link to .git/hooks or .git would plant hooks or config
inroot() { # DESC LINK-TARGET: d -> LINK-TARGET (inside the root), checkout other --force
	newrepo "$W"; mkdir -p "$W/inr" && echo INR > "$W/inr/f"
	echo HOOK > "$W/.git/hooks/f"
	before=$(cd "$W" && cat inr/f .git/hooks/f .git/config | md5sum)
	rm -rf "$W/d" && ln -s "$2" "$W/d"
	expect "$1: refused (exit 2)" 2 wap git checkout other --force
	has "$1: says why" "$ERR" "beyond a symbolic link"
	same "$1: nothing written through the link" "$(cd "$W" && cat inr/f .git/hooks/f .git/config | md5sum)" "$before"
	check "$1: nor created through it" test ! -e "$W/inr/g" -a ! -e "$W/.git/hooks/g"
}
inroot "d -> a directory inside the root" inr
inroot "d -> .git/hooks" .git/hooks
newrepo "$W"; echo HOOK > "$W/.git/hooks/post-checkout"
rm "$W/top.txt" && ln -s .git/hooks/post-checkout "$W/top.txt"
wap git checkout other --force >/dev/null 2>&1
same "a tracked file made a link to .git/hooks/X is not written through" "$(cat "$W/.git/hooks/post-checkout")" "HOOK"
# a tracked link that becomes a directory on the other branch still works
newrepo "$W"; git -C "$W" checkout -q -b linkb main && git -C "$W" rm -q -r d && ln -s inr "$W/d" && mkdir -p "$W/inr" && echo INR > "$W/inr/f"
git -C "$W" add d && git -C "$W" commit -qm "d is a link" && git -C "$W" checkout -q linkb
expect "a tracked link replaced by a directory: checkout runs" 0 wap git checkout other
check "d is a directory again" test -d "$W/d" -a ! -L "$W/d"
same "inr/f untouched" "$(cat "$W/inr/f" 2>/dev/null)" "INR"
git -C "$W" checkout -q -f main 2>/dev/null

# symlinks that stay inside the root still work
newrepo "$W"; mkdir -p "$W/real"
ln -s ../real "$W/.git/logs-link" 2>/dev/null
expect "checkout in a sane repository" 0 wap git checkout other
same "checkout wrote the work tree" "$(cat "$W/d/g")" "g"
mkdir -p "$T/via" && ln -s "$W" "$T/via/ws"
expect "checkout with the root named through a symlink" 0 wap git --root "$T/via/ws" checkout main
same "and wrote the work tree" "$(cat "$W/d/f")" "v1"
mv "$W/.git/hooks" "$W/inhooks" && ln -s ../inhooks "$W/.git/hooks"
echo more >> "$W/top.txt"
expect "commit with .git/hooks a symlink inside the root (wap writes no hooks)" 0 wap git commit -m more top.txt

# files in .git that are links inside the root are not written through
ingit() { # DESC SETUP ARGS...: SETUP in .git; nothing outside .git changes
	d=$1 setup=$2; shift 2
	newrepo "$W"; echo "SECRET=1" > "$W/s.env"; echo change >> "$W/top.txt"
	(cd "$W/.git" && eval "$setup")
	expect "$d: refused (exit 4)" 4 "$@"
	has "$d: says why" "$ERR" "is a symbolic link"
	same "$d: the file linked to is untouched" "$(cat "$W/s.env")" "SECRET=1"
}
ingit "commit, .git/logs/HEAD -> a restricted file" 'rm logs/HEAD; ln -s ../../s.env logs/HEAD' wap git commit -m x top.txt
ingit "add, .git/index -> a work-tree file" 'rm index; ln -s ../s.env index' wap git add top.txt
ingit "branch --create, .git/refs/heads -> a work-tree dir" 'mkdir ../rh && cp refs/heads/* ../rh/ && rm -rf refs/heads && ln -s ../../rh refs/heads' wap git branch --create x
ingit "checkout, .git/HEAD -> a work-tree file" 'cp HEAD ../s.env; rm HEAD; ln -s ../s.env HEAD; echo "SECRET=1" > ../s.env' wap git checkout other
ingit "init again, .git/description -> a work-tree file" 'rm -f description; ln -s ../s.env description' wap git init
# a push into a local repository inside the root: no links in its git dir
newrepo "$W"; git init -q --bare "$W/pub.git"; mkdir -p "$W/rh"
rm -rf "$W/pub.git/refs/heads" && ln -s ../../rh "$W/pub.git/refs/heads"
git -C "$W" remote add pub "$W/pub.git"
expect "push into a repository whose refs/heads is a link: exit 4" 4 wap git push pub main
check "nothing written through it (push)" test ! -e "$W/rh/main"

# ---- 2. alternates, commondir and gitdir leading out of the root ----
ALT=$T/altrepo
rm -rf "$ALT" && git init -q "$ALT" && echo secret > "$ALT/s" && git -C "$ALT" add s && git -C "$ALT" commit -qm "SECRET-SUBJECT"
alt_commit=$(git -C "$ALT" rev-parse HEAD)
newrepo "$W"
echo "$ALT/.git/objects" > "$W/.git/objects/info/alternates"
expect "show with alternates outside the root: exit 4" 4 wap git show "$alt_commit"
lacks "the outside commit was not read" "$OUT$ERR" "SECRET-SUBJECT"
has "the error names the alternates" "$ERR" "alternates"
expect "log with alternates outside the root: exit 4" 4 wap git log
expect "relative alternates outside the root: exit 4" 4 sh -c 'echo "../../../altrepo/.git/objects" > "$WAP_ROOT/.git/objects/info/alternates"; wap git show '"$alt_commit"
mkdir -p "$W/inalt" && git -C "$W/inalt" init -q && echo x > "$W/inalt/x" && git -C "$W/inalt" add x && git -C "$W/inalt" commit -qm in-root-alt
echo "$W/inalt/.git/objects" > "$W/.git/objects/info/alternates"
expect "alternates inside the root still work" 0 wap git show "$(git -C "$W/inalt" rev-parse HEAD)"
has "the in-root alternate was read" "$OUT" "in-root-alt"
echo "$ALT/.git/objects" > "$W/inalt/.git/objects/info/alternates"
expect "an in-root alternate whose alternates leave the root: exit 4" 4 wap git show "$alt_commit"
lacks "the outside commit was not read (nested)" "$OUT$ERR" "SECRET-SUBJECT"
rm -f "$W/.git/objects/info/alternates"
# a local remote (or clone source) inside the root whose alternates leave it
git init -q --bare "$W/bare.git" && echo "$ALT/.git/objects" > "$W/bare.git/objects/info/alternates"
git -C "$W/bare.git" update-ref refs/heads/stolen "$alt_commit"
git -C "$W" remote add bare "$W/bare.git"
expect "fetch from a remote whose alternates leave the root: exit 4" 4 wap git fetch bare
check "the outside commit was not fetched" sh -c "! git -C '$W' cat-file -e $alt_commit"
expect "clone of such a repository: exit 4" 4 wap git clone bare.git stolen
check "no clone left behind" test ! -e "$W/stolen"
git -C "$W" remote remove bare; rm -rf "$W/bare.git"
rm -rf "$W/.git/objects.keep" && mv "$W/.git/objects" "$W/.git/objects.keep" && ln -s "$ALT/.git/objects" "$W/.git/objects"
expect "objects a symlink out of the root: exit 4" 4 wap git show "$alt_commit"
lacks "the outside commit was not read (objects link)" "$OUT$ERR" "SECRET-SUBJECT"
rm "$W/.git/objects" && mv "$W/.git/objects.keep" "$W/.git/objects"
# one loose-object directory, or one pack, linked to another repository's
git -C "$ALT" repack -qad
altpack=$(basename "$(ls "$ALT"/.git/objects/pack/*.pack)" .pack)
ln -s "$ALT/.git/objects/pack/$altpack.pack" "$W/.git/objects/pack/$altpack.pack"
ln -s "$ALT/.git/objects/pack/$altpack.idx" "$W/.git/objects/pack/$altpack.idx"
expect "a pack linked out of the root: exit 4" 4 wap git show "$alt_commit"
lacks "the outside commit was not read (pack link)" "$OUT$ERR" "SECRET-SUBJECT"
rm "$W/.git/objects/pack/$altpack".*
git -C "$ALT" commit -q --allow-empty -m "SECRET-LOOSE"
loose=$(git -C "$ALT" rev-parse HEAD)
ld=$W/.git/objects/${loose%"${loose#??}"}
[ -d "$ld" ] && mv "$ld" "$ld.keep"
ln -s "$ALT/.git/objects/${loose%"${loose#??}"}" "$ld"
expect "a loose-object directory linked out of the root: exit 4" 4 wap git show "$loose"
lacks "the outside commit was not read (loose link)" "$OUT$ERR" "SECRET-LOOSE"
rm "$ld"; [ -d "$ld.keep" ] && mv "$ld.keep" "$ld"
# one loose object's file linked to another repository's (in a dir of ours)
mkdir -p "$ld" && ln -s "$ALT/.git/objects/${loose%"${loose#??}"}/${loose#??}" "$ld/${loose#??}"
# (the kernel refuses the read: no such object here; without Landlock,
# wap's own look into objects/XX/ refuses it, naming the link)
expect "a loose object's file linked out of the root: exit 2 (not here)" 2 wap git show "$loose"
lacks "the outside commit was not read (loose file link)" "$OUT$ERR" "SECRET-LOOSE"
expect "without Landlock: a loose object's file linked out of the root: exit 4" 4 env WAP_LANDLOCK_ABI=1 wap git show "$loose"
lacks "without Landlock: the outside commit was not read (loose file link)" "$OUT$ERR" "SECRET-LOOSE"
has "without Landlock: the error names the link" "$OUT$ERR" "is a symbolic link out of the workspace root"
rm "$ld/${loose#??}"; rmdir "$ld" 2>/dev/null; [ -d "$ld.keep" ] && mv "$ld.keep" "$ld"

# a ref and a reflog linked out of the root: the outside ref's commit id
# and the outside reflog's lines must not come out, with or without
# Landlock (without it wap's own look into refs/ and logs/ refuses them)
altref=$(git -C "$ALT" rev-parse HEAD)
mkdir -p "$W/.git/refs/heads/deep" "$W/.git/logs/refs/heads/deep"
ln -s "$ALT/.git/refs/heads/$(git -C "$ALT" symbolic-ref --short HEAD)" "$W/.git/refs/heads/deep/out"
# (with Landlock the kernel refuses the read: the ref is unknown, or listed
# by its name alone; without it wap refuses the action, naming the link)
expect "a ref linked out of the root: log exits 2 (not here)" 2 wap git log -n 1 deep/out
lacks "the outside ref's commit id not shown (log)" "$OUT$ERR" "$altref"
expect "a ref linked out of the root: branch lists it" 0 wap git branch
lacks "the outside ref's commit id not shown (branch)" "$OUT$ERR" "${altref%"${altref#???????}"}"
for c in "log -n 1 deep/out" "branch" "status"; do
	expect "without Landlock: $c with a ref linked out of the root: exit 4" 4 env WAP_LANDLOCK_ABI=0 wap git $c
	lacks "without Landlock: the outside ref's commit id not shown ($c)" "$OUT$ERR" "${altref%"${altref#???????}"}"
done
has "without Landlock: the error names the ref's link" "$OUT$ERR" "refs/heads/deep/out is a symbolic link out of the workspace root"
rm "$W/.git/refs/heads/deep/out"
printf '%s %s x <x@x> 1700000000 +0000\tcheckout: moving from main to SECRET-REFLOG\n' "$altref" "$altref" > "$OUTD/reflog"
ln -s "$OUTD/reflog" "$W/.git/logs/refs/heads/deep/log"
expect "without Landlock: a reflog linked out of the root: exit 4" 4 env WAP_LANDLOCK_ABI=0 wap git status
has "without Landlock: the error names the reflog's link" "$OUT$ERR" "logs/refs/heads/deep/log is a symbolic link out of the workspace root"
rm -r "$W/.git/logs/refs/heads/deep" "$W/.git/refs/heads/deep" "$OUTD/reflog"
expect "without Landlock: refs/ and logs/ clean again: status works" 0 env WAP_LANDLOCK_ABI=0 wap git status
# HEAD's reflog linked out, HEAD detached: branch's "(HEAD detached from
# X)" line takes X from the reflog's last checkout, so it would print an
# id read from the outside file
cp "$W/.git/HEAD" "$T/HEAD.keep"
[ -e "$W/.git/logs/HEAD" ] && mv "$W/.git/logs/HEAD" "$T/logsHEAD.keep"
git -C "$W" rev-parse HEAD > "$T/head.id" && cp "$T/head.id" "$W/.git/HEAD"
printf '0000000000000000000000000000000000000000 feedfacefeedfacefeedfacefeedfacefeedface x <x@x> 1700000000 +0000\tcheckout: moving from main to feedface\n' > "$OUTD/reflog"
ln -s "$OUTD/reflog" "$W/.git/logs/HEAD"
expect "HEAD's reflog linked out of the root: branch still runs" 0 wap git branch
lacks "the outside reflog's id not shown" "$OUT$ERR" feedfac
expect "without Landlock: HEAD's reflog linked out of the root: exit 4" 4 env WAP_LANDLOCK_ABI=0 wap git branch
lacks "without Landlock: the outside reflog's id not shown" "$OUT$ERR" feedfac
rm "$W/.git/logs/HEAD" "$OUTD/reflog"
[ -e "$T/logsHEAD.keep" ] && mv "$T/logsHEAD.keep" "$W/.git/logs/HEAD"
cp "$T/HEAD.keep" "$W/.git/HEAD"

# commondir (a linked work tree's pointer to the main repository)
rm -rf "$W/lw" && mkdir -p "$W/lw/gd" && cp "$W/.git/HEAD" "$W/lw/gd/HEAD"
echo "$ALT/.git" > "$W/lw/gd/commondir" && echo "gitdir: $W/lw/gd" > "$W/lw/.git"
expect "commondir outside the root: exit 4" 4 wap git log --dir lw
lacks "the outside log was not read (commondir)" "$OUT$ERR" "SECRET-SUBJECT"
has "the error names the common dir" "$ERR" "outside the workspace root"
echo "../../../altrepo/.git" > "$W/lw/gd/commondir"
expect "relative commondir outside the root: exit 4" 4 wap git log --dir lw
# gitdir (a .git file)
echo "gitdir: $ALT/.git" > "$W/lw/.git"
expect "a .git file naming an outside git dir: exit 4" 4 wap git log --dir lw
lacks "the outside log was not read (gitdir)" "$OUT$ERR" "SECRET-SUBJECT"
echo "gitdir: ../../altrepo/.git" > "$W/lw/.git"
expect "a relative gitdir outside the root: exit 4" 4 wap git log --dir lw
expect "init where a .git file names an outside git dir: exit 4" 4 wap git init lw
rm -f "$W/lw/.git" && mkfifo "$W/lw/.git"
expect "a .git FIFO is refused, not waited on (exit 8)" 8 timeout 10 wap git log --dir lw
rm -rf "$W/lw"
# a linked work tree inside the root works
git -C "$W" worktree add -q "$W/lw2" other 2>/dev/null
expect "a linked work tree inside the root works" 0 wap git log --dir lw2 --json
jcheck "its log is the branch's" "$OUT" 'j["entries"][0]["subject"] == "other"'
rm -rf "$W/lw2"; git -C "$W" worktree prune

# ---- 2. config includes leading out of the root ----
# (another repository's config, whose values would show: an author, a
# remote URL with its credentials)
printf '[user]\n\tname = SECRET-AUTHOR\n[remote "origin"]\n\turl = https://u:SECRET-PW@example.invalid/r\n' > "$T/outside.cfg"
newrepo "$W"
cp "$W/.git/config" "$T/config.keep"
incl() { # DESC TEXT: TEXT appended to .git/config must be refused, nothing of outside.cfg read
	cp "$T/config.keep" "$W/.git/config" && printf '%s\n' "$2" >> "$W/.git/config"
	echo "$1" > "$W/inc.txt"
	expect "$1: exit 4" 4 wap git commit -m inc inc.txt
	lacks "$1: nothing of the outside config shows" "$OUT$ERR" SECRET
	has "$1: the error names the file and the key" "$ERR" "outside.cfg in include.path, outside the workspace root"
	same "$1: no commit by the outside config's author" "$(git -C "$W" log -1 --format=%an)" "Test User"
}
incl "include.path absolute, out of the root" "[include]
	path = $T/outside.cfg"
incl "include.path relative, out of the root" "[include]
	path = ../../outside.cfg"
incl "include.path split by a backslash at a line's end" "[include]
	path = objects\\
/../../../outside.cfg"
incl "includeIf, quoted, spelled in capitals, on the section's line" "[IncludeIf \"gitdir:/\"] PATH = \"$T/outside.cfg\" # note"
# the two readers must agree on the text: libgit2 reads a config by its
# length and skips a byte-order mark, so a NUL in a comment or a BOM before
# [include] hid the include from a reader of C strings (fifth review)
cp "$T/config.keep" "$W/.git/config" && printf '# a comment \0 hides what follows\n[include]\n\tpath = %s\n' "$T/outside.cfg" >> "$W/.git/config"
echo nul > "$W/inc.txt"
expect "a NUL in the config before an include: refused" 4 wap git commit -m inc inc.txt
lacks "a NUL before an include: nothing of the outside config shows" "$OUT$ERR" SECRET
has "a NUL before an include: the error says why" "$ERR" ".git/config holds a NUL byte"
same "a NUL before an include: no commit by the outside config's author" "$(git -C "$W" log -1 --format=%an)" "Test User"
{ printf '\357\273\277[include]\n\tpath = %s\n' "$T/outside.cfg"; cat "$T/config.keep"; } > "$W/.git/config"
echo bom > "$W/inc.txt"
expect "a BOM before [include] on the first line: refused" 4 wap git commit -m inc inc.txt
lacks "a BOM before [include]: nothing of the outside config shows" "$OUT$ERR" SECRET
has "a BOM before [include]: the include is named" "$ERR" "outside.cfg in include.path, outside the workspace root"
{ printf '\357\273\277'; cat "$T/config.keep"; } > "$W/.git/config"
expect "a BOM before a config with no include: read as git reads it" 0 wap git status
cp "$T/outside.cfg" "$HOME/outside.cfg"
incl "include.path under ~" "[include]
	path = ~/outside.cfg"
printf '[include]\n\tpath = %s\n' "$T/outside.cfg" > "$W/in.cfg"
incl "an include inside the root that includes one outside" "[include]
	path = ../in.cfg"
rm -f "$HOME/outside.cfg"
printf '[user]\n\tname = Inside Author\n' > "$W/in.cfg"
cp "$T/config.keep" "$W/.git/config" && printf '[include]\n\tpath = ../in.cfg\n\tpath = missing.cfg\n' >> "$W/.git/config"
echo inc > "$W/inc.txt"
expect "an include inside the root (and one missing) is followed" 0 wap git commit -m inc inc.txt
expect "its values are used" 0 wap git log -n1 --format=%an
same "the author from the included file" "$OUT" "Inside Author"
cp "$T/config.keep" "$W/.git/config"
# a global config the workspace holds ($HOME in the root) is checked the
# same way; ~ in the repository's config is $HOME
mkdir -p "$W/h" && printf '[include]\n\tpath = %s\n' "$T/outside.cfg" > "$W/h/.gitconfig"
echo h > "$W/inc.txt"
expect "a ~/.gitconfig in the root including one outside: exit 4" 4 env HOME="$W/h" wap git commit -m inc inc.txt
has "it names it" "$ERR" "h/.gitconfig names $T/outside.cfg in include.path"
lacks "no commit by the outside config's author (~/.gitconfig)" "$(git -C "$W" log -1 --format=%an)" SECRET
printf '[user]\n\tname = Home In Root\n\temail = h@example.com\n' > "$W/h/in.cfg"
printf '[include]\n\tpath = ~/in.cfg\n' > "$W/h/.gitconfig"
expect "a ~/.gitconfig in the root including ~/in.cfg, in the root too, is followed" 0 env HOME="$W/h" wap git commit -m inc inc.txt
same "the author from ~/in.cfg" "$(git -C "$W" log -1 --format=%an)" "Home In Root"
rm -rf "$W/h"
# the ignore and attribute files the config names: which names an outside
# file hides would tell its lines
echo SECRET-LINE > "$T/outside.excl"
newrepo "$W"
touch "$W/SECRET-LINE"
for key in core.excludesFile core.attributesFile; do
	for v in "$T/outside.excl" ../../outside.excl; do
		git -C "$W" config "$key" "$v"
		expect "$key $v: exit 4" 4 wap git status --json
		has "$key $v: the error names it" "$OUT$ERR" "outside.excl in $key, outside the workspace root"
		git -C "$W" config --unset "$key"
	done
done
# the same through links in the git dir: info/exclude, info/attributes,
# and what libgit2 reads at its top (a shared hooks dir is let be)
for f in info/exclude info/attributes ORIG_HEAD; do
	rm -f "$W/.git/$f" && ln -s "$T/outside.excl" "$W/.git/$f"
	expect ".git/$f a link out of the root: exit 4" 4 wap git status --json
	has ".git/$f a link out of the root: the error names it" "$OUT$ERR" ".git/$f is a symbolic link out of the workspace root"
	rm -f "$W/.git/$f"
done
# a work tree's own links and files are not a git dir's: before init (no
# .git), a link out of the root and a file named config that includes one
rm -rf "$W/nogit" && mkdir -p "$W/nogit" && ln -s "$T/outside.excl" "$W/nogit/escape"
printf '[include]\n\tpath = %s\n' "$T/outside.cfg" > "$W/nogit/config" && echo HEAD > "$W/nogit/HEAD"
expect "init in a dir with a link out of the root and a file named config" 0 wap git init nogit
expect "status there" 0 wap git status --dir nogit --json
jcheck "the link and the files are untracked" "$OUT" 'sorted(j["untracked"]) == ["HEAD", "config", "escape"]'
rm -rf "$W/nogit"
mv "$W/.git/hooks" "$T/shared-hooks" && ln -s "$T/shared-hooks" "$W/.git/hooks"
expect "a hooks dir shared from outside the root is let be" 0 wap git status --json
rm "$W/.git/hooks" && mv "$T/shared-hooks" "$W/.git/hooks"
echo SECRET-LINE > "$W/in.excl"
git -C "$W" config core.excludesFile in.excl
expect "core.excludesFile inside the root is followed" 0 wap git status --json
jcheck "what it names is ignored" "$OUT" '"SECRET-LINE" not in j["untracked"]'
git -C "$W" config --unset core.excludesFile
expect "without it the file is untracked" 0 wap git status --json
jcheck "the file shows" "$OUT" '"SECRET-LINE" in j["untracked"]'

# ---- no Landlock: mutating actions refused, reading ones run ----
newrepo "$W"
expect "no Landlock: checkout refused (exit 15)" 15 env WAP_LANDLOCK_ABI=0 wap git checkout other
has "no Landlock: says why" "$ERR" "Landlock"
same "no Landlock: the work tree is untouched" "$(cat "$W/d/f")" "v1"
expect "no Landlock: commit refused" 15 env WAP_LANDLOCK_ABI=0 wap git commit -m x top.txt
expect "no Landlock: branch --create refused" 15 env WAP_LANDLOCK_ABI=0 wap git branch --create nb
expect "Landlock ABI 1 (no REFER): commit refused" 15 env WAP_LANDLOCK_ABI=1 wap git commit -m x top.txt
expect "no Landlock: status still works" 0 env WAP_LANDLOCK_ABI=0 wap git status
expect "no Landlock: log still works" 0 env WAP_LANDLOCK_ABI=0 wap git log
expect "no Landlock, --root /: checkout runs" 0 env WAP_LANDLOCK_ABI=0 wap git --root / checkout other --dir "$W"

# ---- 8. a checkout never changes a restricted file ----
newrepo "$W"
git -C "$W" checkout -q other && echo "SECRET=2" > "$W/x.env" && git -C "$W" add x.env && git -C "$W" commit -qm env2 && git -C "$W" checkout -q main
echo "SECRET=1" > "$W/x.env" && git -C "$W" add x.env && git -C "$W" commit -qm env1
expect "checkout that would change a restricted file: exit 5" 5 wap git checkout other --restrict '*.env'
has "names the restricted path" "$ERR" "x.env"
same "the restricted file is untouched" "$(cat "$W/x.env")" "SECRET=1"
same "the rest of the work tree is untouched too" "$(cat "$W/d/f")" "v1"
same "HEAD did not move" "$(git -C "$W" symbolic-ref HEAD)" "refs/heads/main"
expect "--force does not lift it" 5 wap git checkout other --force --restrict '*.env'
same "the restricted file is still untouched" "$(cat "$W/x.env")" "SECRET=1"
echo "SECRET=local" > "$W/x.env"
expect "a --force checkout that would discard a restricted change: exit 5" 5 wap git checkout main~0 --force --restrict '*.env'
same "the local restricted change is kept" "$(cat "$W/x.env")" "SECRET=local"
git -C "$W" checkout -q -- x.env
git -C "$W" checkout -q -b noenv main~1 && git -C "$W" checkout -q main
expect "a checkout that would delete a restricted file: exit 5" 5 wap git checkout noenv --restrict '*.env'
same "the restricted file is not deleted" "$(cat "$W/x.env")" "SECRET=1"
expect "a checkout not touching the restricted file runs" 0 wap git checkout --create nb --restrict '*.env'
echo "SECRET=3" > "$W/x.env" && git -C "$W" add x.env
expect "reset (unstage) of a restricted file: exit 5" 5 wap git reset x.env --restrict '*.env'
same "its staged change is kept" "$(git -C "$W" diff --cached --name-only)" "x.env"
git -C "$W" reset -q --hard
expect "without the restriction the checkout runs" 0 wap git checkout other
same "and changes the file" "$(cat "$W/x.env")" "SECRET=2"

# a restricted file's contents never leave by git for a place the globs do
# not reach (ninth hostile review): "add ." staged it (to be committed and
# pushed), and a clone of the repository beneath the root checked it out
# where a glob anchored at the root does not see it
newrepo "$W"
mkdir -p "$W/conf" && echo "TOPSECRET" > "$W/conf/a.key" && git -C "$W" add conf && git -C "$W" commit -qm key && git -C "$W" tag keyc
expect "clone of the root's repository under restrictedPaths: exit 5" 5 wap git clone . copy --restrict 'conf/*.key'
check "  no copy made" test ! -e "$W/copy"
expect "  nor of its .git" 5 wap git clone .git copy --restrict 'conf/*.key'
check "  no copy made" test ! -e "$W/copy"
echo "TOPSECRET2" >> "$W/conf/a.key" && echo new > "$W/conf/b.txt" && echo k > "$W/conf/n.key"
expect "add . under restrictedPaths runs" 0 wap git add . --restrict 'conf/*.key'
same "  but stages no restricted file, changed or new" "$(git -C "$W" diff --cached --name-only)" "conf/b.txt"
git -C "$W" reset -q
expect "commit -m MSG . too" 0 wap git commit -m x . --restrict 'conf/*.key'
same "  commits no restricted file" "$(git -C "$W" show --name-only --format= HEAD)" "conf/b.txt"
expect "naming one is refused" 5 wap git add conf/a.key --restrict 'conf/*.key'
expect "cp -r of .git under restrictedPaths refused" 5 wap cp -r .git gd --restrict 'conf/*.key'
check "  no copy made" test ! -e "$W/gd"
expect "  nor of a pack or object in it" 5 wap cp .git/HEAD h --restrict 'conf/*.key'
git clone -q --bare "$W" "$W/bare.git"
expect "a bare repository beneath the root: show runs" 0 wap git --dir bare.git show keyc --json --restrict 'conf/*.key'
lacks "  without the restricted file's contents" "$OUT" TOPSECRET
jcheck "  named as left out" "$OUT" 'j["restricted"] == ["conf/a.key"]'
rm -rf "$W/bare.git"

# ---- 8. the token goes only to the hosts the invoker named ----
PORT_FILE=$T/port
python3 - "$PORT_FILE" "$T/auth.log" <<'EOF' &
import http.server, sys, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f: f.write(self.headers.get("Host", "") + " " + str(self.headers.get("Authorization")) + "\n")
        if self.path.startswith("/redir/"):
            # an off-site redirect: 127.0.0.1 sends the client to localhost
            self.send_response(302); self.send_header("Location", "http://localhost:%d/%s" % (self.server.server_address[1], self.path[7:]))
            self.send_header("Content-Length", "0"); self.end_headers(); return
        self.send_response(401); self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Content-Length", "0"); self.end_headers()
    do_POST = do_GET
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.timeout = 20
for _ in range(30): s.handle_request()
EOF
srv=$!
wait_for 30 [ -s "$PORT_FILE" ]
port=$(cat "$PORT_FILE")
newrepo "$W"
git -C "$W" remote add web "http://127.0.0.1:$port/repo.git"
git -C "$W" remote add web2 "http://localhost:$port/repo.git"
b64=$(printf 'x-access-token:secret-XYZ' | base64)
: > "$T/auth.log"
expect "token without WAP_GIT_TOKEN_HOST: fetch fails (exit 125)" 125 env WAP_GIT_TOKEN=secret-XYZ wap git fetch web
has "says how to allow the host" "$ERR" "WAP_GIT_TOKEN_HOST"
lacks "no token sent without WAP_GIT_TOKEN_HOST" "$(cat "$T/auth.log")" "$b64"
: > "$T/auth.log"
expect "token for another host: fetch fails" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=github.com wap git fetch web
lacks "no token sent to a host not named" "$(cat "$T/auth.log")" "$b64"
: > "$T/auth.log"
expect "token for localhost, remote 127.0.0.1: not sent" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=localhost wap git fetch web
lacks "no token for a different spelling of the host" "$(cat "$T/auth.log")" "$b64"
: > "$T/auth.log"
expect "token for 127.0.0.1:1 (another port): not sent" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=127.0.0.1:1 wap git fetch web
lacks "no token for another port" "$(cat "$T/auth.log")" "$b64"
: > "$T/auth.log"
expect "token for the remote's host: sent (refused, exit 125)" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST="github.com, 127.0.0.1" wap git fetch web
has "the token was sent to the named host" "$(cat "$T/auth.log")" "$b64"
: > "$T/auth.log"
expect "token for host:port: sent" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST="127.0.0.1:$port" wap git fetch web
has "the token was sent to the named host:port" "$(cat "$T/auth.log")" "$b64"
# the agent rewrites the remote's URL: the token does not follow it
git -C "$W" config remote.web.url "http://localhost:$port/evil.git"
: > "$T/auth.log"
expect "remote URL rewritten in .git/config: not sent" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=127.0.0.1 wap git fetch web
lacks "no token to the rewritten URL" "$(cat "$T/auth.log")" "$b64"
git -C "$W" config remote.web.url "http://127.0.0.1:$port/repo.git"
git -C "$W" config remote.web.pushurl "http://localhost:$port/evil.git"
: > "$T/auth.log"
expect "pushurl rewritten: push not sent the token" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=127.0.0.1 wap git push web main
lacks "no token to the rewritten push URL" "$(cat "$T/auth.log")" "$b64"
git -C "$W" config --unset remote.web.pushurl
git -C "$W" config "url.http://localhost:$port/.insteadOf" "http://127.0.0.1:$port/"
: > "$T/auth.log"
expect "insteadOf in .git/config: not sent" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=127.0.0.1 wap git fetch web
lacks "no token through insteadOf" "$(cat "$T/auth.log")" "$b64"
git -C "$W" config --remove-section "url.http://localhost:$port/"
git -C "$W" remote add redir "http://127.0.0.1:$port/redir/repo.git"
git -C "$W" config http.followRedirects true
: > "$T/auth.log"
expect "an off-site redirect is not followed" 125 env WAP_GIT_TOKEN=secret-XYZ WAP_GIT_TOKEN_HOST=127.0.0.1 wap git fetch redir
lacks "no token to the host redirected to" "$(grep '^localhost' "$T/auth.log")" "$b64"
lacks "nor a request to it" "$(cat "$T/auth.log")" "localhost:"
echo secret-XYZ > "$W/tok"
: > "$T/auth.log"
expect "--token-file: the same rule" 125 env WAP_GIT_TOKEN_HOST=localhost wap git fetch web --token-file tok
lacks "no --token-file token to a host not named" "$(cat "$T/auth.log")" "$b64"
kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || :

# ---- an index entry naming a path out of the work tree ("../outside/f",
# with that file's very stat data): status and diff must not follow it
# (prestat.c would have taken it for an unchanged file beside the root);
# libgit2 then refuses such an index ----
fresh_outside
R=$T/ixroot
rm -rf "$R" && mkdir -p "$R" && git -C "$R" init -q && echo a > "$R/a"
git -C "$R" add a && git -C "$R" commit -qm a
python3 - "$R/.git/index" "$OUTD/f" <<'PY'
import hashlib, os, struct, sys
idx, out = sys.argv[1], sys.argv[2]
data = open(idx, "rb").read()
n = struct.unpack(">I", data[8:12])[0]
off, ents = 12, []
for _ in range(n):
    plen = data.index(b"\0", off + 62) - (off + 62)
    ln = (62 + plen + 8) & ~7
    ents.append(data[off:off + ln])
    off += ln
st, body = os.lstat(out), open(out, "rb").read()
oid = hashlib.sha1(b"blob %d\0" % len(body) + body).digest()
path = b"../outside/f"
e = struct.pack(">10I", int(st.st_ctime), st.st_ctime_ns % 10**9, int(st.st_mtime), st.st_mtime_ns % 10**9,
                st.st_dev & 0xffffffff, st.st_ino & 0xffffffff, 0o100644, st.st_uid, st.st_gid, st.st_size)
e += oid + struct.pack(">H", len(path)) + path
e += b"\0" * (8 - (62 + len(path)) % 8)
head = b"DIRC" + struct.pack(">II", 2, n + 1) + e + b"".join(ents)
open(idx, "wb").write(head + hashlib.sha1(head).digest())
PY
expect "an index entry ../outside/f: diff refuses the index" 125 wap git --root "$R" diff
has "libgit2's reason" "$ERR" "invalid"
expect "an index entry ../outside/f: status refuses it too" 125 wap git --root "$R" status
outside_untouched "an index naming ../outside"

# ---- submodules and nested repositories whose .git file names a git dir
# outside the root: status, diff and add open them (to read their HEAD);
# every one passes the top repository's checks first ----
SUBX=$T/subsecret
rm -rf "$SUBX" && git init -q "$SUBX" && echo s > "$SUBX/s" && git -C "$SUBX" add s && git -C "$SUBX" commit -qm sub-secret
subx_head=$(git -C "$SUBX" rev-parse HEAD)
newrepo "$W"
git init -q "$W/sub" && echo x > "$W/sub/x" && git -C "$W/sub" add x && git -C "$W/sub" commit -qm in-sub
git -C "$W" -c protocol.file.allow=always submodule add -q ./sub sub >/dev/null 2>&1
git -C "$W" commit -qm "add sub"
expect "a submodule whose git dir is inside the root: status runs" 0 wap git status
expect "... and diff" 0 wap git diff
rm -rf "$W/sub/.git" && echo "gitdir: $SUBX/.git" > "$W/sub/.git"
expect "a submodule's .git naming an outside git dir: status exit 4" 4 wap git status
has "the error names the submodule's .git" "$ERR" "sub/.git"
expect "... diff exit 4" 4 wap git diff
lacks "the outside repository's HEAD was not read" "$OUT$ERR" "$subx_head"
expect "... diff --staged exit 4" 4 wap git diff --staged
expect "... add exit 4" 4 wap git add top.txt
expect "... commit exit 4" 4 wap git commit -m x top.txt
echo "gitdir: ../../subsecret/.git" > "$W/sub/.git"
expect "... relative, the same: exit 4" 4 wap git diff
lacks "the outside repository's HEAD was not read (relative)" "$OUT$ERR" "$subx_head"
# a submodule dir that is a link to a dir deeper in the root: the .git
# file's relative path is taken from where the dir really is
mkdir -p "$W/deep/er/sm" && rm -rf "$W/sub" && ln -s deep/er/sm "$W/sub"
echo "gitdir: ../../../../subsecret/.git" > "$W/deep/er/sm/.git"
expect "... through a link to a dir deeper in the root: exit 4" 4 wap git diff
lacks "the outside repository's HEAD was not read (through a link)" "$OUT$ERR" "$subx_head"
rm -f "$W/sub" && ln -s "$SUBX" "$W/sub"
expect "... a submodule dir linked to the outside repository: exit 4" 4 wap git diff
lacks "the outside repository's HEAD was not read (linked dir)" "$OUT$ERR" "$subx_head"
rm -f "$W/sub"
expect "a submodule not checked out: status runs" 0 wap git status
# an untracked nested repository: add stores its HEAD, read by opening it
rm -rf "$W/deep" && mkdir -p "$W/nest" && echo "gitdir: $SUBX/.git" > "$W/nest/.git"
git init -q "$T/nestsrc" && echo n > "$T/nestsrc/n" && git -C "$T/nestsrc" add n && git -C "$T/nestsrc" commit -qm n
mv "$T/nestsrc/.git" "$T/nestgit" && echo "gitdir: $T/nestgit" > "$W/nest/.git" && echo n > "$W/nest/n"
nest_head=$(git --git-dir="$T/nestgit" rev-parse HEAD)
expect "add . with a nested repository whose git dir is outside: exit 4" 4 wap git add .
has "the error names the nested .git" "$ERR" "nest/.git"
lacks "its HEAD was not staged" "$(git -C "$W" ls-files -s)" "$nest_head"
rm -rf "$W/nest" && git init -q "$W/nest" && echo n > "$W/nest/n" && git -C "$W/nest" add n && git -C "$W/nest" commit -qm n
expect "a nested repository inside the root: status runs" 0 wap git status
has "and lists it as git does" "$OUT" "?? nest/"

# ---- a diff's text is held to maxFileSize: one blob named by many paths
# (a 400 MB blob stores in 1 MB) made its patch once a path, all held ----
printf '{"limits":{"maxFileSize":4096}}' > "$T/small.json"
newrepo "$W"
for i in 1 2 3 4 5 6; do mkdir -p "$W/b$i"; seq 1 2000 | sed "s/^/line /" > "$W/b$i/big.txt"; done
git -C "$W" add -A && git -C "$W" commit -qm bigs
expect "show of a commit whose patch passes maxFileSize" 0 wap git --config "$T/small.json" show --json
jcheck "the diff stops at maxFileSize, said so, the rest named but not counted" "$OUT" \
	'len(j["diff"]) <= 4096 and j["isTruncated"] and j["maxBytes"] == 4096 and j["uncountedFiles"] == 5 and [f.get("counted", True) for f in j["files"]] == [True] + [False] * 5 and j["diff"].endswith("\n")'
git -C "$W" show --format= HEAD > "$T/gitshow"
jcheck "what is shown is git's text, cut at a line" "$OUT" \
	"j['diff'] == open('$T/gitshow').read()[:len(j['diff'])]"
expect "the CLI's text: the same cut" 0 wap git --config "$T/small.json" show --format=oneline
has "said aside on stderr" "$ERR" "the diff stops at 4096 bytes (maxFileSize); 5 more files not shown"
for i in 1 2 3 4 5 6; do echo more >> "$W/b$i/big.txt"; done
expect "diff of the work tree, the same" 0 wap git --config "$T/small.json" diff --json
jcheck "six files, each small: all counted" "$OUT" 'not j.get("isTruncated") and len(j["files"]) == 6'
for i in 1 2 3 4 5 6; do seq 1 1500 | sed 's/^/changed /' > "$W/b$i/big.txt"; done
expect "diff of the work tree past the limit" 0 wap git --config "$T/small.json" diff --json
jcheck "cut, and the files after it not counted" "$OUT" 'len(j["diff"]) <= 4096 and j["isTruncated"] and j["uncountedFiles"] == 5'
expect "--stat counts every file still" 0 wap git --config "$T/small.json" diff --stat --json
jcheck "no cut for --stat" "$OUT" 'not j.get("isTruncated") and all("counted" not in f for f in j["files"])'
expect "--name-only makes no patch: names, no counts" 0 wap git --config "$T/small.json" diff --name-only --json
jcheck "six names" "$OUT" 'j["diff"].count("\n") == 6 and all(f["counted"] is False for f in j["files"])'
# a blob past 8 times maxFileSize is diffed as binary (git's bigFileThreshold):
# libgit2's patch of 16 MB of newlines took 3 GB
seq 1 1000 | sed "s/$/ and forty bytes more to pass 32 KB in all/" > "$W/b1/big.txt"
expect "a file past 8 x maxFileSize" 0 wap git --config "$T/small.json" diff --json b1/big.txt
jcheck "diffed as binary" "$OUT" 'j["files"][0]["binary"] and "Binary files a/b1/big.txt and b/b1/big.txt differ" in j["diff"]'
# and a side of more than maxFileSize / 2 lines, whatever its bytes: the
# patch costs some 190 bytes a line (8 MB of newlines, under 8 x the
# default maxFileSize, took 1.5 GB); git's text past it is not wap's
mkdir -p "$W/n" && printf 'a\n' > "$W/n/l.txt" && git -C "$W" add n && git -C "$W" commit -qm n
seq 1 2000 > "$W/n/l.txt"
expect "2,000 lines (maxFileSize / 2 is 2,048)" 0 wap git --config "$T/small.json" diff --stat --json n/l.txt
jcheck "  diffed as text" "$OUT" 'not j["files"][0]["binary"] and j["files"][0]["additions"] == 2000'
head -c 3000 /dev/zero | tr '\0' '\n' > "$W/n/l.txt"
expect "3,000 empty lines, 3,000 bytes" 0 wap git --config "$T/small.json" diff --json n/l.txt
jcheck "  diffed as binary" "$OUT" 'j["files"][0]["binary"] and "Binary files a/n/l.txt and b/n/l.txt differ" in j["diff"]'
expect "  --stat says Bin" 0 wap git --config "$T/small.json" diff --stat n/l.txt
has "  with both sides' sizes" "$OUT" "n/l.txt | Bin 2 -> 3000 bytes"
git -C "$W" commit -qm newlines n
expect "the same file in a commit (a stored blob)" 0 wap git --config "$T/small.json" show --json
jcheck "  diffed as binary" "$OUT" 'j["files"][0]["binary"] and j["files"][0]["path"] == "n/l.txt"'
printf 'short\n' > "$W/n/l.txt"
expect "many lines before, few after" 0 wap git --config "$T/small.json" diff --json n/l.txt
jcheck "  diffed as binary" "$OUT" 'j["files"][0]["binary"]'
if [ -z "${ASAN:-}" ]; then
	head -c 8000000 /dev/zero | tr '\0' '\n' > "$W/n/l.txt"
	expect "8 MB of newlines at the default limits, in 200 MB of address space" 0 \
		sh -c 'ulimit -v 200000 && exec "$@"' sh "$WAP" git diff --stat n/l.txt
	has "  diffed as binary" "$OUT" "n/l.txt | Bin 3000 -> 8000000 bytes"
else
	ok "8 MB of newlines in bounded memory # SKIP ASan reserves terabytes"
fi
git -C "$W" checkout -q -- n/l.txt
