# Data files and whole-file limits: every option that names a data file
# (--patch, --ops, --edits, --text-edits, --old-file, --new-file, exec
# --stdin, git --token-file) is a workspace path under the root's policy,
# never a FIFO waited on; maxFileSize holds for every whole-file op with
# bounded memory; read-only files, non-UTF-8 names, a full disk.
. tests/lib.sh
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
cd "$W"

# ---- 13.4 data comes from the workspace ----
printf 'one\ntwo\n' > f.txt
printf 'two\n' > old.txt
printf 'TWO\n' > new.txt
printf 'secret-outside\n' > "$T/outside.txt"
cat > "$T/outside.patch" <<'EOF'
--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 one
-two
+PWNED
EOF
cp "$T/outside.patch" in.patch

expect "--old-file /etc/passwd: ACCESS_DENIED" 4 wap edit f.txt --old-file /etc/passwd --new x
expect "--old-file outside --json" 4 wap edit f.txt --old-file /etc/passwd --new x --json
jcheck "its code" "$OUT" 'j["code"]=="ACCESS_DENIED"'
expect "--new-file ../outside.txt refused" 4 wap edit f.txt --old two --new-file ../outside.txt
expect "--patch ../outside.patch refused" 4 wap edit --patch ../outside.patch
expect "--patch absolute outside refused" 4 wap edit --patch "$T/outside.patch"
same "nothing patched" "$(cat f.txt)" "$(printf 'one\ntwo')"
ln -s /etc/shadow shadow-link
expect "--new-file: a symlink inside to /etc/shadow refused" 4 wap edit f.txt --old two --new-file shadow-link
ln -s "$T/outside.txt" out-link
expect "--old-file: a symlink inside to a file outside refused" 4 wap edit f.txt --old-file out-link --new x
lacks "its bytes are not echoed" "$ERR" "secret-outside"
printf '[{"old":"two","new":"X"}]' > "$T/edits.json"
expect "--edits FILE outside refused" 4 wap edit f.txt --edits "$T/edits.json"
expect "--ops FILE outside refused" 4 wap edit f.txt --ops ../edits.json
expect "--text-edits FILE outside refused" 4 wap edit f.txt --text-edits ../edits.json
expect "exec --stdin outside refused" 4 wap exec --stdin ../outside.txt -- cat
same "f.txt untouched" "$(cat f.txt)" "$(printf 'one\ntwo')"

# restricted paths apply to data files as to every path
mkdir -p private
printf 'two\n' > private/old.txt
cp in.patch private/p.patch
printf '[{"old":"two","new":"X"}]' > private/e.json
expect "--old-file restricted: PATH_RESTRICTED" 5 wap edit f.txt --old-file private/old.txt --new x --restrict 'private/**'
expect "--patch restricted" 5 wap edit --patch private/p.patch --restrict 'private/**'
expect "--edits restricted" 5 wap edit f.txt --edits private/e.json --restrict 'private/**'
expect "exec --stdin restricted" 5 wap exec --stdin private/old.txt --restrict 'private/**' -- cat
ln -s private/old.txt to-private
expect "--new-file through a symlink to a restricted file" 5 wap edit f.txt --old two --new-file to-private --restrict 'private/**'
same "f.txt still untouched" "$(cat f.txt)" "$(printf 'one\ntwo')"

# inside the root they work, relative to the root, and - is stdin
mkdir -p sub
expect "--old-file/--new-file inside the root" 0 wap edit f.txt --old-file old.txt --new-file new.txt
same "edited from the files" "$(cat f.txt)" "$(printf 'one\nTWO')"
printf 'one\ntwo\n' > f.txt
expect "--patch inside the root" 0 wap edit --patch in.patch
same "patched" "$(cat f.txt)" "$(printf 'one\nPWNED')"
printf 'one\ntwo\n' > f.txt
expect "--patch - reads stdin" 0 wap edit --patch - < in.patch
printf 'one\ntwo\n' > f.txt
printf '[{"old":"two","new":"E"}]' > e.json
expect "--edits FILE inside (from a subdirectory: relative to the root)" 0 sh -c 'cd sub && wap edit f.txt --edits e.json'
same "edited by the edits file" "$(cat f.txt)" "$(printf 'one\nE')"
expect "--edits - reads stdin" 0 sh -c 'printf "[{\"old\":\"E\",\"new\":\"F\"}]" | wap edit f.txt --edits -'
same "edited by stdin" "$(cat f.txt)" "$(printf 'one\nF')"
expect "--edits JSON text still works" 0 wap edit f.txt --edits '[{"old":"F","new":"G"}]'
expect "--edits not JSON, not a file" 3 wap edit f.txt --edits nosuch.json

