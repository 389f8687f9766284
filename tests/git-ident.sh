# git-ident: wap git's text output byte for byte against the git CLI's on
# the same repositories: hunk headers, quoted paths, status order, the
# abbreviation length, the detached HEAD and remote HEAD lines of branch.
. tests/lib.sh

export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 TZ=UTC
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
unset WAP_GIT_TOKEN WAP_GIT_AUTHOR_NAME WAP_GIT_AUTHOR_EMAIL GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_DIR GIT_WORK_TREE COLUMNS
mkdir -p "$HOME"
git config --global user.name "Test User"
git config --global user.email test@example.com
git config --global init.defaultBranch main
G() { git -C "$W" "$@"; }

# bytes DESC "GITARGS" "WAPARGS" [DIR]: git GITARGS and wap git WAPARGS print the same
bytes() {
	d=$1 ga=$2 wa=$3 dir=${4:-$W}
	(cd "$dir" && git $ga) > "$T/g.out" 2>&1
	(cd "$dir" && wap git --root "$dir" $wa) > "$T/w.out" 2>&1
	if cmp -s "$T/g.out" "$T/w.out" && [ -s "$T/g.out" ]; then ok "$d"
	else fail "$d: $(diff "$T/g.out" "$T/w.out" | head -8 | tr '\n' '|')"; fi
}

# ---- hunk headers: a function line cut at 80 bytes ends in no space ----
L=$(printf 'f%.0s' $(seq 1 79))
printf '%s     xyz\n1\n2\n3\n4\n5\n6\n7\n' "$L" > "$W/cut.txt"
printf 'tail   \n1\n2\n3\n4\n5\n6\n7\n' > "$W/tail.txt"
printf 'a\nb\nc\n' > "$W/plain.txt"
G init -q && G add -A && G commit -qm base
sed -i 's/6/SIX/' "$W/cut.txt" "$W/tail.txt"
sed -i 's/b/B/' "$W/plain.txt"
bytes "diff: hunk headers as git's (no trailing space)" "diff" "diff"
bytes "diff -U1: hunk headers" "diff -U1" "diff -U1"
G commit -qam second

# ---- status: quoted paths, order, rm --cached, a directory become a file ----
echo x > "$W/é.txt" && echo y > "$W/a\"q.txt" && echo z > "$W/tab	name.txt"
echo s > "$W/sp ace.txt"
mkdir -p "$W/dir" && echo 1 > "$W/dir/one" && echo 2 > "$W/dir/two"
echo k > "$W/keep.txt" && echo r > "$W/zz.txt"
G add -A && G commit -qm names
echo x2 >> "$W/é.txt"						# unstaged, quoted
G rm -q --cached keep.txt					# staged deletion + untracked
rm -r "$W/dir" && echo file > "$W/dir"				# a directory become a file
echo new > "$W/ñ new.txt"					# untracked, quoted
echo a > "$W/0first.txt"					# untracked, sorts before tracked
G mv zz.txt "zz é.txt"						# a rename with a quoted side
echo m >> "$W/plain.txt" && G add plain.txt
bytes "status: quoting, order, rm --cached, dir become file" "status -sb" "status"
bytes "diff --name-only: quoted names" "diff --name-only" "diff --name-only"
G add -A && G commit -qm more

# ---- branch: the detached HEAD line, sorted names, -a with origin/HEAD ----
G branch zeta && G branch alpha
bytes "branch: sorted" "branch" "branch"
G checkout -q --detach HEAD~1
bytes "branch: (HEAD detached at …) first" "branch" "branch"
bytes "status: detached" "status -sb" "status"
G checkout -q main
G tag v1 HEAD~1 && G checkout -q v1
bytes "branch: (HEAD detached at v1)" "branch" "branch"
echo moved > "$W/moved.txt" && G add moved.txt && G commit -qm "on a detached head"
bytes "branch: (HEAD detached from v1)" "branch" "branch"
G checkout -q main
expect "wap checkout of a tag" 0 wap git checkout v1
bytes "branch after wap's checkout: (HEAD detached at v1)" "branch" "branch"
G checkout -q main
git clone -q "$W" "$T/clone"
git -C "$T/clone" branch -q local
bytes "branch -a: remotes/origin/HEAD -> origin/main" "branch -a" "branch -a" "$T/clone"

# ---- abbreviations scale with the packed object count, as git's ----
bytes "show: a small repository abbreviates to 7" "show HEAD" "show HEAD"
B=$T/big
git init -q "$B"
python3 - <<'EOF' | git -C "$B" fast-import --quiet
import sys
out = sys.stdout.buffer
n = 20000
for i in range(n):
    d = b"blob %d\n" % i
    out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (i + 1, len(d), d))
out.write(b"commit refs/heads/main\nmark :%d\ncommitter T <t@e> 1700000000 +0000\ndata 5\nbase\n" % (n + 1))
for i in range(n):
    out.write(b"M 100644 :%d f%05d\n" % (i + 1, i))
