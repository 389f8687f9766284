# ls: listing, --recursive, --max-depth, exclusions, --metadata, limits.
. tests/lib.sh

mkdir -p "$W/src/lib/deep/deeper" "$W/node_modules/pkg" "$W/.git/objects" "$W/docs" "$W/empty"
touch "$W/src/main.c" "$W/src/main.o" "$W/src/lib/util.c" "$W/src/lib/deep/deeper/bottom.c" \
	"$W/node_modules/pkg/index.js" "$W/README.md" "$W/.env" "$W/src-b"
printf 'hello' > "$W/docs/guide.md"
ln -s src "$W/link-to-src"

expect "ls through the link" 0 wap-ls
same "text format, sorted" "$OUT" "$(printf 'Contents of .:\n\n[FILE] .env\n[DIR] .git\n[FILE] README.md\n[DIR] docs\n[DIR] empty\n[FILE] link-to-src\n[DIR] node_modules\n[DIR] src\n[FILE] src-b')"
expect "wap ls src" 0 wap ls src
same "a subdirectory" "$OUT" "$(printf 'Contents of src:\n\n[DIR] lib\n[FILE] main.c\n[FILE] main.o')"
expect "ls --json" 0 wap ls --json
jcheck "files fields" "$OUT" '{"path": "src", "name": "src", "isDirectory": True, "type": "directory"} in j["files"] and j["isTruncated"] is False and j["totalFound"] == 9'
jcheck "symlink listed as a link" "$OUT" '{"path": "link-to-src", "name": "link-to-src", "isDirectory": False, "type": "symlink"} in j["files"]'
expect "empty directory" 0 wap ls empty
same "empty message" "$OUT" "Directory is empty: empty"

expect "--recursive" 0 wap ls -r
same "recursive: default exclusions, depth 3, links not followed" "$OUT" "$(printf 'Contents of .:\n\n[FILE] .env\n[FILE] README.md\n[DIR] docs\n[FILE] docs/guide.md\n[DIR] empty\n[FILE] link-to-src\n[DIR] src\n[DIR] src/lib\n[DIR] src/lib/deep\n[FILE] src/lib/util.c\n[FILE] src/main.c\n[FILE] src/main.o\n[FILE] src-b')"
expect "--recursive --json" 0 wap ls src --recursive --json
jcheck "paths from the root, names from the listed dir" "$OUT" '{"path": "src/lib/util.c", "name": "lib/util.c", "isDirectory": False, "type": "file"} in j["files"]'
mkdir -p "$W/tools/build" && touch "$W/tools/build/out.o" "$W/tools/target"
expect "default exclusions are directories" 0 wap ls -r tools
same "a file named like an excluded directory stays" "$OUT" "$(printf 'Contents of tools:\n\n[FILE] target')"
rm -rf "$W/tools"
expect "--max-depth 1" 0 wap ls -r --max-depth 1 src
lacks "no second level" "$OUT" "lib/util.c"
expect "--max-depth 4" 0 wap ls -r --max-depth 4 src
has "fourth level" "$OUT" "[FILE] lib/deep/deeper/bottom.c"
expect "--exclude glob without /" 0 wap ls -r --exclude '*.o' src
lacks "*.o excluded" "$OUT" "main.o"
has "others kept" "$OUT" "main.c"
expect "--exclude repeated, with a path glob" 0 wap ls -r --exclude '*.o' --exclude 'src/lib/**' --json
jcheck "both excludes applied" "$OUT" 'not any(f["path"].startswith("src/lib") or f["path"].endswith(".o") for f in j["files"]) and any(f["path"] == "src/main.c" for f in j["files"])'
expect "--no-default-excludes" 0 wap ls -r --no-default-excludes --max-depth 2
has "node_modules listed" "$OUT" "[DIR] node_modules/pkg"
lacks ".git is never walked (as grep and glob)" "$OUT" ".git/objects"
# the recursive listing is the shared walker: ignore files apply in a git work tree
mkdir -p "$W/gi/sub" "$W/gi/.git" && printf 'secret.log\n' > "$W/gi/.gitignore"
touch "$W/gi/sub/secret.log" "$W/gi/sub/kept.c"
expect "ls -r in a git work tree" 0 wap ls gi -r
lacks "gitignored file not listed" "$OUT" "secret.log"
has "other files listed" "$OUT" "[FILE] sub/kept.c"
expect "ls -r --no-ignore" 0 wap ls gi -r --no-ignore
has "--no-ignore lists the ignored file" "$OUT" "[FILE] sub/secret.log"
expect "ls (not recursive) is unaffected by ignore files" 0 wap ls gi/sub
has "plain listing shows everything" "$OUT" "[FILE] secret.log"
expect "listing inside an excluded directory by name" 0 wap ls -r node_modules
has "explicitly asked for" "$OUT" "[FILE] pkg/index.js"
expect "--metadata" 0 wap ls docs --metadata --json
jcheck "metadata object" "$OUT" 'j["files"][0]["metadata"]["size"] == 5 and j["files"][0]["metadata"]["isDirectory"] is False and j["files"][0]["metadata"]["path"].endswith("/ws/docs/guide.md") and j["files"][0]["metadata"]["lastModified"].endswith("Z")'
expect "--metadata text" 0 wap ls -l docs
has "size in text" "$OUT" "[FILE] guide.md  (5 bytes, modified "