# a FIFO, a device or a socket is refused at once, never waited on
mkfifo fifo
fifo() { # DESC CMD...: fails with NOT_A_FILE (8) within 5 s
	d=$1; shift
	timeout 5 "$@" >"$T/out" 2>"$T/err" </dev/null; got=$?
	ERR=$(cat "$T/err")
	if [ "$got" = 8 ]; then ok "$d"; else fail "$d (exit $got, wanted 8; $(head -c 200 "$T/err"))"; fi
}
fifo "--old-file FIFO" wap edit f.txt --old-file fifo --new x
fifo "--new-file FIFO" wap edit f.txt --old G --new-file fifo
fifo "--patch FIFO" wap edit --patch fifo
fifo "--edits FIFO" wap edit f.txt --edits fifo
fifo "--ops FIFO" wap edit f.txt --ops fifo
fifo "--text-edits FIFO" wap edit f.txt --text-edits fifo
fifo "exec --stdin FIFO" wap exec --stdin fifo -- cat
git init -q repo && mkfifo repo/fifo && git -C repo remote add origin https://127.0.0.1:9/x.git
fifo "git --token-file FIFO" wap git --root repo fetch origin --token-file fifo
fifo "read FIFO" wap read fifo
fifo "write FIFO" wap write fifo --content x
fifo "edit FIFO" wap edit fifo --old a --new b
fifo "cp FIFO" wap cp fifo fifo2
has "message says what it is" "$ERR" "fifo"
ln -s /dev/zero zero-link
expect "--patch: a link to /dev/zero leaves the root" 4 timeout 5 wap edit --patch zero-link
if mknod zdev c 1 5 2>/dev/null; then
	fifo "--patch: a character device" wap edit --patch zdev
	fifo "--edits: a character device" wap edit f.txt --edits zdev
else
	ok "# SKIP mknod refused: no device test"
fi
if python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' sock 2>/dev/null; then
	fifo "--old-file: a socket" wap edit f.txt --old-file sock --new x
else
	ok "# SKIP cannot bind a unix socket here"
fi

# ---- 13.7 maxFileSize holds for every whole-file op, in bounded memory ----
printf '{"limits":{"maxFileSize":4096}}' > "$T/small.json"
sm() { wap "$1" --config "$T/small.json" "${@:2}"; }
head -c 6000 /dev/zero | tr '\0' 'a' | fold -w 60 > big.txt
printf 'tail-line\n' >> big.txt
big0=$(md5sum < big.txt)
# read is a window, never the whole file: without a range it shows at most
# maxFileSize bytes and says how to read on
expect "read without a range over the limit: a window" 0 sm read big.txt --json
jcheck "said truncated, with where to read on" "$OUT" 'j["isTruncated"] and j["nextOffset"] > 1 and len(j["content"]) <= 4096 + 2001'
expect "read --head on a big file works" 0 sm read big.txt --head 2
expect "read --tail on a big file works" 0 sm read big.txt --tail 1
has "the tail line" "$OUT" "tail-line"
expect "read --offset/--limit on a big file works" 0 sm read big.txt --offset 50 --limit 2
expect "edit of a file over the limit" 7 sm edit big.txt --old tail-line --new x
has "edit message names the limit" "$ERR" "limits.maxFileSize"
expect "edit --dry-run of a file over the limit" 7 sm edit big.txt --old tail-line --new x --dry-run
printf -- '--- a/big.txt\n+++ b/big.txt\n@@ -101 +101 @@\n-tail-line\n+x\n' > big.patch
expect "patch of a file over the limit" 7 sm edit --patch big.patch
expect "grep --write on a file over the limit" 2 sm grep tail-line big.txt --replace x --write --json
jcheck "grep --write: SIZE_LIMIT_EXCEEDED" "$OUT" 'j["code"]=="SIZE_LIMIT_EXCEEDED"'
expect "write content over the limit" 7 sm write w.txt --content "$(head -c 5000 /dev/zero | tr '\0' b)"
check "nothing written" test ! -e w.txt
expect "write stdin over the limit" 7 sh -c 'head -c 5000 /dev/zero | wap write w.txt --config "$0"' "$T/small.json"
check "nothing written from stdin" test ! -e w.txt
printf 'small\n' > s.txt
expect "append past the limit" 7 sm write s.txt --mode append --content "$(head -c 4092 /dev/zero | tr '\0' c)"
same "append left the file alone" "$(cat s.txt)" "small"
expect "an edit growing a file past the limit" 7 sm edit s.txt --old small --new "$(head -c 5000 /dev/zero | tr '\0' d)"
same "edit left the file alone" "$(cat s.txt)" "small"
head -c 5000 /dev/zero | tr '\0' ' ' > pad.json; printf '[{"old":"small","new":"x"}]' >> pad.json
expect "a data file over the limit" 7 sm edit s.txt --edits pad.json
same "big.txt never changed" "$(md5sum < big.txt)" "$big0"
expect "cp of a big file is allowed (streamed)" 0 sm cp big.txt big-copy.txt
check "and exact" cmp big.txt big-copy.txt

