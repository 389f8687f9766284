# mkdir, rm, mv, cp: semantics, --json results, every error kind.
. tests/lib.sh
ROOT=$(cd "$W" && pwd -P)

# --- mkdir ---
expect "mkdir through the link" 0 wap-mkdir a/b/c
same "mkdir text" "$OUT" "Created directory a/b/c"
check "parents created" test -d "$W/a/b/c"
expect "mkdir again is fine" 0 wap mkdir a/b/c --json
jcheck "idempotent" "$OUT" 'j == {"success": True, "path": "a/b/c", "created": False}'
expect "mkdir --json" 0 wap mkdir x --json
jcheck "created" "$OUT" 'j == {"success": True, "path": "x", "created": True}'
expect "mkdir of the root" 0 wap mkdir . --json
jcheck "root exists" "$OUT" 'j["created"] is False'
touch "$W/file"
expect "a file in the way" 9 wap mkdir file
same "NOT_A_DIRECTORY message" "$ERR" "wap mkdir: Path exists but is not a directory: file"
expect "a file in the way of a parent" 9 wap mkdir file/sub/dir
same "parent message" "$ERR" "wap mkdir: Not a directory: a file is in the way of file/sub"
expect "mkdir --json error" 9 wap mkdir file --json
jcheck "JSON error" "$OUT" 'j == {"error": "Path exists but is not a directory: file", "code": "NOT_A_DIRECTORY"}'
ln -s a "$W/link-to-a"
expect "a symlink to a directory inside counts" 0 wap mkdir link-to-a --json
jcheck "exists" "$OUT" 'j["created"] is False'
expect "mkdir under a symlinked dir" 0 wap mkdir link-to-a/new
check "made in the target" test -d "$W/a/new"
expect "mkdir read-only" 5 wap mkdir ro --read-only
same "read-only message" "$ERR" "wap mkdir: Path restricted: ro (the workspace is read-only)"
check "nothing made" test ! -e "$W/ro"
expect "mkdir restricted" 5 wap mkdir secret/a/b --restrict 'secret'
same "restricted message" "$ERR" "wap mkdir: Path restricted: secret/a/b is denied by restrictedPaths"
check "no parent made for a restricted path" test ! -e "$W/secret"
expect "mkdir no PATH" 2 wap mkdir
same "usage message" "$ERR" "wap mkdir: missing PATH (see 'wap mkdir --help')"

# --- rm ---
printf 'x' > "$W/r1"
expect "rm a file through the link" 0 wap-rm r1
same "rm text" "$OUT" "Removed r1"
check "removed" test ! -e "$W/r1"
printf 'x' > "$W/r2"
expect "rm --json" 0 wap rm r2 --json
jcheck "rm result" "$OUT" 'j == {"success": True, "path": "r2", "removed": 1, "isDirectory": False}'
mkdir -p "$W/tree/s1/s2" && touch "$W/tree/f" "$W/tree/s1/g" "$W/tree/s1/s2/h"
expect "rm a directory without --recursive" 8 wap rm tree
same "NOT_A_FILE message" "$ERR" "wap rm: Is a directory: tree (use --recursive to remove it)"
check "tree kept" test -f "$W/tree/s1/s2/h"
mkdir "$W/emptydir"
expect "rm an empty directory needs --recursive too" 8 wap rm emptydir
expect "rm -r" 0 wap rm -r tree --json
jcheck "entries counted" "$OUT" 'j == {"success": True, "path": "tree", "removed": 6, "isDirectory": True}'
check "tree gone" test ! -e "$W/tree"
expect "rm --recursive text" 0 wap rm --recursive emptydir
same "rm -r text" "$OUT" "Removed emptydir (1 entry)"
expect "rm a missing file" 3 wap rm nope
same "not found message" "$ERR" "wap rm: File not found: nope"
expect "rm -f a missing file" 0 wap rm -f nope --json
jcheck "nothing removed" "$OUT" 'j["removed"] == 0 and j["success"]'
expect "rm -f under a missing dir" 0 wap rm -f nope/x
expect "rm the root" 4 wap rm -r .
same "root message" "$ERR" "wap rm: Access denied: refusing to remove the workspace root"
expect "rm the root by absolute path" 4 wap rm -r "$ROOT"
expect "rm the root as a/.." 4 wap rm -r a/..
check "root intact" test -d "$W/a/b/c"
mkdir -p "$W/keep" && printf 'k' > "$W/keep/k"
ln -s keep "$W/link-to-keep"
expect "rm a symlink to a directory removes the link" 0 wap rm link-to-keep
check "link gone" test ! -L "$W/link-to-keep"
check "target kept" test -f "$W/keep/k"
mkdir -p "$W/withsecret" && touch "$W/withsecret/a" "$W/withsecret/.env"
expect "rm -r refuses a tree holding a restricted path" 5 wap rm -r withsecret --restrict '.env'
same "restricted tree message" "$ERR" "wap rm: Path restricted: withsecret/.env is denied by restrictedPaths"
check "nothing removed from it" test -f "$W/withsecret/a"
expect "rm read-only" 5 wap rm keep/k --read-only
check "kept" test -f "$W/keep/k"
expect "rm no PATH" 2 wap rm
same "rm usage message" "$ERR" "wap rm: missing PATH (see 'wap rm --help')"
expect "rm under a file" 9 wap rm file/x
same "rm under a file message" "$ERR" "wap rm: Not a directory: a file is in the way of file"