out.write(b"\ncommit refs/heads/main\ncommitter T <t@e> 1700000100 +0000\ndata 5\nnext\nfrom :%d\n" % (n + 1))
out.write(b"M 100644 inline f00001\ndata 4\nnew\nM 100644 inline f00002\ndata 4\nnew\n\n")
EOF
git -C "$B" reset -q --hard
echo changed > "$B/f00003"
bytes "show in a repository of 20000 packed objects: 8-digit ids" "show HEAD" "show HEAD" "$B"
bytes "diff: 8-digit index line" "diff" "diff" "$B"
bytes "log --oneline: 8-digit ids" "log --oneline" "log --oneline" "$B"
bytes "log --format=%h %p: 8-digit ids" "log --format=%h:%p" "log --format=%h:%p" "$B"
expect "log --json: shortHash as long as git's %h" 0 wap git --root "$B" log -n 1 --json
jcheck "shortHash is git's %h" "$OUT" "j['entries'][0]['shortHash'] == '$(git -C "$B" log -1 --format=%h)'"
expect "commit: the summary line's id as git's" 0 wap git --root "$B" commit -m c3 f00003
has "commit summary id" "$OUT" "[main $(git -C "$B" log -1 --format=%h)] c3"

# ---- log filters: --author, --grep ----
logs_same() { # DESC "WAPARGS" GITARGS...
	d=$1 wa=$2; shift 2
	got=$(cd "$W" && wap git log --json $wa | python3 -c 'import json,sys; print(" ".join(e["hash"] for e in json.load(sys.stdin)["entries"]))')
	want=$(git -C "$W" log --format=%H "$@" | tr '\n' ' ' | sed 's/ $//')
	same "log $d" "$got" "$want"
}
echo o > "$W/other.txt" && G add other.txt
G -c user.name="Other Person" -c user.email=other@example.org commit -qm "fix: other's bug"
echo p >> "$W/other.txt" && G commit -qam "Feature: More"
logs_same "--author name" "--author Other" --author=Other
logs_same "--author email" "--author example.org" --author=example.org
logs_same "--author regex" "--author ^Test" --author=^Test
logs_same "--grep" "--grep fix" --grep=fix
logs_same "--grep is case-sensitive" "--grep feature" --grep=feature
logs_same "--grep regex" "--grep ^Feat.*More$" "--grep=^Feat.*More\$"
logs_same "--author and --grep" "--author Test --grep names" --author=Test --grep=names
expect "log: a bad --grep regex: exit 2" 2 wap git log --grep '\('
has "bad regex message" "$ERR" "Invalid regex for --grep"
check "git refuses it too" sh -c "! git -C '$W' log --grep '\(' >/dev/null 2>&1"
logs_same "--grep: ( is literal in a basic regex" "--grep (" "--grep=("
logs_same "--author: no match" "--author Nobody" --author=Nobody

# ---- rename pairing: git's similarity score decides, not libgit2's ----
P=$T/pairs
git init -q "$P" && cd "$P"
seq 1 30 > s1; seq 1 30 | sed 's/1/one/' > s2; seq 200 230 > s3; cp s3 s4
python3 -c 'import random; random.seed(3); print("\n".join("row %d" % random.randint(0, 10**6) for _ in range(40)))' > s5
git add . && git commit -qm base
git rm -q s1 s2 s3 s4 s5
seq 1 30 | sed 's/2/two/' > d1; seq 1 30 | sed 's/3/three/' > d2; seq 1 30 > d3
seq 200 230 > d4; seq 200 230 > d5; seq 200 229 > d6
git show HEAD:s5 | sed '1,19d' > d7		# 21 of 40 lines: a rename to git
git show HEAD:s5 | sed '1,21d' > d8		# 19 of 40: not one
git add -A
cd - >/dev/null
bytes "rename pairs as git's (--stat)" "diff --cached --stat" "diff --staged --stat" "$P"
bytes "rename pairs as git's (patch)" "diff --cached" "diff --staged" "$P"
echo tail >> "$P/d7"
bytes "rename pairs with a work tree side (diff HEAD)" "diff HEAD --stat" "diff HEAD --stat" "$P"
# a moved file keeps its base name: git pairs it first when 75% alike
for k in 20 26; do
	N=$T/base$k
	mkdir -p "$N/a" "$N/b" && git init -q "$N" && seq 1 100 > "$N/a/foo.c"
	git -C "$N" add . && git -C "$N" commit -qm base && git -C "$N" rm -q a/foo.c
	seq 1 100 | sed "1,${k}s/\$/x/" > "$N/b/foo.c"
	seq 1 100 | sed '1,2s/$/x/' > "$N/b/bar.c"
	git -C "$N" add -A
	bytes "rename pairs: the same base name, $((100 - k))% alike" "diff --cached --stat" "diff --staged --stat" "$N"
