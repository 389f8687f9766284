# lazy: libgit2, libarchive and libwebsockets are loaded when an applet
# needs them (lib/core/lazy.c), not at start-up; when one cannot be loaded the
# applets that need it fail with EXECUTION_FAILED and say why, nothing is
# written, and the others work.
. tests/lib.sh
# libgit2 1.5's known leaks (fetch: git_remote_lookup), as tests/git.sh
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan-libgit2.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
cd "$W"

libs=$(ldd "$WAP" 2>/dev/null)
for l in libgit2 libarchive libwebsockets; do
	lacks "$l is not linked at start-up" "$libs" "$l.so"
done
sonames=$(strings "$WAP" | grep -E '^lib(git2|archive|websockets)\.so\.[0-9.]+$' | sort -u)
# libgit2 linked in (the Makefile, x86-64): its SSH library's soname is there
linked=$(strings "$WAP" | grep -x 'libssh2\.so\.1' || true)
same "the three sonames are in the binary" "$(printf '%s\n' "$sonames" | wc -l | tr -d ' ')" 3

# each library works when loaded
git init -q . && echo one > a.txt && tar cf t.tar a.txt
expect "git loads libgit2" 0 wap git status
has "git status works" "$OUT" "a.txt"
expect "read of a tar loads libarchive" 0 wap read t.tar
has "the tar's member listed" "$OUT" "a.txt"
expect "edit's diff loads libgit2" 0 wap edit a.txt --old one --new two --json
has "the diff" "$OUT" "+two"

# stand-ins that cannot load: a shared object without the functions, and a
# file that is no shared object at all, first on the library path
F=$T/fake
mkdir -p "$F"
printf 'int wap_fake;\n' > "$T/fake.c"
for so in $sonames; do
	case $so in
	libarchive*) echo 'not an ELF file' > "$F/$so" ;;
	*) cc -shared -fPIC -o "$F/$so" "$T/fake.c" ;;
	esac
done
[ -n "$linked" ] && for so in libssh2.so.1 libgssapi_krb5.so.2; do cc -shared -fPIC -o "$F/$so" "$T/fake.c"; done
broken() { LD_LIBRARY_PATH=$F "$@"; }

expect "read of a text file needs none of them" 0 broken wap read a.txt
has "read works" "$OUT" "1: two"
expect "grep needs none of them" 0 broken wap grep two
expect "glob needs none of them" 0 broken wap glob '*.txt'
expect "write needs none of them" 0 broken wap write b.txt --content new
same "written" "$(cat b.txt)" "new"

if [ -z "$linked" ]; then
expect "git without libgit2: EXECUTION_FAILED" 125 broken wap git status
has "says which library and why" "$ERR" "cannot load libgit2"
has "names the missing function" "$ERR" "has no git_"
expect "git --json: the error object" 125 broken wap git status --json
jcheck "code EXECUTION_FAILED" "$OUT" 'j["code"] == "EXECUTION_FAILED" and "libgit2" in j["error"]'

expect "edit without libgit2 fails" 125 broken wap edit a.txt --old two --new three
same "and leaves the file alone" "$(cat a.txt)" "two"
cat > "$T/p.diff" <<'EOP'
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-two
+four
EOP
expect "a patch without libgit2 fails" 125 broken wap edit --patch - < "$T/p.diff"
same "before writing anything" "$(cat a.txt)" "two"
else
# libgit2 linked in (x86-64): its SSH and GSS-API libraries are loaded by
# lib/git/deps.c when a remote first calls them, never for local actions
expect "git status needs neither libssh2 nor GSS-API" 0 broken wap git status
has "git status works" "$OUT" "a.txt"
dl=$(LD_DEBUG=files wap git status 2>&1 >/dev/null)
lacks "git status loads no libssh2" "$dl" "libssh2"
lacks "nor GSS-API" "$dl" "libgssapi"
expect "edit's diff needs neither" 0 broken wap edit a.txt --old two --new three --json
has "the diff" "$OUT" "+three"
echo two > a.txt
# a server that says it speaks SSH, then closes: libssh2 is loaded and its
# handshake fails (the trampolines reach the real library and back)
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
    try:
        c.recv(4096)
    except Exception:
        pass
    c.close()
' > "$T/sshport" &
sshpid=$!
wait_for 30 [ -s "$T/sshport" ]
git commit -qm one --allow-empty
git remote add origin "ssh://git@127.0.0.1:$(cat "$T/sshport")/r.git"
dl=$(LD_DEBUG=files wap git fetch 2>&1)
has "a fetch over SSH loads libssh2" "$dl" "file=libssh2.so.1"
has "and reaches its handshake" "$dl" "failed to start SSH session"
expect "fetch over SSH without libssh2: EXECUTION_FAILED" 125 broken wap git fetch
has "says which library and why" "$ERR" "cannot load libssh2.so.1"
expect "git status still works in that process's stead" 0 broken wap git status
kill "$sshpid" 2>/dev/null
fi
expect "read of an archive without libarchive fails" 125 broken wap read t.tar
has "says libarchive" "$ERR" "cannot load libarchive"
expect "grep -z without libarchive: error status 2" 2 broken wap grep -z two
has "grep says libarchive" "$ERR" "cannot load libarchive"

expect "serve --http without libwebsockets fails" 125 broken wap serve --http 127.0.0.1:0
has "serve says libwebsockets" "$ERR" "cannot load libwebsockets"
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"git","arguments":{"action":"status"}}}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"a.txt"}}}' |
	LD_LIBRARY_PATH=$F timeout 20 wap serve --drain 2>/dev/null)
if [ -z "$linked" ]; then
	has "serve over stdio: git reports the library" "$out" "cannot load libgit2"
else
	has "serve over stdio: git works without libssh2" "$out" "untracked"
fi
has "and the server goes on: read answers" "$out" "two"
