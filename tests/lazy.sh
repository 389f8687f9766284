# lazy: libgit2, libarchive and libwebsockets are loaded when an applet
# needs them (lib/core/lazy.c), not at start-up; when one cannot be loaded the
# applets that need it fail with EXECUTION_FAILED and say why, nothing is
# written, and the others work.
. tests/lib.sh
cd "$W"

libs=$(ldd "$WAP" 2>/dev/null)
for l in libgit2 libarchive libwebsockets; do
	lacks "$l is not linked at start-up" "$libs" "$l.so"
done
sonames=$(strings "$WAP" | grep -E '^lib(git2|archive|websockets)\.so\.[0-9.]+$' | sort -u)
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
broken() { LD_LIBRARY_PATH=$F "$@"; }

expect "read of a text file needs none of them" 0 broken wap read a.txt
has "read works" "$OUT" "1: two"
expect "grep needs none of them" 0 broken wap grep two
expect "glob needs none of them" 0 broken wap glob '*.txt'
expect "write needs none of them" 0 broken wap write b.txt --content new
same "written" "$(cat b.txt)" "new"

expect "git without libgit2: EXECUTION_FAILED" 125 broken wap git status
has "says which library and why" "$ERR" "cannot load libgit2"
has "names the missing function" "$ERR" "has no git_"
expect "git --json: the error object" 125 broken wap git status --json
jcheck "code EXECUTION_FAILED" "$OUT" 'j["code"] == "EXECUTION_FAILED" and "libgit2" in j["error"]'

expect "edit without libgit2 fails" 125 broken wap edit a.txt --old two --new three
same "and leaves the file alone" "$(cat a.txt)" "two"
cat > "$T/p.diff" <<'EOF'
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-two
+four
EOF
expect "a patch without libgit2 fails" 125 broken wap edit --patch - < "$T/p.diff"
same "before writing anything" "$(cat a.txt)" "two"

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
has "serve over stdio: git reports the library" "$out" "cannot load libgit2"
has "and the server goes on: read answers" "$out" "two"