done
bytes "status: staged renames paired as git's" "status -sb" "status" "$P"
bytes "status: base-name pairs" "status -sb" "status" "$T/base20"

# ---- status and diff look only where the stat data changed (prestat.c):
# every kind of change the index's stat data must not hide ----
S=$T/stat
mkdir -p "$S/a/b/c" "$S/d" "$S/e" "$S/f" && git init -q "$S"
for i in 1 2 3; do seq 1 $((i * 10)) > "$S/a/b/c/f$i"; echo "$i" > "$S/d/g$i"; done
echo e > "$S/e/one" && echo f > "$S/f/one" && echo x > "$S/x" && echo y > "$S/y" && echo z > "$S/z"
printf 'ignored/\n*.o\n' > "$S/.gitignore"
git -C "$S" add -A && git -C "$S" commit -qm base
sleep 1		# so the edits below are not racily clean (those are the next test)
bytesd() { # DESC "GITARGS" "WAPARGS": same bytes, empty output included
	(cd "$S" && git $2) > "$T/g.out" 2>&1
	(cd "$S" && wap git --root "$S" $3) > "$T/w.out" 2>&1
	if cmp -s "$T/g.out" "$T/w.out"; then ok "$1"; else fail "$1: $(diff "$T/g.out" "$T/w.out" | head -8 | tr '\n' '|')"; fi
}
bytesd "prestat: a clean tree" "status -sb" "status"
bytesd "prestat: a clean tree, no diff" "diff" "diff"
# same size, inode and mtime (written in place, touch -r): only the ctime tells
cp -p "$S/a/b/c/f1" "$T/f1.keep"
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(8); f.write(b"6"); f.close()' "$S/a/b/c/f1"
touch -r "$T/f1.keep" "$S/a/b/c/f1"
chmod +x "$S/d/g1"						# a mode change
rm "$S/d/g2"							# deleted
rm -r "$S/e" && ln -s f "$S/e"					# a directory become a link
echo new > "$S/a/b/c/new"					# untracked, deep in a tracked dir
echo o > "$S/a/b/c/obj.o"					# ignored there
mkdir -p "$S/u/v" "$S/ignored" && echo u > "$S/u/v/w"		# an untracked directory
echo i > "$S/ignored/i"						# an ignored one
mkdir "$S/empty"						# an empty one (not shown)
mkdir -p "$S/f/sub" && git init -q "$S/f/sub" && echo s > "$S/f/sub/s"	# a repository in a tracked dir
git -C "$S/f/sub" add s && git -C "$S/f/sub" commit -qm s
bytesd "prestat: same size and mtime, mode, deleted, a dir become a link, untracked" "status -sb" "status"
bytesd "prestat: the diff of the same" "diff" "diff"
bytesd "prestat: diff --stat" "diff --stat" "diff --stat"
# racily clean: changed in the second the index was written, same size
git -C "$S" -c advice.addEmbeddedRepo=false add -A && git -C "$S" commit -qm two && echo q > "$S/y"
bytesd "prestat: a racily clean file" "status -sb" "status"
bytesd "prestat: its diff" "diff" "diff"
# staged and unstaged at once: the cache tree no longer matches HEAD
echo staged > "$S/z" && git -C "$S" add z && echo more >> "$S/z"
bytesd "prestat: staged and unstaged" "status -sb" "status"
bytesd "prestat: diff of the work tree with something staged" "diff" "diff"
# ---- log and show text: git's formats, byte for byte ----
# a history with a merge, a non-ASCII author, other time zones, a committer
# who is not the author, a multi-line body (a blank line, trailing blanks,
# an indented line) and a subject paragraph of two lines
L=$T/logs
git init -q "$L" && cd "$L"
lc() { # DATE MSG: commit whatever is staged
	GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q --allow-empty -m "$2"
}
echo 1 > a && git add a && lc "2026-01-02T03:04:05+0530" "first"
echo 2 >> a && git add a
GIT_AUTHOR_NAME="Zoë Ünïcode" GIT_AUTHOR_EMAIL="zoe@exämple.org" \
	lc "2026-02-03T10:00:00-0800" "$(printf 'second: a subject\nthat wraps\n\nBody line one   \n\n    indented line\nlast line\n')"
git checkout -q -b side
echo s > s && git add s && lc "2026-02-04T11:00:00+0000" "side work"
git checkout -q main
echo 3 >> a && git add a
GIT_COMMITTER_NAME="Cee Committer" GIT_COMMITTER_EMAIL=cee@example.net GIT_COMMITTER_DATE="2026-02-06T09:30:00+0100" \
	GIT_AUTHOR_DATE="2026-02-05T08:00:00+0100" git commit -q -m "third on main"
GIT_AUTHOR_DATE="2026-02-07T12:00:00+0200" GIT_COMMITTER_DATE="2026-02-07T12:00:00+0200" \
	git merge -q --no-ff -m "Merge branch 'side'" side