# --- mv ---
printf 'one' > "$W/m1"
expect "mv through the link" 0 wap-mv m1 m2
same "mv text" "$OUT" "Moved m1 -> m2"
check "moved" test -f "$W/m2" -a ! -e "$W/m1"
expect "mv --json, parents created" 0 wap mv m2 deep/dir/m3 --json
jcheck "mv result" "$OUT" 'j == {"success": True, "source": "m2", "destination": "deep/dir/m3", "isDirectory": False}'
expect "mv into an existing directory" 0 wap mv deep/dir/m3 keep --json
jcheck "into" "$OUT" 'j["destination"] == "keep/m3"'
check "there" test -f "$W/keep/m3"
printf 'two' > "$W/m4"
expect "mv refuses to overwrite" 10 wap mv m4 keep/m3
same "ALREADY_EXISTS message" "$ERR" "wap mv: Already exists: keep/m3 (use --force to replace it)"
same "destination untouched" "$(cat "$W/keep/m3")" "one"
check "source kept" test -f "$W/m4"
expect "mv --force overwrites" 0 wap mv -f m4 keep/m3
same "replaced" "$(cat "$W/keep/m3")" "two"
expect "mv a directory" 0 wap mv keep kept --json
jcheck "directory moved" "$OUT" 'j["isDirectory"] is True and j["destination"] == "kept"'
expect "mv a directory into itself" 2 wap mv kept kept/inner/x
same "into itself message" "$ERR" "wap mv: Cannot move a directory into itself: kept -> kept/inner/x"
rm -rf "$W/kept/inner"
expect "mv a missing source" 3 wap mv nope x
same "mv not found" "$ERR" "wap mv: File not found: nope"
expect "mv the root" 4 wap mv . x
same "mv root message" "$ERR" "wap mv: Access denied: refusing to move the workspace root"
expect "mv one argument" 2 wap mv kept
same "mv usage" "$ERR" "wap mv: missing DESTINATION (see 'wap mv --help')"
expect "mv --json error" 10 wap mv file kept/m3 --json
jcheck "mv JSON error" "$OUT" 'j["code"] == "ALREADY_EXISTS"'
mkdir -p "$W/full/d2/x" "$W/d2" "$W/full/ff" && touch "$W/ff"
expect "mv --force over a non-empty directory" 10 wap mv -f d2 full
same "non-empty message" "$ERR" "wap mv: Already exists: full/d2 is a directory that is not empty"
expect "mv --force of a file over a directory" 8 wap mv -f ff full
same "file over dir message" "$ERR" "wap mv: Cannot replace the directory full/ff with a file"
touch "$W/plainfile"
expect "mv --force of a directory over a file" 9 wap mv -f d2 plainfile
same "dir over file message" "$ERR" "wap mv: Cannot replace the file plainfile with a directory"
expect "mv read-only" 5 wap mv file file2 --read-only
expect "mv restricted source" 5 wap mv file file2 --restrict file
expect "mv restricted destination" 5 wap mv file secret/f --restrict 'secret/**'
check "source still there" test -f "$W/file"