# a 300 MB file: refused at once, without reading it (under a 150 MB address-space cap)
truncate -s 300M huge.txt
if prlimit --as=200000000 true 2>/dev/null && [ -z "${ASAN:-}" ]; then
	s=$(date +%s%N)
	expect "edit of a 300 MB file in 200 MB of address space: SIZE_LIMIT_EXCEEDED" 7 prlimit --as=200000000 wap edit huge.txt --old a --new b
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	if [ "$ms" -lt 2000 ]; then ok "and quickly ($ms ms)"; else fail "took $ms ms"; fi
	expect "patch of it too" 7 prlimit --as=200000000 wap edit --patch - <<'P'
--- a/huge.txt
+++ b/huge.txt
@@ -1 +1 @@
-a
+b
P
	expect "append to it too" 7 prlimit --as=200000000 wap write huge.txt --mode append --content x
	expect "read of it: a window" 0 prlimit --as=200000000 wap read huge.txt --head 3
	expect "read --tail of it" 0 prlimit --as=200000000 wap read huge.txt --tail 1
else
	ok "# SKIP no prlimit, or ASan (it reserves terabytes of address space)"
fi
rm -f huge.txt

# cp of a sparse 10 GB file: fast, bounded memory, and the copy is sparse
truncate -s 10G sparse.img
printf 'data' | dd of=sparse.img bs=1 seek=5000000000 conv=notrunc 2>/dev/null
s=$(date +%s%N)
if [ -z "${ASAN:-}" ]; then
	expect "cp of a 10 GB sparse file in 200 MB of address space" 0 timeout 20 prlimit --as=200000000 wap cp sparse.img sparse2.img
else
	expect "cp of a 10 GB sparse file" 0 timeout 20 wap cp sparse.img sparse2.img
fi
ms=$(( ($(date +%s%N) - s) / 1000000 ))
if [ "$ms" -lt 5000 ]; then ok "cp was fast ($ms ms)"; else fail "cp took $ms ms"; fi
same "the copy has the size" "$(stat -c %s sparse2.img 2>/dev/null)" "10737418240"
du2=$(du -k sparse2.img 2>/dev/null | cut -f1)
if [ -n "$du2" ] && [ "$du2" -lt 10240 ]; then ok "the copy is sparse (${du2} KiB on disk)"; else fail "the copy is not sparse (${du2} KiB)"; fi
same "the data in the middle was copied" "$(dd if=sparse2.img bs=1 skip=5000000000 count=4 2>/dev/null)" "data"
rm -f sparse.img sparse2.img