cd - >/dev/null
bytes "log: medium, a merge's Merge: line" "log" "log" "$L"
bytes "log --oneline" "log --oneline" "log --oneline" "$L"
bytes "log -n 2" "log -n 2" "log -n 2" "$L"
for f in oneline short medium full fuller; do
	bytes "log --pretty=$f" "log --pretty=$f" "log --pretty=$f" "$L"
done
bytes "log --format=%H %h %an %ae %ad %s" "log --format=%H|%h|%an|%ae|%ad|%s" "log --format=%H|%h|%an|%ae|%ad|%s" "$L"
bytes "log --format=%cn %ce %cd %ct %at %ci %aI %cs %P %p" \
	"log --format=%cn|%ce|%cd|%ct|%at|%ci|%aI|%cs|%P|%p" "log --format=%cn|%ce|%cd|%ct|%at|%ci|%aI|%cs|%P|%p" "$L"
bytes "log --format=%b (bodies)" "log --format=[%b]" "log --format=[%b]" "$L"
bytes "log --format=%B%n%%" "log --format=%B%n%%" "log --format=%B%n%%" "$L"
bytes "log --pretty=format: (separators)" "log --pretty=format:%h%x09%s" "log --pretty=format:%h%x09%s" "$L"
bytes "log --pretty=tformat:" "log --pretty=tformat:%h%x20%s" "log --pretty=tformat:%h%x20%s" "$L"
bytes "log --pretty=format: empty (only the separators)" "log --pretty=format:" "log --pretty=format:" "$L"
for df in short iso iso-strict unix raw; do
	bytes "log --date=$df" "log --date=$df --pretty=fuller -n 2" "log --date $df --pretty=fuller -n 2" "$L"
	bytes "log --date=$df: %ad %cd" "log --date=$df --format=%ad|%cd|%as" "log --date $df --format=%ad|%cd|%as" "$L"
done
expect "log --date: a format wap does not print is refused" 2 wap git --root "$L" log --date relative
bytes "log --author (medium)" "log --author=Zo" "log --author Zo" "$L"
bytes "log --grep --oneline" "log --grep=side --oneline" "log --grep side --oneline" "$L"
bytes "log --since --until" "log --since=2026-02-01 --until=2026-02-05" "log --since 2026-02-01 --until 2026-02-05" "$L"
bytes "log -- path" "log -- s" "log -- s" "$L"
bytes "show: a merge" "show" "show" "$L"
bytes "show --oneline: a merge" "show --oneline" "show --oneline" "$L"
bytes "show --stat: a merge (against its first parent)" "show --stat" "show --stat" "$L"
# tabs in a message: medium, full and fuller expand them to 8 columns after
# the indent (git's --expand-tabs default), short and format: do not
(cd "$L" && git commit -q --allow-empty -m "$(printf 'tabs\tin the subject\n\n\tcode:\tx\n  é\tafter a two-byte character\n')")
for f in medium full fuller short; do
	bytes "log --pretty=$f: tabs in the message" "log -n 1 --pretty=$f" "log -n 1 --pretty=$f" "$L"
done
bytes "log --format=%B: tabs kept" "log -n 1 --format=%B" "log -n 1 --format=%B" "$L"
bytes "show --stat --oneline: a merge" "show --stat --oneline" "show --stat --oneline" "$L"
bytes "show: a commit with a body and a diff" "show HEAD~2" "show HEAD~2" "$L"
bytes "show --stat" "show --stat HEAD~2" "show --stat HEAD~2" "$L"
bytes "show --oneline" "show --oneline HEAD~2" "show --oneline HEAD~2" "$L"
bytes "show --format=" "show --format=%an%n%s HEAD~2" "show --format=%an%n%s HEAD~2" "$L"
bytes "show --format= (the diff alone)" "show --format= HEAD~2" "show --format= HEAD~2" "$L"
bytes "show --pretty=format: (no terminator before the diff)" "show --pretty=format:%h HEAD~2" "show --pretty=format:%h HEAD~2" "$L"
# log with each commit's diff: -p, --stat, --name-only (none for a merge,
# as git's default), in every format, limited to paths as git limits them
for f in "" --oneline --pretty=short --format=%h%x20%s --pretty=format:%h --format=; do
	for d in -p --stat --name-only; do
		bytes "log $d $f" "log $d $f" "log $d $f" "$L"
	done
done
expect "log -p --stat (git's patch with a diffstat): refused, not printed wrong" 2 wap git --root "$L" log -p --stat
has "  saying so" "$ERR" "-p with --stat"
bytes "log -p -- path (the patch of that path alone)" "log -p -- s a" "log -p -- s a" "$L"
bytes "log -p -n 2 -U 1" "log -p -n 2 -U1" "log -p -n 2 -U 1" "$L"
expect "log -p --json: each entry has its diff and files" 0 wap git --root "$L" log -p -n 3 --json
jcheck "  the merge's empty, the others' as show gives them" "$OUT" \
	'[e["diff"] == "" for e in j["entries"]][1] and all("files" in e for e in j["entries"]) and j["entries"][2]["diff"].startswith("diff --git a/a b/a")'
