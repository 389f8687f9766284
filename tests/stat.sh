# stat: file, directory, symlink, --exists, errors.
. tests/lib.sh

printf 'hello world\n' > "$W/f.txt"
chmod 640 "$W/f.txt"
mkdir -p "$W/d/sub" && touch "$W/d/a" "$W/d/b"
ln -s f.txt "$W/link"
python3 -c "import sys; open(sys.argv[1],'w').write('x'*2048)" "$W/two.txt"

expect "stat a file through the link" 0 wap-stat f.txt
has "Path line" "$OUT" "Path: f.txt"
has "Type line" "$OUT" "Type: file"
has "Size line" "$OUT" "Size: 12 bytes"
has "Permissions in octal" "$OUT" "Permissions: 640"
has "uid" "$OUT" "Owner UID: $(id -u)"
has "gid" "$OUT" "Owner GID: $(id -g)"
has "Modified line" "$OUT" "Modified: $(date -u -r "$W/f.txt" '+%Y-%m-%d %H:%M:%S') UTC"
has "Created line" "$OUT" "Created: "
has "Accessed line" "$OUT" "Accessed: "
has "MIME type" "$OUT" "MIME type: text/plain"
expect "stat --json" 0 wap stat f.txt --json
J=$OUT
jcheck "JSON fields" "$J" 'j["type"] == "file" and j["size"] == 12 and j["permissions"] == "640" and j["isFile"] and not j["isDirectory"] and not j["isSymbolicLink"] and j["mimeType"] == "text/plain" and j["absolutePath"].endswith("/ws/f.txt")'
jcheck "times" "$J" "j['modified'].endswith('Z') and j['accessed'].endswith('Z') and j['changed'].endswith('Z') and abs(j['mtime'] / 1000 - $(stat -c %Y "$W/f.txt")) < 2 and isinstance(j['ctime'], int)"
jcheck "created is the birth time or null" "$J" 'j["created"] is None or j["created"].endswith("Z")'
jcheck "uid and gid" "$J" "j['uid'] == $(id -u) and j['gid'] == $(id -g)"
expect "wap stat gives the same" 0 wap stat --json f.txt
same "same object" "$OUT" "$J"
expect "human size" 0 wap stat two.txt
has "KB" "$OUT" "Size: 2.00 KB"

expect "stat a directory" 0 wap stat d
has "directory type" "$OUT" "Type: directory"
has "entry count" "$OUT" "Entries: 3"
lacks "no size for directories" "$OUT" "Size:"
expect "stat a directory --json" 0 wap stat d --json
jcheck "entries" "$OUT" 'j["entries"] == 3 and j["isDirectory"] and j["type"] == "directory"'
expect "stat the root" 0 wap stat . --json
jcheck "root" "$OUT" 'j["path"] == "." and j["isDirectory"]'

expect "stat a symlink" 0 wap stat link --json
jcheck "the link itself, with its target" "$OUT" 'j["type"] == "symlink" and j["isSymbolicLink"] and j["target"] == "f.txt" and not j["isFile"]'
expect "symlink text" 0 wap stat link
has "Target line" "$OUT" "Target: f.txt"
expect "-L: what the link leads to" 0 wap stat -L link --json
jcheck "  ... the file, as stat -L" "$OUT" 'j["type"] == "file" and j["isFile"] and not j["isSymbolicLink"] and j["size"] == 12 and j["permissions"] == "640" and j["path"] == "link"'
ln -s d "$W/dlink"
expect "--follow on a link to a directory" 0 wap stat --follow dlink --json
jcheck "  ... a directory with its entries" "$OUT" 'j["type"] == "directory" and j["entries"] == 3'
ln -s /etc/passwd "$W/outlink"
expect "-L on a link out of the root: refused (exit 4)" 4 wap stat -L outlink
expect "  ... without -L the link itself is described" 0 wap stat outlink --json
jcheck "  ... as a symlink" "$OUT" 'j["type"] == "symlink"'
rm "$W/outlink" "$W/dlink"
# a directory's entry count is what ls lists: restricted names not counted
mkdir -p "$W/cnt/secret" && touch "$W/cnt/a" "$W/cnt/key.pem"
expect "entries with restrictedPaths" 0 wap stat --restrict 'secret' --restrict '*.pem' cnt --json
jcheck "  ... restricted names not counted" "$OUT" 'j["entries"] == 1'
expect "entries without" 0 wap stat cnt --json
jcheck "  ... all counted" "$OUT" 'j["entries"] == 3'
rm -r "$W/cnt"

expect "--exists on a file" 0 wap stat --exists f.txt --json
jcheck "exists answer" "$OUT" 'j == {"path": "f.txt", "exists": True, "isFile": True, "isDirectory": False}'
expect "--exists on a directory" 0 wap stat --exists d
same "exists text" "$OUT" "d exists (directory)"
expect "--exists follows a link inside" 0 wap stat --exists link --json
jcheck "link to a file" "$OUT" 'j["exists"] and j["isFile"]'
expect "--exists on a missing path exits 1, no error" 1 wap stat --exists nope --json
jcheck "missing answer" "$OUT" 'j == {"path": "nope", "exists": False, "isFile": False, "isDirectory": False}'
same "no error text" "$ERR" ""
expect "--exists on a missing path (text)" 1 wap stat --exists nope/deeper
same "missing text" "$OUT" "nope/deeper does not exist"
expect "--exists under a file" 1 wap stat --exists f.txt/x
expect "--exists still refuses escapes" 4 wap stat --exists ../x

expect "missing path" 3 wap stat nope
same "not found message" "$ERR" "wap stat: Path not found: nope"
expect "missing path --json" 3 wap stat nope --json
jcheck "JSON error" "$OUT" 'j == {"error": "Path not found: nope", "code": "FILE_NOT_FOUND"}'
expect "no PATH" 2 wap stat
same "usage message" "$ERR" "wap stat: missing PATH (see 'wap stat --help')"
expect "outside the root" 4 wap stat /etc/passwd
same "access message" "$ERR" "wap stat: Access denied: /etc/passwd is outside the workspace root $(cd "$W" && pwd -P)"
expect "restricted" 5 wap stat f.txt --restrict '*.txt'
same "restricted message" "$ERR" "wap stat: Path restricted: f.txt is denied by restrictedPaths"
expect "under a file" 9 wap stat f.txt/x
same "not a directory message" "$ERR" "wap stat: Not a directory: f.txt/x"
printf '{"security":{"allowFileSystemAccess":false}}' > "$T/nofs.json"
expect "file system access disabled" 15 wap stat f.txt --config "$T/nofs.json"
same "FEATURE_DISABLED message" "$ERR" "wap stat: File system access is disabled by policy (security.allowFileSystemAccess)"
expect "file system access disabled --json" 15 wap stat f.txt --config "$T/nofs.json" --json
jcheck "FEATURE_DISABLED code" "$OUT" 'j["code"] == "FEATURE_DISABLED"'
