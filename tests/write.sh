# write: --content and stdin, modes, parents, versions, mode bits, errors.
. tests/lib.sh

expect "write --content through the link" 0 wap-write a.txt --content 'hello'
same "text result" "$OUT" "Created a.txt: 5 bytes written, version $(printf hello | git hash-object --stdin)"
same "file written" "$(cat "$W/a.txt")" "hello"
expect "write from stdin through wap write" 0 sh -c 'printf "line1\nline2\n" | wap write b.txt --json'
J=$OUT
jcheck "result fields" "$J" "j['success'] is True and j['path'] == 'b.txt' and j['bytesWritten'] == 12 and j['created'] is True and j['version'] == '$(printf 'line1\nline2\n' | git hash-object --stdin)'"
same "stdin content written" "$(cat "$W/b.txt")" "$(printf 'line1\nline2')"
expect "binary stdin kept byte for byte" 0 sh -c 'printf "a\0b\377" | wap write bin.dat'
same "binary bytes" "$(od -An -tx1 "$W/bin.dat" | tr -d ' ')" "610062ff"
expect "empty content" 0 wap write empty.txt --content ''
check "empty file created" test -f "$W/empty.txt" -a ! -s "$W/empty.txt"

expect "overwrite (default)" 0 wap write a.txt --content 'new' --json
jcheck "overwrite result" "$OUT" 'j["created"] is False and j["bytesWritten"] == 3 and j["size"] == 3'
same "overwritten" "$(cat "$W/a.txt")" "new"
expect "--mode append" 0 wap write a.txt --mode append --content '+more'
same "append text" "$OUT" "Appended to a.txt: 5 bytes appended, version $(printf 'new+more' | git hash-object --stdin)"
same "appended" "$(cat "$W/a.txt")" "new+more"
expect "--mode append creates" 0 wap write c.txt --mode append --content 'x' --json
jcheck "append to a missing file creates it" "$OUT" 'j["created"] is True'
expect "--mode create on an existing file" 10 wap write a.txt --mode create --content 'x'
same "ALREADY_EXISTS message" "$ERR" "wap write: File already exists: a.txt"
same "untouched" "$(cat "$W/a.txt")" "new+more"
expect "--mode create --json error" 10 wap write a.txt --mode create --content 'x' --json
jcheck "JSON error object" "$OUT" 'j["code"] == "ALREADY_EXISTS" and j["error"] == "File already exists: a.txt"'
expect "--mode create on a new file" 0 wap write new.txt --mode create --content 'n'
expect "bad --mode" 2 wap write a.txt --mode sideways --content x
same "mode message" "$ERR" "wap write: Invalid mode 'sideways': use create, overwrite or append"

expect "parents created" 0 wap write deep/er/still/f.txt --content 'd'
check "deep file exists" test -f "$W/deep/er/still/f.txt"
expect "absolute path inside the root" 0 wap write "$(cd "$W" && pwd -P)/abs.txt" --content 'abs' --json
jcheck "normalised path" "$OUT" 'j["path"] == "abs.txt"'
expect "dot-dot that stays inside" 0 wap write deep/../dd.txt --content 'dd' --json
jcheck "normalised" "$OUT" 'j["path"] == "dd.txt"'

# the mode of an existing file is kept; new files follow the umask
chmod 640 "$W/a.txt"
wap write a.txt --content 'again' >/dev/null
same "mode kept" "$(stat -c %a "$W/a.txt")" "640"
chmod 755 "$W/c.txt"
wap write c.txt --mode append --content 'y' >/dev/null
same "mode kept by append" "$(stat -c %a "$W/c.txt")" "755"
(umask 027; wap write um.txt --content u >/dev/null)
same "new file mode from umask" "$(stat -c %a "$W/um.txt")" "640"
check "no temp files left" test -z "$(find "$W" -name '.wap-*')"

# who may read a file is kept too: its access ACL, and its group (or, where
# the group cannot be kept, the group gets no more than others).  A rewrite
# dropped the ACL, so a 600 file whose ACL let one user in (mask rw: shown
# 660) came back 660 for its whole group (tenth hostile review)
printf 'secret\n' > "$W/acl.txt"
chmod 600 "$W/acl.txt"
if python3 - "$W/acl.txt" <<'EOF' 2>/dev/null
import os, struct, sys
U = 0xffffffff   # user::rw- user:65534:rw- group::--- mask::rw- other::---
acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, p, i) for t, p, i in
      [(1, 6, U), (2, 6, 65534), (4, 0, U), (0x10, 6, U), (0x20, 0, U)])
os.setxattr(sys.argv[1], 'system.posix_acl_access', acl)
EOF
then
	acl() { python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "system.posix_acl_access").hex())' "$1" 2>&1; }
	before=$(acl "$W/acl.txt")
	wap write acl.txt --content 'hush' >/dev/null
	same "ACL kept by write" "$(acl "$W/acl.txt")" "$before"
	wap edit acl.txt --old hush --new quiet >/dev/null
	same "ACL kept by edit" "$(acl "$W/acl.txt")" "$before"
	same "ACL'd file's bits" "$(stat -c %a "$W/acl.txt")" "660"