# the patches all told stop at maxFileSize, and the log with them
printf '{"limits":{"maxFileSize":300}}' > "$T/small300.json"
expect "log -p past maxFileSize: stops there" 0 wap git --root "$L" --config "$T/small300.json" log -p --json
jcheck "  isTruncated, maxBytes, the last entry's diff cut, no more than 300 bytes of diff" "$OUT" \
	'j["isTruncated"] and j["maxBytes"] == 300 and j["entries"][-1]["isTruncated"] and sum(len(e.get("diff", "")) for e in j["entries"]) <= 300'
expect "  the CLI: git's text as far as it goes" 0 wap git --root "$L" --config "$T/small300.json" log -p
same "  a prefix of git's" "$(git -C "$L" log -p | head -c "$(printf %s "$OUT" | wc -c)")" "$OUT"
has "  said aside on stderr" "$ERR" "the patches stop at 300 bytes (maxFileSize)"
expect "log --format: an unknown placeholder is refused, not printed wrong" 2 wap git --root "$L" log --format=%ar
expect "log -n 1: git's text on stdout, nothing else" 0 wap git --root "$L" log -n 1 --oneline
same "log -n 1 --oneline" "$OUT" "$(git -C "$L" log -n 1 --oneline)"
GIT_AUTHOR_DATE="2026-03-01T00:00:00+0000" GIT_COMMITTER_DATE="2026-03-01T00:00:00+0000" \
	git -C "$L" commit -q --allow-empty --allow-empty-message -m ''
bytes "log: an empty message" "log -n 2" "log -n 2" "$L"
bytes "log --oneline: an empty message" "log -n 2 --oneline" "log -n 2 --oneline" "$L"
bytes "show: an empty commit with an empty message" "show" "show" "$L"
# a name ending in '.' (libgit2 cuts it off; git does not) and a message
# made without git's clean-up: no final newline, trailing blanks
printf 'merged by a web UI  \n\nbody without a final newline' > "$T/rawmsg"
c=$(GIT_AUTHOR_NAME="Mick A." GIT_COMMITTER_NAME="Web U. I." git -C "$L" commit-tree -p HEAD -F "$T/rawmsg" "HEAD^{tree}")
git -C "$L" update-ref refs/heads/main "$c"
bytes "log: a name ending in '.'" "log -n 1 --pretty=fuller" "log -n 1 --pretty=fuller" "$L"
bytes "log --format=%B: a raw message without a final newline" "log -n 2 --format=%B|%b|%s" "log -n 2 --format=%B|%b|%s" "$L"

# ---- attributes of a diff of two trees: the work tree's, not the index's ----
# git show and git diff A B read no index: an attribute staged there and
# not in the work tree (a.txt -diff) does not apply; a diff against the
# work tree reads the index and takes it
A=$T/attrs
git init -q "$A" && echo one > "$A/a.txt" && git -C "$A" add a.txt && git -C "$A" commit -qm one
echo two > "$A/a.txt" && git -C "$A" commit -qam two
echo 'a.txt -diff' > "$A/.gitattributes" && git -C "$A" add .gitattributes && rm "$A/.gitattributes"
bytes "show: attributes staged only are not the work tree's" "show" "show" "$A"
bytes "diff A B: the same" "diff HEAD~1 HEAD" "diff HEAD~1 HEAD" "$A"
bytes "diff A..B: the same" "diff HEAD~1..HEAD" "diff HEAD~1..HEAD" "$A"
bytes "diff REV (the work tree): the index's attributes apply" "diff HEAD~1" "diff HEAD~1" "$A"
echo 'a.txt -diff' > "$A/.gitattributes"
bytes "show: the work tree's attributes apply" "show" "show" "$A"