# ---- 13.8 a read-only file is not silently overwritten (we run as root:
#      wap checks the mode bits itself) ----
printf 'keep\n' > ro.txt; chmod 0444 ro.txt
printf 'other\n' > src.txt
expect "write over a 0444 file: PERMISSION_DENIED" 6 wap write ro.txt --content x
has "the message says read-only and --force" "$ERR" "--force"
expect "write --mode append over a 0444 file" 6 wap write ro.txt --mode append --content x
expect "edit of a 0444 file" 6 wap edit ro.txt --old keep --new x
printf -- '--- a/ro.txt\n+++ b/ro.txt\n@@ -1 +1 @@\n-keep\n+x\n' > ro.patch
expect "patch of a 0444 file" 6 wap edit --patch ro.patch
expect "grep --write on a 0444 file" 2 wap grep keep ro.txt --replace x --write
expect "cp -f onto a 0444 file" 6 wap cp -f src.txt ro.txt
expect "mv -f onto a 0444 file" 6 wap mv -f src.txt ro.txt
same "the 0444 file is untouched" "$(cat ro.txt)" "keep"
check "and mv left its source" test -e src.txt
expect "write --force overwrites it" 0 wap write ro.txt --content forced --force
same "forced" "$(cat ro.txt)" "forced"
same "and it stays 0444" "$(stat -c %a ro.txt)" "444"
expect "edit --force edits it" 0 wap edit ro.txt --old forced --new edited --force
same "edited" "$(cat ro.txt)" "edited"
expect "a 0644 file needs no --force" 0 wap write src.txt --content y

# ---- 13.8 a full disk is an I/O error, not a size limit ----
mkdir -p full
if mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
	expect "write on a full disk: EXECUTION_FAILED" 125 sh -c 'head -c 200000 /dev/zero | wap write full/f.txt --json'
	jcheck "its code and message" "$OUT" 'j["code"]=="EXECUTION_FAILED" and "No space left on device" in j["error"]'
	check "no temp file left on it" test -z "$(ls -A full)"
	umount full
else
	ok "# SKIP cannot mount a tmpfs here (not root?): no full-disk test"
fi

# ---- 13.8 names that are not UTF-8 are never dropped from --json ----
mkdir -p nu && cd nu
bad=$(printf 'bad\377name.txt')
printf 'hello\n' > "$bad"
printf 'hello\n' > ok.txt
b64=$(printf 'bad\377name.txt' | base64)
expect "ls --json with a non-UTF-8 name" 0 wap ls nu --json
jcheck "ls: both entries, the bad one escaped and in bytes" "$OUT" 'len(j["files"])==2 and not j["isTruncated"] and any(f["name"]=="bad\\xffname.txt" and f["nameBytes"]=="'"$b64"'" for f in j["files"]) and all("nameBytes" not in f for f in j["files"] if f["name"]=="ok.txt")'
expect "glob --json" 0 wap glob 'nu/*' --json
jcheck "glob: both, with path and pathBytes" "$OUT" 'len(j["files"])==2 and all("path" in f for f in j["files"]) and any(f.get("pathBytes")=="'"$(printf 'nu/bad\377name.txt' | base64)"'" for f in j["files"])'
expect "grep --json" 0 wap grep hello nu --json
jcheck "grep: both matches" "$OUT" 'len(j["matches"])==2 and any(m.get("pathBytes")=="'"$(printf 'nu/bad\377name.txt' | base64)"'" and m["path"]=="nu/bad\\xffname.txt" for m in j["matches"])'
expect "grep -l --json" 0 wap grep -l hello nu --json
jcheck "grep -l: both files" "$OUT" 'sorted(j["files"])==["nu/bad\\xffname.txt","nu/ok.txt"]'
expect "grep -c --json" 0 wap grep -c hello nu --json
jcheck "grep -c: both counts" "$OUT" 'len(j["counts"])==2'
expect "stat --json of a non-UTF-8 name" 0 wap stat "nu/$bad" --json
jcheck "stat: path escaped, bytes exact" "$OUT" 'j["path"]=="nu/bad\\xffname.txt" and j["pathBytes"]=="'"$(printf 'nu/bad\377name.txt' | base64)"'"'
ln -s "$bad" "link"
expect "stat --json of a link to it" 0 wap stat nu/link --json
jcheck "stat: the target too" "$OUT" 'j["target"]=="bad\\xffname.txt" and j["targetBytes"]=="'"$b64"'"'
cd "$W"
cd nu
expect "read --json of a non-UTF-8 name" 0 wap read "nu/$bad" --json
jcheck "read: path and pathBytes" "$OUT" 'j["path"]=="nu/bad\\xffname.txt" and j["pathBytes"]=="'"$(printf 'nu/bad\377name.txt' | base64)"'" and j["content"]=="hello\n"'
expect "read --json of its directory" 0 wap read nu --json
jcheck "read: every entry" "$OUT" 'sorted(j["entries"])==["bad\\xffname.txt","link","ok.txt"]'
cd "$W"
