# wap edit --patch: the corpus in tests/patches (Codex format and unified
# diffs; each case has before/, patch, and after/ or expect-error), the
# git round trip, rollback of a failed commit, dry runs and versions.
. tests/lib.sh
C=$PWD/tests/patches
snap() { (cd "$W" && find . -type f -o -type l | LC_ALL=C sort | while read -r f; do printf '%s %s %s\n' "$f" "$(stat -c %a "$f")" "$(md5sum < "$f")"; done); }
reset() { rm -rf "$W" && mkdir -p "$W" && if [ -d "$1/before" ]; then cp -a "$1/before/." "$W/"; fi; }

n=0
for cd_ in "$C"/*/; do
	cd_=${cd_%/}; name=$(basename "$cd_"); n=$((n + 1))
	reset "$cd_"
	if [ -f "$cd_/expect-error" ]; then
		st=$(sed -n 1p "$cd_/expect-error"); msg=$(sed -n '2,$p' "$cd_/expect-error")
		before=$(snap)
		expect "$name: refused" "$st" wap edit --patch - < "$cd_/patch"
		has "$name: message" "$ERR" "$msg"
		same "$name: every file byte-identical" "$(snap)" "$before"
	else
		expect "$name: applies" 0 wap edit --patch - < "$cd_/patch"
		if [ -f "$cd_/output" ]; then same "$name: output" "$OUT" "$(cat "$cd_/output")"; fi
		if diff -r "$W" "$cd_/after" > "$T/diff" 2>&1; then ok "$name: tree as expected"; else fail "$name: tree differs: $(head -c 600 "$T/diff")"; fi
	fi
done
check "the corpus has at least 20 patches" test "$n" -ge 20

# the new file's mode from "new file mode 100755"
reset "$C/18-git-new-executable"
wap edit --patch - >/dev/null 2>&1 < "$C/18-git-new-executable/patch"
same "new file mode applied" "$(stat -c %a "$W/bin/run.sh")" "755"

# a patch's modes are git's two (100644, 100755), as git apply takes them:
# "new file mode 106777" made a set-user-ID, set-group-ID, world-writable
# file, "new mode 104777" turned an existing one so (tenth hostile review)
reset "$C/18-git-new-executable"
printf 'x\n' > "$W/plain.txt"
printf 'y\n' > "$W/tool.sh"
cat > "$T/suid.patch" <<'EOF'
diff --git a/evil b/evil
new file mode 106777
--- /dev/null
+++ b/evil
@@ -0,0 +1 @@
+#!/bin/sh
diff --git a/plain.txt b/plain.txt
old mode 100644
new mode 104777
diff --git a/tool.sh b/tool.sh
old mode 100644
new mode 100666
EOF
expect "a patch with odd modes applies" 0 wap edit --patch - < "$T/suid.patch"
same "new file mode 106777 is 755" "$(stat -c %a "$W/evil")" "755"
same "new mode 104777 is 755" "$(stat -c %a "$W/plain.txt")" "755"
same "new mode 100666 is 644" "$(stat -c %a "$W/tool.sh")" "644"

# --json: files with status, path, diff, version
reset "$C/05-codex-multi-file"
expect "multi-file patch --json" 0 wap edit --patch - --json < "$C/05-codex-multi-file/patch"
jcheck "json files" "$OUT" '[f["status"] for f in j["files"]]==["A","M","D"] and [f["path"] for f in j["files"]]==["util.c","Makefile","notes.txt"]'
jcheck "json diffs" "$OUT" '"+CFLAGS = -O2 -Wall" in j["files"][1]["diff"] and "new file mode" in j["files"][0]["diff"] and "deleted file mode" in j["files"][2]["diff"] and "version" not in j["files"][2]'
same "json version of a modified file" "$(jget "$OUT" 'j["files"][1]["version"]')" "$(git hash-object "$W/Makefile")"

# stdin, dry run
reset "$C/01-codex-update"
touch -d '2021-03-04 05:06:07' "$W/calc.py"; before=$(snap); mt=$(stat -c '%y' "$W/calc.py")
expect "--patch - --dry-run" 0 wap edit --patch - --dry-run < "$C/01-codex-update/patch"
has "dry run prints the diff" "$OUT" '+    """Subtract b from a."""'
has "dry run says so" "$OUT" "(dry run: nothing written)"
same "dry run changed nothing" "$(snap)" "$before"
expect "dry run --json" 0 wap edit --patch - --dry-run --json < "$C/01-codex-update/patch"
jcheck "dry run json: current version, dryRun" "$OUT" 'j["dryRun"] is True and j["files"][0]["version"]=="'"$(git hash-object "$W/calc.py")"'"'
same "dry run kept the mtime" "$(stat -c '%y' "$W/calc.py")" "$mt"
expect "the same patch from stdin" 0 wap-edit --patch - < "$C/01-codex-update/patch"
check "applied from stdin" diff -r "$W" "$C/01-codex-update/after"
reset "$C/17-git-modify"
expect "a git diff applies once" 0 wap edit --patch - < "$C/17-git-modify/patch"
expect "applying it again fails (its lines are gone)" 11 wap edit --patch - < "$C/17-git-modify/patch"
has "second apply message" "$ERR" "Failed to find expected lines in lib.c (hunk 1)"

# expected version
reset "$C/07-codex-two-hunks"
v=$(git hash-object "$W/cfg.ini")
expect "stale expected version: CONFLICT" 13 wap edit --patch - --expected-version 0000000000000000000000000000000000000000 < "$C/07-codex-two-hunks/patch"
has "conflict message" "$ERR" "Conflict: cfg.ini changed since version 0000000000000000000000000000000000000000 (now $v)"
expect "right expected version" 0 wap edit --patch - --expected-version "$v" < "$C/07-codex-two-hunks/patch"
reset "$C/05-codex-multi-file"
expect "expected version with a multi-file patch is refused" 2 wap edit --patch - --expected-version "$v" < "$C/05-codex-multi-file/patch"

# a patch of bare hunks applies to PATH
rm -rf "$W" && mkdir -p "$W" && printf 'a\nb\nc\n' > "$W/h.txt"
printf '@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' > "$T/hunks.diff"
expect "bare hunks need PATH" 2 wap edit --patch - < "$T/hunks.diff"
has "bare hunks message" "$ERR" "a hunk without a file header"
expect "bare hunks with PATH" 0 wap edit h.txt --patch - < "$T/hunks.diff"
same "bare hunks applied" "$(cat "$W/h.txt")" "a
B
c"
expect "PATH that the patch does not name" 2 wap edit other.txt --patch - < "$C/01-codex-update/patch"
has "PATH mismatch message" "$ERR" "the patch changes calc.py, not other.txt"
expect "a missing patch file" 3 wap edit --patch hunks.diff.none
has "missing patch file message" "$ERR" "File not found: hunks.diff.none"
expect "a patch file outside the root" 4 wap edit --patch "$T/hunks.diff"
printf 'hello\n' > "$T/junk"
expect "junk is not a patch" 2 wap edit --patch - < "$T/junk"
has "junk message" "$ERR" "not a patch"
expect "a path escaping the root" 4 wap edit --patch - <<'P'
*** Begin Patch
*** Add File: ../evil.txt
+x
*** End Patch
P
check "nothing written outside" test ! -e "$T/evil.txt"
expect "a restricted path" 5 wap edit --restrict '*.secret' --patch - <<'P'
*** Begin Patch
*** Add File: ok.txt
+x
*** Add File: k.secret
+x
*** End Patch
P
check "restricted: nothing written" test ! -e "$W/ok.txt"

# a write failing midway: everything already written is put back
for k in 0 1 2; do
	reset "$C/05-codex-multi-file"; before=$(snap)
	WAP_TEST_PATCH_FAIL_AT=$k expect "commit step $k fails" 125 wap edit --patch - < "$C/05-codex-multi-file/patch"
	has "rollback said ($k)" "$ERR" "the patch was not applied (files already written were restored)"
	same "rollback restored every file ($k)" "$(snap)" "$before"
done

# round trip: git diff of a change, reverted, re-applied
rm -rf "$W" && mkdir -p "$W" && cd "$W"
git init -q . && git config user.email t@t && git config user.name t
mkdir -p src docs
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n' > src/main.go
printf 'a\r\nb\r\nc\r\n' > docs/win.txt
printf 'no newline' > docs/nonl.txt
printf '#!/bin/sh\necho old\n' > run.sh; chmod 755 run.sh
seq 1 50 > nums.txt
printf 'doomed\n' > doomed.txt
printf 'echo tool\n' > tool.sh
git add -A && git commit -qm base
chmod 755 tool.sh
sed -i 's/"hi"/"hello, world"/' src/main.go
printf '\n// extra\n' >> src/main.go
printf 'a\r\nB\r\nc\r\nd\r\n' > docs/win.txt
printf 'no newline, still' > docs/nonl.txt
printf '#!/bin/sh\necho new\n' > run.sh
sed -i -e 's/^10$/ten/' -e 's/^40$/forty/' -e '25d' nums.txt
rm doomed.txt
printf 'brand new\n' > docs/new.md
git add -A
git diff --cached > "$T/rt.patch"
want_tree=$(git write-tree)
git reset -q --hard HEAD
expect "round trip: re-apply git diff" 0 wap edit --patch - < "$T/rt.patch"
git add -A
same "round trip: the tree equals the changed one" "$(git write-tree)" "$want_tree"
same "round trip: mode kept" "$(stat -c %a run.sh)" "755"
same "round trip: mode change applied" "$(stat -c %a tool.sh)" "755"
cd - >/dev/null

# a rollback removes the directories the patch created, and only those
rm -rf "$W" && mkdir -p "$W/keep/empty" && printf 'a\n' > "$W/a.txt"
WAP_TEST_PATCH_FAIL_AT=2 expect "failing patch that created directories" 125 wap edit --patch - <<'P'
*** Begin Patch
*** Add File: deep/er/new.txt
+n
*** Add File: keep/empty/x/y.txt
+y
*** Update File: a.txt
-a
+A
*** End Patch
P
check "created directories removed" test ! -e "$W/deep"
check "an empty directory that was there is kept" test -d "$W/keep/empty"
check "but what the patch made inside it is gone" test ! -e "$W/keep/empty/x"
same "the updated file restored" "$(cat "$W/a.txt")" "a"

# Codex's rules for the '*** Begin Patch' format (tests/peers/codex-apply-patch.sh
# runs Codex's own scenarios; these are wap's own cases of the same rules)
rm -rf "$W" && mkdir -p "$W/cfg" && printf 'port=1\n' > "$W/cfg/app.ini" && printf 'keep\n' > "$W/other.txt"
expect "Add File over an existing file replaces it" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Add File: cfg/app.ini
+port=2
+host=h
*** End Patch
P
same "the added content is the file now" "$(cat "$W/cfg/app.ini")" "port=2
host=h"
same "reported as a modification" "$OUT" "M cfg/app.ini"
printf 'port=1\n' > "$W/cfg/app.ini"
expect "Add File over an existing file --json" 0 wap edit --patch - --json <<'P'
*** Begin Patch
*** Add File: cfg/app.ini
+port=3
*** End Patch
P
jcheck "json: status M with the old lines removed" "$OUT" 'j["files"][0]["status"]=="M" and "-port=1" in j["files"][0]["diff"] and "+port=3" in j["files"][0]["diff"]'
printf 'x\n' > "$W/new.txt"
expect "a unified diff's new file over an existing one is still refused" 10 wap edit --patch - <<'P'
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+y
P
has "unified new-file message" "$ERR" "File already exists: new.txt (the patch adds it)"
same "refused: the file kept" "$(cat "$W/new.txt")" "x"

rm -rf "$W" && mkdir -p "$W/src" "$W/dst" && printf 'one\ntwo\n' > "$W/src/m.txt" && printf 'stale\n' > "$W/dst/m.txt"
expect "Move to an existing file replaces it" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Update File: src/m.txt
*** Move to: dst/m.txt
@@
 one
-two
+TWO
*** End Patch
P
same "the destination holds the moved, updated text" "$(cat "$W/dst/m.txt")" "one
TWO"
check "the source is gone" test ! -e "$W/src/m.txt"
mkdir -p "$W/src" && printf 'a\n' > "$W/src/r.txt" && printf 'b\n' > "$W/dst/r.txt"
expect "a unified diff's rename onto an existing file is still refused" 10 wap edit --patch - <<'P'
diff --git a/src/r.txt b/dst/r.txt
similarity index 100%
rename from src/r.txt
rename to dst/r.txt
P
has "unified rename message" "$ERR" "File already exists: dst/r.txt"
printf 'a\n' > "$W/ro.txt" && printf 'b\n' > "$W/ro-dst.txt" && chmod 444 "$W/ro-dst.txt"
expect "Move onto a read-only file needs --force" 6 wap edit --patch - <<'P'
*** Begin Patch
*** Update File: ro.txt
*** Move to: ro-dst.txt
@@
-a
+A
*** End Patch
P
has "read-only message" "$ERR" "ro-dst.txt is read-only"
same "read-only destination kept" "$(cat "$W/ro-dst.txt")" "b"
check "and the source too" test -e "$W/ro.txt"

# an updated file ends with a newline (as Codex writes it), also when the
# change is not at the end; a unified diff keeps git's no-newline marker
rm -rf "$W" && mkdir -p "$W" && printf 'head\nmid\ntail' > "$W/n.txt"
expect "update of a file without final newline" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Update File: n.txt
@@
-head
+HEAD
*** End Patch
P
same "it ends with a newline now" "$(od -An -c "$W/n.txt" | tr -s ' ')" "$(printf 'HEAD\nmid\ntail\n' | od -An -c | tr -s ' ')"
printf 'a\r\nb' > "$W/w.txt"
expect "the same for a CRLF file" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Update File: w.txt
-a
+A
*** End Patch
P
same "CRLF file ends with CRLF" "$(od -An -c "$W/w.txt" | tr -s ' ')" "$(printf 'A\r\nb\r\n' | od -An -c | tr -s ' ')"
printf 'p\nq' > "$W/u.txt"
printf -- '--- a/u.txt\n+++ b/u.txt\n@@ -1,2 +1,2 @@\n-p\n+P\n q\n\\ No newline at end of file\n' > "$T/u.diff"
expect "a unified diff without the newline marker change" 0 wap edit --patch - < "$T/u.diff"
same "unified: still no final newline" "$(od -An -c "$W/u.txt" | tr -s ' ')" "$(printf 'P\nq' | od -An -c | tr -s ' ')"

# markers padded with spaces or tabs
rm -rf "$W" && mkdir -p "$W" && printf 'one\n' > "$W/f.txt"
printf '  *** Begin Patch  \n\t*** Update File: f.txt \n@@\n-one\n+two\n   *** End Patch\n\n' > "$T/pad.patch"
expect "padded Begin, Update and End markers" 0 wap edit --patch - < "$T/pad.patch"
same "padded markers: applied" "$(cat "$W/f.txt")" "two"
printf 'one\n' > "$W/f.txt"
printf '*** Begin Patch\n*** Add File: g.txt\n+g\n *** End Patch \n' > "$T/pad2.patch"
expect "a padded End after an added file" 0 wap edit --patch - < "$T/pad2.patch"
same "padded End: the file added" "$(cat "$W/g.txt")" "g"
# only the last line is the end marker: a context line reading
# "*** End Patch" inside a hunk is context
printf 'x\n*** End Patch\ny\n' > "$W/m.txt"
expect "a context line that reads *** End Patch" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Update File: m.txt
 x
 *** End Patch
-y
+Y
*** End Patch
P
same "context end marker: applied below it" "$(cat "$W/m.txt")" "x
*** End Patch
Y"

# all or nothing (a deliberate difference from Codex, which keeps the files
# written before a later part failed): nothing of a failing patch stays
rm -rf "$W" && mkdir -p "$W" && printf 'k\n' > "$W/k.txt"
before=$(snap)
expect "an added file then an update of a missing file" 3 wap edit --patch - <<'P'
*** Begin Patch
*** Add File: made/first.txt
+hello
*** Update File: k.txt
-k
+K
*** Update File: absent.txt
@@
-old
+new
*** End Patch
P
has "the failing part named" "$ERR" "File not found: absent.txt"
same "nothing written: no added file, no update" "$(snap)" "$before"
check "no directory made" test ! -e "$W/made"

# GNU `diff -ruN old new`: an added or deleted file is a diff against an
# empty side dated the Unix epoch (in local time), taken as no file, as
# GNU patch does; a file really emptied or made from empty stays one
for tz in UTC/1970-01-01 EST5EDT/1969-12-31; do
	day=${tz#*/} tz=${tz%/*}
	rm -rf "$T/gnu" "$W" && mkdir -p "$T/gnu/old/d" "$T/gnu/new/d" "$W"
	printf 'gone\nline 2\n' > "$T/gnu/old/d/gone.txt"
	printf 'keep\n' > "$T/gnu/old/keep.txt"
	printf 'empty me\n' > "$T/gnu/old/emptied.txt"
	: > "$T/gnu/old/filled.txt"
	printf 'keep\nmore\n' > "$T/gnu/new/keep.txt"
	printf 'new file\nno newline' > "$T/gnu/new/d/added.txt"
	: > "$T/gnu/new/emptied.txt"
	printf 'now filled\n' > "$T/gnu/new/filled.txt"
	cp -a "$T/gnu/old/." "$W/"
	(cd "$T/gnu" && TZ=$tz diff -ruN old new > "$T/gnu.patch")
	has "diff -ruN ($tz): the epoch-dated side" "$(cat "$T/gnu.patch")" "$day"
	expect "diff -ruN ($tz): applies" 0 wap edit --patch - < "$T/gnu.patch"
	if diff -r "$W" "$T/gnu/new" > "$T/diff" 2>&1; then ok "diff -ruN ($tz): added and deleted files as diff made them"
	else fail "diff -ruN ($tz): tree differs: $(head -c 400 "$T/diff")"; fi
done
# an epoch date on a side that has lines is no absent file
rm -rf "$W" && mkdir -p "$W" && printf 'a\n' > "$W/x.txt"
expect "an epoch-dated side with lines is an update" 0 wap edit --patch - <<'P'
--- old/x.txt	1970-01-01 00:00:00.000000000 +0000
+++ new/x.txt	1970-01-01 00:00:00.000000000 +0000
@@ -1 +1 @@
-a
+b
P
same "updated in place" "$(cat "$W/x.txt")" "b"

# symlinks in a git diff (mode 120000: the content is the target): a
# link made, its target changed, a file made a link and a link a file,
# a link deleted; each patch from git itself, the tree compared after
# (links never followed: `diff -r --no-dereference`)
G=$T/lrepo
rm -rf "$G" && mkdir -p "$G" && git -C "$G" init -q
printf 'one\n' > "$G/one.txt"; printf 'two\n' > "$G/two.txt"; printf 'file\n' > "$G/becomes-link"
ln -s one.txt "$G/retarget"; ln -s two.txt "$G/becomes-file"; ln -s one.txt "$G/gone-link"
git -C "$G" add -A && git -C "$G" -c user.name=t -c user.email=t@t commit -qm base
rm -rf "$W" && mkdir -p "$W" && git -C "$G" archive HEAD | tar -x -C "$W"
ln -sfn two.txt "$G/retarget"
ln -s sub/../two.txt "$G/new-link"
rm "$G/becomes-link" && ln -s one.txt "$G/becomes-link"
rm "$G/becomes-file" && printf 'now a file\n' > "$G/becomes-file"
rm "$G/gone-link"
git -C "$G" add -A
git -C "$G" diff --cached --binary > "$T/links.patch"
has "git's patch has symlink modes" "$(cat "$T/links.patch")" "new file mode 120000"
before=$(cd "$W" && find . -printf '%y %p %l\n' | sort)
expect "symlinks: applies" 0 wap edit --patch - < "$T/links.patch"
git -C "$G" -c user.name=t -c user.email=t@t commit -qm links
rm -rf "$T/want" && mkdir -p "$T/want" && git -C "$G" archive HEAD | tar -x -C "$T/want"
if diff -r --no-dereference "$W" "$T/want" > "$T/diff" 2>&1; then ok "symlinks: the tree git made"
else fail "symlinks: tree differs: $(head -c 400 "$T/diff")"; fi
same "a retargeted link is a link" "$(readlink "$W/retarget")" "two.txt"
same "a file made a link is a link" "$(readlink "$W/becomes-link")" "one.txt"
check "a link made a file is a file" test -f "$W/becomes-file" -a ! -L "$W/becomes-file"
check "a deleted link is gone" test ! -e "$W/gone-link" -a ! -L "$W/gone-link"
# and back: the reverse patch restores the first tree
git -C "$G" diff --binary HEAD HEAD~1 > "$T/links-back.patch"
expect "symlinks: the reverse patch applies" 0 wap edit --patch - < "$T/links-back.patch"
same "symlinks: the first tree back" "$(cd "$W" && find . -printf '%y %p %l\n' | sort)" "$before"
# a failing later part puts the links back as they were
git -C "$G" diff --binary HEAD~1 HEAD > "$T/links.patch"
printf -- '--- a/absent.txt\n+++ b/absent.txt\n@@ -1 +1 @@\n-x\n+y\n' >> "$T/links.patch"
expect "symlinks with a failing part: refused" 3 wap edit --patch - < "$T/links.patch"
same "symlinks with a failing part: nothing changed" "$(cd "$W" && find . -printf '%y %p %l\n' | sort)" "$before"
git -C "$G" diff --binary HEAD~1 HEAD > "$T/links.patch"
# steps: the four writes, then the deletion (the fifth, failing)
expect "symlinks, the last step failing: refused" 125 env WAP_TEST_PATCH_FAIL_AT=4 wap edit --patch - < "$T/links.patch"
has "symlinks, the last step failing: restored" "$ERR" "files already written were restored"
same "symlinks, a write failing midway: all put back" "$(cd "$W" && find . -printf '%y %p %l\n' | sort)" "$before"
# a symlink is changed only by a patch that says it is one
rm -rf "$W" && mkdir -p "$W" && ln -s target "$W/l"
expect "a plain update of a symlink: refused" 2 wap edit --patch - <<'P'
--- a/l
+++ b/l
@@ -1 +1 @@
-target
+other
P
has "it says why" "$ERR" "is a symlink"
same "the link untouched" "$(readlink "$W/l")" "target"

# a unified diff of a file that holds a Codex patch is a unified diff
rm -rf "$W" && mkdir -p "$W" && printf 'intro\n*** Begin Patch\n*** End Patch\n' > "$W/doc.md"
expect "a diff whose context holds '*** Begin Patch' applies as a diff" 0 wap edit --patch - <<'P'
diff --git a/doc.md b/doc.md
--- a/doc.md
+++ b/doc.md
@@ -1,3 +1,4 @@
 intro
+more
 *** Begin Patch
 *** End Patch
P
same "the diff applied" "$(cat "$W/doc.md")" "$(printf 'intro\nmore\n*** Begin Patch\n*** End Patch')"

# a binary file renamed (git: "similarity index 100%", no hunk) is moved
rm -rf "$W" && mkdir -p "$W/src" && printf 'bin\0ary' > "$W/src/blob.bin"
expect "a pure rename of a binary file applies" 0 wap edit --patch - <<'P'
diff --git a/src/blob.bin b/vendor/blob.bin
similarity index 100%
rename from src/blob.bin
rename to vendor/blob.bin
P
same "the binary file moved, bytes intact" "$(od -c < "$W/vendor/blob.bin" | head -1)" "$(printf 'bin\0ary' | od -c | head -1)"
check "nothing left at the old path" test ! -e "$W/src/blob.bin"

# a hunk is looked for where its header says, moved by how far the hunks
# before it were found from theirs (not by the lines they added): a block
# repeated a few lines further down must not take a later hunk
rm -rf "$W" && mkdir -p "$W"
python3 - "$W/doc.md" "$T/want.md" <<'PY'
import sys
block = ["--", "#### Since", "4.0.0", "#### Arguments", "1. a", "2. b"]
old = ["x%d" % i for i in range(10)] + block + ["f1", "f2", "f3"] + block + ["y%d" % i for i in range(10)]
new = old[:1] + ["new %d" % i for i in range(12)] + old[1:]
new.insert(12 + 12 + 1, "")	# a blank line after the first block's "4.0.0"
open(sys.argv[1], "w").write("\n".join(old) + "\n")
open(sys.argv[2], "w").write("\n".join(new) + "\n")
PY
(cd "$W" && diff -u doc.md "$T/want.md" | sed '1,2c\--- a/doc.md\n+++ b/doc.md') > "$T/shift.patch"
check "the fixture: two hunks" test "$(grep -c '^@@' "$T/shift.patch")" = 2
expect "a hunk after one that added lines: applies" 0 wap edit --patch - < "$T/shift.patch"
same "...at its own place, not at the same block further down" "$(cat "$W/doc.md")" "$(cat "$T/want.md")"

# a disk that fills up midway loses nothing: a symlink a patch turns into a
# file was removed first and its replacement made after, so with no room
# for the file the link was gone, and the error said "files already
# written were restored" (tenth hostile review)
if [ "$(id -u)" = 0 ] && mkdir "$T/full" && mount -t tmpfs -o size=128k tmpfs "$T/full" 2>/dev/null; then
	FW=$T/full
	printf 'tgt\n' > "$FW/t" && ln -s t "$FW/l" && printf 'data\n' > "$FW/f"
	head -c 90000 /dev/zero > "$FW/fill"
	big=$(head -c 60000 /dev/zero | tr '\0' x)
	{ printf 'diff --git a/l b/l\ndeleted file mode 120000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-t\n\\ No newline at end of file\n'
	  printf 'diff --git a/l b/l\nnew file mode 100644\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+%s\n' "$big"; } > "$T/tofile.patch"
	before=$(cd "$FW" && find . -printf '%y %p %l %s\n' | sort)
	expect "a link made a file on a full disk: refused" 125 env WAP_ROOT="$FW" wap edit --patch - < "$T/tofile.patch"
	has "...saying the disk is full" "$ERR" "No space left on device"
	same "...and the link is still there" "$(cd "$FW" && find . -printf '%y %p %l %s\n' | sort)" "$before"
	umount "$T/full"
fi

# a path holding a NUL byte, raw or quoted: the path was cut at it and the
# patch changed a file it did not name (a.txt for "a.txt\0x")
printf 'a\n' > "$W/nul.txt"
printf '*** Begin Patch\n*** Add File: nul2.txt\0x\n+hi\n*** End Patch\n' > "$T/nul1.patch"
printf '*** Begin Patch\n*** Update File: nul.txt\n*** Move to: nul3.txt\0x\n@@\n-a\n+b\n*** End Patch\n' > "$T/nul2.patch"
printf -- '--- a/nul.txt\0x\n+++ b/nul.txt\n@@ -1 +1 @@\n-a\n+b\n' > "$T/nul3.patch"
printf -- 'diff --git "a/nul.txt\\000x" "b/nul.txt\\000x"\n--- "a/nul.txt\\000x"\n+++ "b/nul.txt\\000x"\n@@ -1 +1 @@\n-a\n+b\n' > "$T/nul4.patch"
printf -- 'diff --git a/nul.txt b/nul.txt\nrename from nul.txt\nrename to nul5.txt\0x\n' > "$T/nul5.patch"
for k in 1 2 3 4 5; do
	expect "a path with a NUL byte ($k): refused" 2 wap edit --patch - < "$T/nul$k.patch"
	has "  saying so" "$ERR" "NUL byte"
done
same "  nothing changed" "$(cd "$W" && cat nul.txt && ls nul*)" "a
nul.txt"
printf -- '--- a/nul.txt\n+++ b/nul.txt\n@@ -1 +1 @@\n-a\n+b\0c\n' > "$T/nul6.patch"
expect "a NUL in a line's text is text: applies" 0 wap edit --patch - < "$T/nul6.patch"
same "  byte for byte" "$(od -An -c "$W/nul.txt" | tr -s ' ')" " b \0 c \n"