# ---- diff REV: the files the index says are unchanged are read from the
# work tree (lib/git/reuse.c), unless a filter stands between the work tree
# and the blob: CRLF conversion of a file with CRs, ident, a filter driver ----
R=$T/reuse
git init -q "$R"
printf '* text=auto\n*.id ident\n*.up filter=up\n' > "$R/.gitattributes"
git -C "$R" config filter.up.clean "tr a-z A-Z"
git -C "$R" config filter.up.smudge cat
for i in 1 2 3 4 5 6 7 8; do echo "line $i" >> "$R/plain.txt"; done
cp "$R/plain.txt" "$R/exec.sh" && chmod +x "$R/exec.sh"
printf 'one\r\ntwo\r\nthree\r\n' > "$R/crlf.txt"
printf 'a\n$Id$\nb\n' > "$R/file.id"
printf 'lower case\n' > "$R/file.up"
git -C "$R" add -A && git -C "$R" commit -qm one
sed -i 's/line 4/line FOUR/' "$R/plain.txt" "$R/exec.sh"
printf 'one\r\n2\r\nthree\r\n' > "$R/crlf.txt"
printf 'a\n$Id$\nB\n' > "$R/file.id"
printf 'lower case again\n' > "$R/file.up"
cp "$R/plain.txt" "$R/same-as-plain.txt"
git -C "$R" add -A && git -C "$R" commit -qm two
rm "$R/file.id" && git -C "$R" checkout -- file.id	# ident: "$Id: ... $" in the work tree
sleep 1 && git -C "$R" status --porcelain >/dev/null	# not racily clean
bytes "diff REV: unchanged files read from the work tree, filtered ones not" "diff HEAD~1" "diff HEAD~1" "$R"
bytes "diff REV --stat: the same" "diff HEAD~1 --stat" "diff HEAD~1 --stat" "$R"
# one file changed since the index (then libgit2 runs the filters it knows
# on every work tree side: not the filter driver, so that file leaves)
git -C "$R" rm -q file.up && git -C "$R" commit -qm three
echo "line 9" >> "$R/plain.txt"
bytes "diff REV: a file changed since the index, and the ones that are not" "diff HEAD~2" "diff HEAD~2" "$R"

# ---- a binary file renamed unchanged: git prints no "Binary files ... differ" ----
B=$T/binren
git init -q "$B" && printf 'a\0b\0c' > "$B/bin.dat" && echo t > "$B/t.txt"
git -C "$B" add -A && git -C "$B" commit -qm one
mkdir "$B/d" && git -C "$B" mv bin.dat d/bin.dat && printf 'x\0y' > "$B/other.dat"
git -C "$B" add -A && git -C "$B" commit -qm two
bytes "show: a binary file renamed unchanged, and one added" "show HEAD" "show HEAD" "$B"
bytes "diff A B: the same" "diff HEAD~1 HEAD" "diff HEAD~1 HEAD" "$B"
sleep 1 && git -C "$B" status --porcelain >/dev/null
bytes "diff REV: the same" "diff HEAD~1" "diff HEAD~1" "$B"

# ---- the index as lib/git/prestat.c reads it: versions 2, 3 and 4 ----
# (version 4 writes each path as a cut of the one before and a suffix;
# the paths of 2 and 3 are used where they lie in the file read)
V=$T/iv
git init -q "$V" && mkdir -p "$V/d/e" "$V/d/f"
for f in a d/b d/e/c d/e/long-name-file d/f/g z; do echo "$f" > "$V/$f"; done
git -C "$V" add -A && git -C "$V" commit -qm base
echo changed >> "$V/d/e/c" && rm "$V/d/b" && echo new > "$V/d/f/new"
echo staged >> "$V/z" && git -C "$V" add z
sleep 1	# the changes are then not racily clean: the stat data decides
for v in 2 3 4; do
	git -C "$V" update-index --index-version $v
	# an extended flag (on a file not changed), or git writes version 2
	[ $v = 3 ] && git -C "$V" update-index --skip-worktree a
	same "the index is of version $v" "$(od -An -tu1 -j7 -N1 "$V/.git/index" | tr -d ' ')" "$v"
	bytes "diff: an index of version $v" "diff" "diff" "$V"
	bytes "status: an index of version $v" "status -sb" "status" "$V"
	[ $v = 3 ] && git -C "$V" update-index --no-skip-worktree a
done

# ---- many directories: the status walk holds an fd for each waiting one
# (1,600 on the Linux tree); under a soft fd limit of 256 wap raises it
# and grows its fd table once (lib/fs/walk.c wap_fd_room) ----
M=$T/many
git init -q "$M"
for i in $(seq 1 1500); do mkdir "$M/d$i" && echo "$i" > "$M/d$i/f"; done
git -C "$M" add -A && git -C "$M" commit -qm base
echo changed >> "$M/d777/f" && echo new > "$M/d1234/new"
sleep 1
nofile=$(ulimit -Sn)
ulimit -Sn 256
bytes "diff: 1,500 directories under a soft fd limit of 256" "diff" "diff" "$M"
# (and a new file among them: libgit2 given the candidates' index alone missed it)
bytes "status: 1,500 directories under a soft fd limit of 256, one new file" "status -sb" "status" "$M"
ulimit -Sn "$nofile"