else
	ok "# SKIP no POSIX ACLs on this file system"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	# nobody rewrites its file of group root (not one of its groups): the
	# new file cannot keep the group, so the group gets what others get
	chmod o+x "$T" && mkdir "$T/grp" && chown 65534:65534 "$T/grp"
	printf 'g\n' > "$T/grp/g.txt" && chown 65534:0 "$T/grp/g.txt" && chmod 640 "$T/grp/g.txt"
	# (no env(1) between: run from a checkout in a 0700 dir, as a fresh
	# clone in mktemp -d is, its exec of wap was refused)
	WAP_ROOT="$T/grp" setpriv --reuid=65534 --regid=65534 --clear-groups "$WAP" write g.txt --content 'h' >/dev/null 2>&1
	same "group not kept: no group bits for another group" "$(stat -c '%a %g' "$T/grp/g.txt")" "600 65534"
	printf 'g\n' > "$T/grp/h.txt" && chown 65534:100 "$T/grp/h.txt" && chmod 640 "$T/grp/h.txt"
	WAP_ROOT="$T/grp" setpriv --reuid=65534 --regid=65534 --groups=100 "$WAP" write h.txt --content 'h' >/dev/null 2>&1
	same "group kept where it can be" "$(stat -c '%a %g' "$T/grp/h.txt")" "640 100"
fi

# versions
V=$(wap read a.txt --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
expect "--expected-version matching" 0 wap write a.txt --content 'v2' --expected-version "$V" --json
V2=$(printf v2 | git hash-object --stdin)
jcheck "new version returned" "$OUT" "j['version'] == '$V2'"
expect "--expected-version stale" 13 wap write a.txt --content 'v3' --expected-version "$V"
same "CONFLICT message" "$ERR" "wap write: Conflict: a.txt changed since version $V (now $V2); read it again"
same "nothing written on conflict" "$(cat "$W/a.txt")" "v2"
expect "--expected-version stale --json" 13 wap write a.txt --content 'v3' --expected-version "$V" --json
jcheck "CONFLICT details" "$OUT" "j['code'] == 'CONFLICT' and j['details'] == {'expected_version': '$V', 'current_version': '$V2'}"
expect "--expected-version '' on an existing file" 13 wap write a.txt --content x --expected-version ''
same "must-not-exist message" "$ERR" "wap write: Conflict: a.txt exists but was expected not to"
expect "--expected-version '' on a new file" 0 wap write fresh.txt --content x --expected-version ''
expect "--expected-version on a missing file" 13 wap write gone.txt --content x --expected-version "$V"
same "missing message" "$ERR" "wap write: Conflict: gone.txt no longer exists (expected version $V)"
expect "malformed --expected-version" 2 wap write a.txt --content x --expected-version 'abc'
same "malformed message" "$ERR" "wap write: Invalid expected_version 'abc': a version is 40 hex digits, as read prints it"

# errors
mkdir -p "$W/dir"
expect "writing a directory" 8 wap write dir --content x
same "NOT_A_FILE message" "$ERR" "wap write: Not a file: dir is a directory"
expect "a file in the way of the parents" 9 wap write a.txt/sub/f --content x
same "NOT_A_DIRECTORY message" "$ERR" "wap write: Not a directory: a.txt/sub/f"
expect "no --content, empty stdin" 0 wap write t.txt --json < /dev/null
jcheck "empty stdin writes an empty file" "$OUT" 'j["bytesWritten"] == 0'
expect "no PATH" 2 wap write --content x
same "usage message" "$ERR" "wap write: missing PATH (see 'wap write --help')"
expect "read-only workspace" 5 wap write a.txt --content x --read-only
same "read-only message" "$ERR" "wap write: Path restricted: a.txt (the workspace is read-only)"
expect "writing the root" 8 wap write . --content x
same "root message" "$ERR" "wap write: Not a file: . is a directory"
expect "outside the root" 4 wap write ../out.txt --content x
check "nothing written outside" test ! -e "$T/out.txt"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$T" "$W"; mkdir -p "$W/ro"; chmod 755 "$W/ro"
	expect "permission denied" 6 setpriv --reuid=65534 --regid=65534 --clear-groups "$WAP" write ro/x --content x
	same "permission message" "$ERR" "wap write: Permission denied: ro/x"
fi
printf '{"security":{"allowFileSystemAccess":false}}' > "$T/nofs.json"
expect "file system access disabled" 15 wap write f.txt --content x --config "$T/nofs.json"
same "FEATURE_DISABLED message" "$ERR" "wap write: File system access is disabled by policy (security.allowFileSystemAccess)"
expect "file system access disabled --json" 15 wap write f.txt --content x --config "$T/nofs.json" --json
jcheck "FEATURE_DISABLED code" "$OUT" 'j["code"] == "FEATURE_DISABLED"'