# --- cp ---
printf 'copy me\n' > "$W/c1" && chmod 750 "$W/c1"
expect "cp through the link" 0 wap-cp c1 c2
same "cp text" "$OUT" "Copied c1 -> c2 (8 bytes)"
same "copied" "$(cat "$W/c2")" "copy me"
same "mode kept" "$(stat -c %a "$W/c2")" "750"
expect "cp --json, parents created" 0 wap cp c1 cdir/sub/c3 --json
jcheck "cp result" "$OUT" 'j == {"success": True, "source": "c1", "destination": "cdir/sub/c3", "isDirectory": False, "files": 1, "directories": 0, "links": 0, "bytes": 8}'
expect "cp into an existing directory" 0 wap cp c1 cdir --json
jcheck "into" "$OUT" 'j["destination"] == "cdir/c1"'
printf 'other\n' > "$W/c4"
expect "cp refuses to overwrite" 10 wap cp c4 c2
same "cp ALREADY_EXISTS message" "$ERR" "wap cp: Already exists: c2 (use --force to replace it)"
same "untouched" "$(cat "$W/c2")" "copy me"
expect "cp --force" 0 wap cp -f c4 c2
same "overwritten" "$(cat "$W/c2")" "other"
ln -s c1 "$W/cdir/sub/lnk"
mkfifo "$W/cdir/fifo"
expect "cp a directory without --recursive" 8 wap cp cdir cdir2
same "cp dir message" "$ERR" "wap cp: Is a directory: cdir (use --recursive to copy it)"
expect "cp -r" 0 wap cp -r cdir cdir2 --json
jcheck "tree counts" "$OUT" 'j["isDirectory"] and j["files"] == 2 and j["directories"] == 2 and j["links"] == 1 and j["bytes"] == 16'
check "tree copied" test -f "$W/cdir2/sub/c3" -a -f "$W/cdir2/c1"
same "symlink copied as a link" "$(readlink "$W/cdir2/sub/lnk")" "c1"
check "fifo skipped" test ! -e "$W/cdir2/fifo"
expect "cp -r text" 0 wap cp --recursive cdir cdir3
same "cp -r text" "$OUT" "Copied cdir -> cdir3 (2 files, 2 directories, 1 links, 16 bytes)"
expect "cp -r into an existing directory" 0 wap cp -r cdir cdir2 --json
jcheck "goes inside" "$OUT" 'j["destination"] == "cdir2/cdir"'
expect "cp -r onto an existing copy" 10 wap cp -r cdir cdir2
same "cp -r exists message" "$ERR" "wap cp: Already exists: cdir2/cdir (use --force to merge into it)"
expect "cp -r --force merges" 0 wap cp -r -f cdir cdir2
expect "cp a directory into itself" 2 wap cp -r cdir cdir/sub/again
same "into itself message" "$ERR" "wap cp: Cannot copy a directory into itself: cdir -> cdir/sub/again"
check "nothing made" test ! -e "$W/cdir/sub/again"
expect "cp a missing source" 3 wap cp nope x
same "cp not found" "$ERR" "wap cp: File not found: nope"
expect "cp a fifo" 8 wap cp cdir/fifo x
same "cp fifo message" "$ERR" "wap cp: Not a regular file: cdir/fifo"
expect "cp one argument" 2 wap cp c1
same "cp usage" "$ERR" "wap cp: missing DESTINATION (see 'wap cp --help')"
expect "cp read-only" 5 wap cp c1 c9 --read-only
check "not copied" test ! -e "$W/c9"
mkdir -p "$W/hassecret" && touch "$W/hassecret/ok" "$W/hassecret/.env"
expect "cp -r refuses a tree with a restricted path" 5 wap cp -r hassecret copy --restrict '.env'
same "cp restricted message" "$ERR" "wap cp: Path restricted: hassecret/.env is denied by restrictedPaths"
check "nothing copied" test ! -e "$W/copy"
expect "cp --json error" 3 wap cp nope x --json
jcheck "cp JSON error" "$OUT" 'j == {"error": "File not found: nope", "code": "FILE_NOT_FOUND"}'
check "no temp files left" test -z "$(find "$W" -name '.wap-*')"

# every applet: escapes, policy switched off, and the OS saying no
printf '{"security":{"allowFileSystemAccess":false}}' > "$T/nofs.json"
for cmd in "mkdir q" "rm file" "mv file q" "cp file q"; do
	set -- $cmd
	expect "$1 outside the root" 4 wap $cmd/../../x
	expect "$1 with file system access disabled" 15 wap "$@" --config "$T/nofs.json"
	same "$1 disabled message" "$ERR" "wap $1: File system access is disabled by policy (security.allowFileSystemAccess)"