# ---- untracked paths in tracked directories whose entries are all clean:
# status's fast path (lib/git/prestat.c) hands libgit2 an index of the
# candidates alone; a directory none of whose entries is a candidate looked
# untracked to libgit2 ("d/" matched no pathspec: its new file vanished),
# so each directory holding an untracked path brings one clean entry ----
U=$T/untracked
git init -q "$U"
mkdir -p "$U/d/e" "$U/p/q" "$U/a/b/c" "$U/ign" "$U/build" "$U/s" "$U/quiet/x"
for f in d/f d/g d/e/h p/q/f a/b/c/f a/x ign/keep s/t top quiet/x/y; do echo "$f" > "$U/$f"; done
printf '*.o\nbuild/\n' > "$U/.gitignore" && echo '*.tmp' > "$U/d/.gitignore" && echo b > "$U/build/keep"
sleep 1	# none racily clean: their stat data decides, and no entry is a candidate
git -C "$U" add -A && git -C "$U" add -f build/keep && git -C "$U" commit -qm base
echo new > "$U/d/new"
bytes "status: an untracked file among clean tracked files" "status -sb" "status" "$U"
mkdir -p "$U/d/e/sub" && echo x > "$U/d/e/sub/x" && echo n > "$U/p/new" && echo n > "$U/a/b/new"
bytes "status: an untracked directory in a tracked one, a new file beside a tracked directory" \
	"status -sb" "status" "$U"
echo o > "$U/d/x.o" && echo o > "$U/ign/only.o" && mkdir "$U/newo" && echo o > "$U/newo/x.o"
echo t > "$U/d/y.tmp" && echo b > "$U/build/new" && mkdir "$U/d/empty" "$U/d/e/empty2"
bytes "status: ignored files, an ignored directory with a tracked file, empty directories" \
	"status -sb" "status" "$U"
mkdir -p "$U/n/m/k" "$U/d/repo" && echo k > "$U/n/m/k/file" && git init -q "$U/d/repo" && echo r > "$U/d/repo/r"
echo q > "$U/s/é new" && echo changed >> "$U/d/g" && mkdir -p "$U/a/b/c/deep/er" && echo z > "$U/a/b/c/deep/er/z"
bytes "status: nested untracked directories, a repository, a quoted name, a change" "status -sb" "status" "$U"
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
	# the fast path: libgit2 opens no directory without a candidate
	# (its own walk opens each by its path; prestat.c's by its parent's fd)
	(cd "$U" && strace -f -qq -e trace=openat -o "$T/strace" wap git --root "$U" status >/dev/null 2>&1)
	lacks "status: with untracked files, libgit2 walks only the candidates' directories" \
		"$(grep -F "\"$U/quiet" "$T/strace")" quiet
else
	ok "status: with untracked files, libgit2 walks only the candidates' directories # SKIP no strace"
fi

# ---- dates as log.c and pretty.c write them (no gmtime, no printf) and
# abbreviations from the packs alone where no loose directory shares an
# id's first byte (lib/git/repo.c): packed history, then loose commits ----
D=$T/dates
git init -q "$D"
for d in "1999-12-31T23:59:59-0930" "2000-02-29T12:00:00+1245" "1970-01-02T00:00:00+0000" \
	 "2038-01-19T03:14:08+0100" "2026-03-01T00:30:00+0200" "2024-07-04T23:30:00-0700"; do
	GIT_AUTHOR_DATE="$d" GIT_COMMITTER_DATE="$d" git -C "$D" commit -q --allow-empty -m "at $d"
done
git -C "$D" gc -q
for i in 1 2 3; do git -C "$D" commit -q --allow-empty -m "loose $i"; done
for f in medium fuller "format:%ad|%ai|%aI|%at|%as|%cd" "format:%h|%p|%s"; do
	for dt in default iso iso-strict raw short unix; do
		bytes "log --pretty=$f --date=$dt" "log --pretty=$f --date=$dt" "log --pretty=$f --date=$dt" "$D"
	done
done
bytes "log --oneline: packed and loose" "log --oneline" "log --oneline" "$D"

# ---- a diff of two trees looks only at the paths that changed (diff.c
# tree_to_tree: libgit2 would read every tree of both sides): every shape of
# change, against git's show and diff A B ----
P=$T/prune
git init -q "$P"
mkdir -p "$P/big/a/b" "$P/big/c" "$P/deep/x/y/z" "$P/gone/sub" "$P/tf" "$P/zz"
for i in 1 2 3 4 5; do echo "b$i" > "$P/big/a/b/f$i"; echo "c$i" > "$P/big/c/g$i"; done
echo deep > "$P/deep/x/y/z/leaf" && echo keep > "$P/deep/x/keep"
echo g > "$P/gone/sub/g" && echo t > "$P/tf/inner" && echo file > "$P/ft"
echo z > "$P/zz/last" && echo top > "$P/top.txt" && printf '#!/bin/sh\n' > "$P/run.sh"
ln -s top.txt "$P/link"
git -C "$P" add -A && git -C "$P" commit -qm base
echo changed > "$P/deep/x/y/z/leaf"			# deep, beside unchanged trees
git -C "$P" commit -qam "deep change"
git -C "$P" rm -rq gone && mkdir -p "$P/new/dir" && echo n > "$P/new/dir/n"
git -C "$P" add -A && git -C "$P" commit -qm "a tree gone, a tree new"
git -C "$P" rm -rq tf ft && echo now-a-file > "$P/tf" && mkdir "$P/ft" && echo in > "$P/ft/x"
git -C "$P" add -A && git -C "$P" commit -qm "a tree become a file, a file a tree"
chmod +x "$P/run.sh" && ln -sf zz/last "$P/link"
git -C "$P" add -A && git -C "$P" commit -qm "a mode and a link"
git -C "$P" mv big/c/g1 zz/moved && echo z2 >> "$P/zz/last"
git -C "$P" commit -qm "a rename across trees"
git -C "$P" commit -q --allow-empty -m "nothing changed"
for r in HEAD HEAD~1 HEAD~2 HEAD~3 HEAD~4 HEAD~5 HEAD~6; do
	bytes "show $r: only the changed trees read, the same text" "show $r" "show $r" "$P"
	bytes "show --stat $r: the same" "show --stat $r" "show --stat $r" "$P"
