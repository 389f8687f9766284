# Data files and whole-file limits: every option that names a data file
# (--patch, --ops, --edits, --text-edits, --old-file, --new-file, exec
# --stdin, git --token-file) is a workspace path under the root's policy,
# never a FIFO waited on; maxFileSize holds for every whole-file op with
# bounded memory; read-only files, non-UTF-8 names, a full disk.
. tests/lib.sh
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