done
expect "mkdir outside the root: message" 4 wap mkdir ../x
same "mkdir access message" "$ERR" "wap mkdir: Access denied: ../x is outside the workspace root $ROOT"
expect "mv restricted: message" 5 wap mv file q --restrict file
same "mv restricted message" "$ERR" "wap mv: Path restricted: file is denied by restrictedPaths"
expect "cp restricted source: message" 5 wap cp file q --restrict file
same "cp restricted message" "$ERR" "wap cp: Path restricted: file is denied by restrictedPaths"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$WAP" "$@"; }
	chmod 755 "$T" "$W"
	mkdir -p "$W/locked/inner" && touch "$W/locked/f" && chmod 755 "$W/locked"
	expect "mkdir: permission denied" 6 nobody mkdir locked/new
	same "mkdir permission message" "$ERR" "wap mkdir: Permission denied: locked/new"
	expect "rm: permission denied" 6 nobody rm locked/f
	same "rm permission message" "$ERR" "wap rm: Permission denied: locked/f"
	expect "rm -r: permission denied" 6 nobody rm -r locked/inner
	expect "mv: permission denied" 6 nobody mv locked/f locked/g
	same "mv permission message" "$ERR" "wap mv: Permission denied: locked/g"
	expect "cp: permission denied" 6 nobody cp file locked/g
	same "cp permission message" "$ERR" "wap cp: Permission denied: locked/g"
	check "nothing changed in the locked dir" test -f "$W/locked/f" -a ! -e "$W/locked/g" -a -d "$W/locked/inner"
fi

# a file turned into a FIFO between cp -r's look at it and its open held
# the open, and the call, for good (ninth hostile review: a sandboxed
# command renaming a FIFO over a file in a loop hung a server's cp -r).
# strace widens the window: each fstatat returns 50 ms late, while a
# racer flips twenty files between a file and a FIFO every millisecond.
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
	rm -rf "$W/fl" "$W/fl2"; mkdir -p "$W/fl"
	for i in $(seq 20); do echo x > "$W/fl/f$i"; done
	python3 - "$W/fl" "$T/flipper.stop" > /dev/null 2>&1 <<'PY' &
import os, sys, time
d, stop = sys.argv[1], sys.argv[2]
end = time.time() + 60
while time.time() < end and not os.path.exists(stop):
    for i in range(1, 21):
        p = os.path.join(d, 'f%d' % i)
        try:
            os.mkfifo(d + '.fifo')
        except FileExistsError:
            pass
        os.rename(d + '.fifo', p)
        with open(d + '.reg', 'w') as f:
            f.write('x')
        os.rename(d + '.reg', p)
    time.sleep(0.001)
PY
	FLIP=$!
	strace -f -qq -o /dev/null -e trace=newfstatat -e inject=newfstatat:delay_exit=50000 \
		timeout 20 "$WAP" cp -r fl fl2 > /dev/null 2>&1
	rc=$?
	touch "$T/flipper.stop"; wait $FLIP 2>/dev/null
	if [ $rc != 124 ]; then ok "cp -r: a file turned FIFO mid-copy does not hold the call"; else fail "cp -r: a file turned FIFO mid-copy held the call (timed out)"; fi
	rm -rf "$W/fl" "$W/fl2" "$W/fl.fifo" "$W/fl.reg"
fi

# cp keeps a set-ID bit only where the copy keeps the owner (or group), as
# cp(1) does: wap as root copied another user's set-user-ID file into a
# set-user-ID root one, a program of that user's choosing run as root by
# whoever runs it (tenth hostile review)
if [ "$(id -u)" = 0 ]; then
	printf '#!/bin/sh\n' > "$W/suid.sh" && chown 65534:65534 "$W/suid.sh" && chmod 6755 "$W/suid.sh"
	expect "cp of another user's set-ID file" 0 wap cp suid.sh suid-copy.sh
	same "...is no set-ID root file" "$(stat -c '%a %u' "$W/suid-copy.sh")" "755 0"
	mkdir -p "$W/suidd" && cp -p "$W/suid.sh" "$W/suidd/s" && chown 65534:65534 "$W/suidd/s" && chmod 4755 "$W/suidd/s"
	expect "cp -r of a tree with one" 0 wap cp -r suidd suidd2
	same "...neither" "$(stat -c '%a %u' "$W/suidd2/s")" "755 0"
	printf '#!/bin/sh\n' > "$W/rsuid.sh" && chmod 4755 "$W/rsuid.sh"
	expect "cp of root's own set-user-ID file" 0 wap cp rsuid.sh rsuid-copy.sh
	same "...keeps it (the owner is the same)" "$(stat -c '%a' "$W/rsuid-copy.sh")" "4755"
	rm -rf "$W/suid.sh" "$W/suid-copy.sh" "$W/suidd" "$W/suidd2" "$W/rsuid.sh" "$W/rsuid-copy.sh"
fi