done
bytes "diff A B across every change" "diff HEAD~6 HEAD" "diff HEAD~6 HEAD" "$P"
bytes "diff B A (reversed)" "diff HEAD HEAD~6" "diff HEAD HEAD~6" "$P"
bytes "diff A..B --stat" "diff --stat HEAD~5..HEAD~2" "diff --stat HEAD~5..HEAD~2" "$P"
same "diff A A: nothing" "$(wap git --root "$P" diff HEAD HEAD~0 2>&1)" ""

# ---- each file's attributes from its own directories, though libgit2's
# realpath() answers are remembered through an action (git.c): the same
# names in directories with different .gitattributes ----
Q=$T/attrdirs
git init -q "$Q"
for d in a b a/deep c; do
	mkdir -p "$Q/$d"
	for f in one.txt two.dat three.txt; do printf '1\n2\n3\n' > "$Q/$d/$f"; done
done
printf '*.txt -diff\n' > "$Q/a/.gitattributes"
printf '*.dat -diff\n*.txt diff\n' > "$Q/a/deep/.gitattributes"
printf '*.dat binary\n' > "$Q/c/.gitattributes"
git -C "$Q" add -A && git -C "$Q" commit -qm one
for d in a b a/deep c; do for f in one.txt two.dat three.txt; do echo 4 >> "$Q/$d/$f"; done; done
bytes "diff REV: attributes by directory, realpath remembered" "diff HEAD" "diff HEAD" "$Q"
bytes "diff: the same, against the index" "diff" "diff" "$Q"
git -C "$Q" commit -qam two
bytes "show: the same names, attributes by directory" "show" "show" "$Q"

# ---- an action that writes nothing keeps libgit2's stat() and access()
# answers (git.c), but only through itself: in one server, a second diff
# sees the .gitattributes and the config changed after the first ----
R=$T/statmemo
git init -q "$R"
printf 'a\nb\n' > "$R/f.txt"
git -C "$R" add -A && git -C "$R" commit -qm one
echo c >> "$R/f.txt"
out=$(python3 - "$WAP" "$R" <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "serve", "--root", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def call(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())
call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
p.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
def diff(i):
    r = call(i, "tools/call", {"name": "git", "arguments": {"action": "diff"}})
    return r["result"]["content"][0]["text"]
print(diff(2), end="=====\n")
open(sys.argv[2] + "/.gitattributes", "w").write("*.txt -diff\n")
print(diff(3), end="=====\n")
subprocess.run(["git", "-C", sys.argv[2], "config", "diff.noprefix", "true"], check=True)
import os; os.remove(sys.argv[2] + "/.gitattributes")
print(diff(4), end="=====\n")
p.stdin.close(); p.wait()
PY
)
g1=$(git -C "$R" -c diff.noprefix=false diff)
printf '*.txt -diff\n' > "$R/.gitattributes"
g2=$(git -C "$R" -c diff.noprefix=false diff)
rm "$R/.gitattributes"
git -C "$R" config diff.noprefix true
g3=$(git -C "$R" diff)
same "one server, three diffs: each sees the attributes and config of its time" \
	"$out" "$g1
=====
$g2
=====
$g3
====="

# ---- libgit2's realpath() made a component at a time from the kept
# directory (git.c): a root reached through a link, and a link to a link,
# still give each file the attributes of its own directories ----
for d in a b a/deep c; do for f in one.txt two.dat three.txt; do echo 5 >> "$Q/$d/$f"; done; done
ln -s "$Q" "$T/attrlink"
mkdir -p "$T/linkdir" && ln -s ../attrlink "$T/linkdir/two"
bytes "diff REV through a linked root: attributes by directory" "diff HEAD" "diff HEAD" "$T/attrlink"
bytes "diff through a link to a link" "diff" "diff" "$T/linkdir/two"
bytes "diff --stat through a link to a link" "diff --stat HEAD" "diff --stat HEAD" "$T/linkdir/two"