# maxDirectoryEntries
mkdir "$W/many"
for i in $(seq 1 30); do : > "$W/many/f$(printf %02d "$i")"; done
printf '{"limits":{"maxDirectoryEntries":10}}' > "$T/cfg.json"
expect "maxDirectoryEntries honoured" 0 wap ls many --config "$T/cfg.json" --json
jcheck "truncated to 10 of 30, the first in order" "$OUT" 'len(j["files"]) == 10 and j["isTruncated"] and j["totalFound"] == 30 and j["files"][0]["path"] == "many/f01" and j["files"][9]["path"] == "many/f10"'
expect "truncation in text" 0 wap ls many --config "$T/cfg.json"
has "truncation line" "$OUT" "[truncated: showing 10 of 30 entries; list a subdirectory, lower --max-depth or add --exclude]"

# a directory of more entries than wap held (100,000 of them, as JSON:
# ~84 MB for 200,000): the entries shown are still the first in order, and
# only those shown are held
python3 -c "
import os
os.makedirs('$T/huge/d')
for i in range(120000):
    open('$T/huge/d/f%06d' % i, 'w').close()"
expect "ls of 120,000 entries" 0 env WAP_CALL_TIME_MAX=0 /usr/bin/time -f 'rss %M' "$WAP" --root "$T/huge" ls d --json
jcheck "the first 500 in order of 120,000" "$OUT" 'len(j["files"]) == 500 and j["totalFound"] == 120000 and [f["name"] for f in j["files"]] == ["f%06d" % i for i in range(500)]'
if [ -z "${ASAN:-}" ]; then
	rss=$(printf '%s\n' "$ERR" | sed -n 's/^rss //p')
	same "and held only those shown (RSS ${rss} KB < 20 MB)" "$(( ${rss:-999999} < 20000 ))" 1
else
	ok "RSS of a listing # SKIP ASan holds freed memory"
fi
rm -rf "$T/huge"

# restricted paths are not shown
expect "restricted entries hidden" 0 wap ls --restrict '.env' --restrict 'src/lib/**' -r
lacks ".env hidden" "$OUT" ".env"
lacks "src/lib hidden" "$OUT" "src/lib"

# errors
expect "missing directory" 3 wap ls nope
same "not found message" "$ERR" "wap ls: Directory not found: nope"
expect "missing directory --json" 3 wap ls nope --json
jcheck "JSON error" "$OUT" 'j == {"error": "Directory not found: nope", "code": "FILE_NOT_FOUND"}'
expect "a file" 9 wap ls README.md
same "not a directory message" "$ERR" "wap ls: Not a directory: README.md"
expect "bad --max-depth" 2 wap ls -r --max-depth 0
same "max-depth message" "$ERR" "wap ls: max_depth must be at least 1 (got 0)"
expect "bad --exclude glob" 2 wap ls --exclude '{a,b'
same "glob message" "$ERR" "wap ls: Invalid glob '{a,b': unbalanced '{'"
expect "outside the root" 4 wap ls ..
has "access denied" "$ERR" "wap ls: Access denied: .. is outside the workspace root"
expect "restricted directory" 5 wap ls src --restrict 'src'
same "restricted message" "$ERR" "wap ls: Path restricted: src is denied by restrictedPaths"
expect "unknown option" 2 wap ls --bogus
same "unknown option message" "$ERR" "wap ls: unknown option '--bogus' (see 'wap ls --help')"
printf '{"security":{"allowFileSystemAccess":false}}' > "$T/nofs.json"
expect "file system access disabled" 15 wap ls --config "$T/nofs.json"
same "FEATURE_DISABLED message" "$ERR" "wap ls: File system access is disabled by policy (security.allowFileSystemAccess)"
expect "file system access disabled --json" 15 wap ls --config "$T/nofs.json" --json
jcheck "FEATURE_DISABLED code" "$OUT" 'j["code"] == "FEATURE_DISABLED"'
