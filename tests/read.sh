# read: line numbers, ranges, head/tail, directories, binary files,
# truncation, cut lines, UTF-8, archives, errors.
. tests/lib.sh

printf 'alpha\nbeta\r\ngamma' > "$W/f.txt"
seq 1 5000 > "$W/big.txt"
mkdir -p "$W/d/sub" && touch "$W/d/a.txt" "$W/d/sub/x"

expect "read through the wap-read link" 0 wap-read f.txt
same "lines prefixed N: " "$OUT" "$(printf '1: alpha\n2: beta\r\n3: gamma')"
expect "read through wap read" 0 wap read f.txt
same "wap read gives the same text" "$OUT" "$(printf '1: alpha\n2: beta\r\n3: gamma')"
expect "read --json" 0 wap read f.txt --json
J=$OUT
jcheck "content is the raw bytes, CRLF kept" "$J" 'j["content"] == "alpha\nbeta\r\ngamma"'
jcheck "metadata fields" "$J" 'j["metadata"]["size"] == 17 and j["metadata"]["isDirectory"] is False and j["metadata"]["path"].endswith("/ws/f.txt") and j["metadata"]["lastModified"].endswith("Z")'
jcheck "line counts" "$J" 'j["totalLines"] == 3 and j["returnedLines"] == 3 and j["startLine"] == 1 and j["isTruncated"] is False'
jcheck "version is git hash-object" "$J" "j['version'] == '$(git hash-object "$W/f.txt")'"
expect "wap-read --json through the link" 0 wap-read --json f.txt
same "same object from both doors" "$OUT" "$J"

expect "--offset --limit" 0 wap read big.txt --offset 100 --limit 3
same "lines 100-102" "$OUT" "$(printf '100: 100\n101: 101\n102: 102\n[truncated: showing lines 100-102 of 5000; read on with --offset 103]')"
expect "--offset --limit --json" 0 wap read big.txt --offset 100 -n 3 --json
jcheck "window fields" "$OUT" 'j["content"] == "100\n101\n102\n" and j["startLine"] == 100 and j["returnedLines"] == 3 and j["nextOffset"] == 103 and j["isTruncated"] and j["totalLines"] == 5000'
expect "--head" 0 wap read big.txt --head 2
same "head 2" "$OUT" "$(printf '1: 1\n2: 2\n[truncated: showing lines 1-2 of 5000; read on with --offset 3]')"
expect "--tail" 0 wap read big.txt --tail 2
same "tail 2 keeps the real line numbers" "$OUT" "$(printf '4999: 4999\n5000: 5000')"
expect "--tail on a file without a final newline" 0 wap read f.txt --tail 1 --json
jcheck "tail 1 is the last line" "$OUT" 'j["content"] == "gamma" and j["startLine"] == 3'
expect "--tail larger than the file" 0 wap read f.txt --tail 50 --json
jcheck "all lines" "$OUT" 'j["returnedLines"] == 3 and j["startLine"] == 1'

expect "default limit 2000" 0 wap read big.txt
has "truncation line says how to read on" "$OUT" "[truncated: showing lines 1-2000 of 5000; read on with --offset 2001]"
has "line 2000 shown" "$OUT" "2000: 2000"
lacks "line 2001 not shown" "$OUT" "2001: 2001"
expect "offset past the end" 0 wap read f.txt --offset 10 --json
jcheck "no lines, not an error" "$OUT" 'j["content"] == "" and j["returnedLines"] == 0 and j["totalLines"] == 3'
expect "offset past the end (text)" 0 wap read f.txt --offset 10
same "says so" "$OUT" "[no lines from line 10: f.txt has 3]"

# a file over maxFileSize: first part only, never loaded whole
python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    for i in range(60000): f.write('line %d %s\n' % (i + 1, 'x' * 30))" "$W/huge.txt"
expect "file over maxFileSize" 0 wap read huge.txt --json
jcheck "first 2000 lines, truncated" "$OUT" 'j["returnedLines"] == 2000 and j["isTruncated"] and j["totalLines"] == 60000 and j["nextOffset"] == 2001 and j["version"]'
printf '{"limits":{"maxFileSize":1000}}' > "$T/small.json"
expect "maxFileSize caps the output" 0 wap read huge.txt --config "$T/small.json" --json
jcheck "output limit reached" "$OUT" 'j["isTruncated"] and j["outputLimit"] == 1000 and 20 < j["returnedLines"] < 40'
expect "tail of a file over maxFileSize" 0 wap read huge.txt --config "$T/small.json" --tail 2 --json
jcheck "read from the end, numbered from the end" "$OUT" 'j["content"] == "line 59999 " + "x"*30 + "\nline 60000 " + "x"*30 + "\n" and j["startLine"] == -2 and j["fromEnd"] and j["totalLines"] is None'
expect "tail of a big file (text)" 0 wap read huge.txt --config "$T/small.json" --tail 1
has "negative numbers" "$OUT" "-1: line 60000"
# tail must not read the whole file: a sparse 4 GiB file with a tail
seq 1 3000 > "$W/sparse.log" && truncate -s 4G "$W/sparse.log" && printf '\nlast line\n' >> "$W/sparse.log"
expect "tail of a 4 GiB file is fast" 0 timeout 5 wap read sparse.log --tail 1
same "its last line" "$(printf %s "$OUT" | head -1)" "-1: last line"

# long lines are cut and marked
python3 -c "import sys; open(sys.argv[1],'w').write('a'*2500 + 'é'*5 + '\nshort\n')" "$W/long.txt"
expect "long line" 0 wap read long.txt --json
jcheck "cut at 2000 characters and marked" "$OUT" 'j["content"].startswith("a"*2000 + " ... [line cut: 2000 of 2505 characters shown]\n") and j["linesCut"] == 1 and j["content"].endswith("short\n")'
python3 -c "import sys; open(sys.argv[1],'w').write('é'*2001 + '\n')" "$W/multi.txt"
expect "multibyte long line" 0 wap read multi.txt --json
jcheck "cut on a character boundary" "$OUT" 'j["content"].startswith("é"*2000 + " ... [line cut")'

# invalid UTF-8 is reported, not silently replaced
printf 'caf\351\n' > "$W/latin1.txt"
expect "invalid UTF-8" 0 wap read latin1.txt --json
jcheck "replaced and reported" "$OUT" 'j["content"] == "caf\ufffd\n" and j["invalidUtf8"] is True'
expect "invalid UTF-8 (text)" 0 wap read latin1.txt
has "note line" "$OUT" "[latin1.txt is not valid UTF-8: invalid bytes are shown as U+FFFD]"

# directories
expect "directory listing" 0 wap read d
same "'/' after subdirectories" "$OUT" "$(printf 'a.txt\nsub/')"
expect "directory --json" 0 wap read d --json
jcheck "entries and metadata" "$OUT" 'j["entries"] == ["a.txt", "sub/"] and j["metadata"]["isDirectory"] is True and j["content"] == "a.txt\nsub/\n"'
expect "the root" 0 wap read .
has "root lists d/" "$OUT" "d/"

# binary files: metadata, never bytes
printf '\211PNG\r\n\032\n\0\0\0\rIHDR' > "$W/img.png"
expect "binary file" 0 wap read img.png --json
jcheck "binary metadata" "$OUT" 'j["binary"] is True and j["mimeType"] == "image/png" and j["content"] == "" and j["metadata"]["size"] == 16 and len(j["version"]) == 40'
expect "binary file (text)" 0 wap read img.png
same "binary text" "$OUT" "Binary file: img.png (16 bytes, image/png); its bytes are not shown"

# archives
mkdir -p "$T/src/pkg/sub"
printf 'hello\nworld\n' > "$T/src/pkg/README.md"
seq 1 30 > "$T/src/pkg/sub/n.txt"
printf 'x\0y' > "$T/src/pkg/bin.dat"
tar czf "$W/a.tar.gz" -C "$T/src" pkg
tar cJf "$W/a.tar.xz" -C "$T/src" pkg
(cd "$T/src" && python3 -c "
import zipfile
z = zipfile.ZipFile('$W/a.zip', 'w')
z.write('pkg/README.md'); z.write('pkg/sub/n.txt'); z.close()")
expect "archive listing" 0 wap read a.tar.gz
has "member with size" "$OUT" "pkg/README.md  (12 bytes)"
has "directory member" "$OUT" "pkg/sub/"
expect "archive listing --json" 0 wap read a.tar.gz --json
jcheck "entries with sizes" "$OUT" 'j["archive"] and {"path": "pkg/README.md", "isDirectory": False, "size": 12} in j["entries"]'
expect "tar.xz listing" 0 wap read a.tar.xz
has "xz member" "$OUT" "pkg/sub/n.txt  (81 bytes)"
if command -v zstd >/dev/null; then
	tar --zstd -cf "$W/a.tar.zst" -C "$T/src" pkg
	expect "tar.zst member" 0 wap read a.tar.zst --member pkg/README.md --head 1
	same "zst member line" "$OUT" "$(printf '1: hello\n[truncated: showing lines 1-1 of 2; read on with --offset 2]')"
fi
printf 'plain\ntext\n' | gzip > "$W/notes.txt.gz"
expect "a gzip'd plain file" 0 wap read notes.txt.gz --member data
same "raw member" "$OUT" "$(printf '1: plain\n2: text')"
expect "zip listing" 0 wap read a.zip --json
jcheck "zip entries" "$OUT" 'sorted(e["path"] for e in j["entries"]) == ["pkg/README.md", "pkg/sub/n.txt"]'
expect "--member" 0 wap read a.tar.gz --member pkg/README.md
same "member lines" "$OUT" "$(printf '1: hello\n2: world')"
expect "--member with ./ and line options" 0 wap read a.tar.gz --member ./pkg/sub/n.txt --offset 5 --limit 2 --json
jcheck "member window" "$OUT" 'j["content"] == "5\n6\n" and j["member"] == "./pkg/sub/n.txt" and j["totalLines"] == 30 and j["isTruncated"]'
expect "--member --tail" 0 wap read a.zip --member pkg/sub/n.txt --tail 2
same "member tail" "$OUT" "$(printf '29: 29\n30: 30')"
expect "binary member" 0 wap read a.tar.gz --member pkg/bin.dat --json
jcheck "binary member metadata" "$OUT" 'j["binary"] is True and j["memberSize"] == 3'
expect "missing member" 3 wap read a.tar.gz --member pkg/nope
same "missing member message" "$ERR" "wap read: File not found: pkg/nope in a.tar.gz"
expect "member that is a directory" 8 wap read a.tar.gz --member pkg/sub
same "directory member message" "$ERR" "wap read: Not a file: pkg/sub in a.tar.gz is a directory"
expect "--member of a non-archive" 2 wap read f.txt --member x
same "not an archive" "$ERR" "wap read: Not an archive: f.txt"

# read and grep -z go through one archive reader (lib/fs/archives.c): the
# members grep names ARCHIVE//MEMBER are the ones read lists, and reading
# that path gives the lines grep found.  Members stored as "./x" (tar -C
# dir .) and nested directories included.
mkdir -p "$T/agree/deep/er" && printf 'one\ntwo\n' > "$T/agree/top.txt" &&
	printf 'alpha\nbeta\ngamma\n' > "$T/agree/deep/er/n.txt"
mkdir -p "$W/agree" && tar czf "$W/agree/dot.tar.gz" -C "$T/agree" . &&
	tar cjf "$W/agree/plain.tar.bz2" -C "$T/agree" top.txt deep &&
	(cd "$T/agree" && python3 -c "
import zipfile
z = zipfile.ZipFile('$W/agree/z.zip', 'w')
z.write('top.txt', './top.txt'); z.write('deep/er/n.txt'); z.close()")
expect "grep -z over the archives" 0 wap grep -z -m 0 '' agree
grep_out=$OUT
same "grep -z member names" "$(printf '%s\n' "$grep_out" | sed 's/:[0-9]*:.*//' | sort -u)" "agree/dot.tar.gz//deep/er/n.txt
agree/dot.tar.gz//top.txt
agree/plain.tar.bz2//deep/er/n.txt
agree/plain.tar.bz2//top.txt
agree/z.zip//deep/er/n.txt
agree/z.zip//top.txt"
for a in dot.tar.gz plain.tar.bz2 z.zip; do
	expect "read lists $a" 0 wap read "agree/$a" --json
	same "read and grep -z name the same members of $a" \
		"$(jget "$OUT" '"\n".join(sorted(e["path"] for e in j["entries"] if not e["isDirectory"]))')" \
		"$(printf '%s\n' "$grep_out" | sed -n "s|^agree/$a//\([^:]*\):.*|\1|p" | sort -u)"
done
bad=0
while IFS= read -r l; do
	p=${l%%:*}; rest=${l#*:}; n=${rest%%:*}; text=${rest#*:}
	got=$(wap read "$p" --offset "$n" --limit 1 2>&1 | head -1)
	[ "$got" = "$n: $text" ] || { bad=1; echo "# $p line $n: grep [$text] read [$got]"; }
done <<<"$grep_out"
same "read ARCHIVE//MEMBER gives every line grep -z found" "$bad" 0
expect "ARCHIVE//MEMBER --json" 0 wap read agree/dot.tar.gz//deep/er/n.txt --json
jcheck "as --member" "$OUT" 'j["path"] == "agree/dot.tar.gz" and j["member"] == "deep/er/n.txt" and j["content"] == "alpha\nbeta\ngamma\n"'
expect "ARCHIVE//MEMBER: a missing member" 3 wap read agree/z.zip//nope.txt
same "missing member message" "$ERR" "wap read: File not found: nope.txt in agree/z.zip"
expect "DIR//FILE is still a path" 0 wap read agree//dot.tar.gz --json
jcheck "a directory before //" "$OUT" 'j["archive"] and j["path"] == "agree/dot.tar.gz"'
# a member named ../x is read from the archive, never from beside the root
printf 'OUTSIDE\n' > "$T/escape.txt"
python3 -c "
import io, tarfile
t = tarfile.open('$W/agree/up.tar', 'w'); d = b'INSIDE\n'
i = tarfile.TarInfo('../escape.txt'); i.size = len(d); t.addfile(i, io.BytesIO(d)); t.close()"
expect "grep -z names a ../ member inside the archive" 0 wap grep -z SIDE agree/up.tar
same "../ member line" "$OUT" "agree/up.tar//../escape.txt:1:INSIDE"
expect "read ARCHIVE//../member" 0 wap read agree/up.tar//../escape.txt
same "the member, not the file outside" "$OUT" "1: INSIDE"
expect "a non-archive before // is a plain path, confined" 4 wap read agree/nope//../../../escape.txt
rm -rf "$W/agree"

# errors
expect "missing file" 3 wap read nope.txt
same "not found message" "$ERR" "wap read: File not found: nope.txt"
expect "missing file --json" 3 wap read nope.txt --json
jcheck "JSON error" "$OUT" 'j == {"error": "File not found: nope.txt", "code": "FILE_NOT_FOUND"}'
expect "no PATH" 2 wap read
same "usage error" "$ERR" "wap read: missing PATH (see 'wap read --help')"
expect "bad --offset" 2 wap read f.txt --offset 0
same "offset message" "$ERR" "wap read: offset must be at least 1 (got 0)"
expect "bad --limit" 2 wap read f.txt --limit x
same "limit message" "$ERR" "wap read: --limit: not an integer: 'x'"
expect "--tail with --offset" 2 wap read f.txt --tail 2 --offset 3
same "tail conflict message" "$ERR" "wap read: tail cannot be combined with offset, limit or head"
expect "--head with --limit" 2 wap read f.txt --head 2 --limit 3
same "head conflict message" "$ERR" "wap read: head cannot be combined with limit"
expect "outside the root" 4 wap read ../x
same "access denied message" "$ERR" "wap read: Access denied: ../x is outside the workspace root $(cd "$W" && pwd -P)"
mkfifo "$W/fifo"
expect "a fifo is not a regular file" 8 wap read fifo
same "fifo message" "$ERR" "wap read: Not a regular file: fifo"
expect "restricted path" 5 wap read f.txt --restrict 'f.*'
same "restricted message" "$ERR" "wap read: Path restricted: f.txt is denied by restrictedPaths"
expect "path through a file" 9 wap read f.txt/x
same "not a directory message" "$ERR" "wap read: Not a directory: f.txt/x"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$T" "$W"; printf 'secret\n' > "$W/private.txt"; chmod 600 "$W/private.txt"
	expect "permission denied" 6 setpriv --reuid=65534 --regid=65534 --clear-groups "$WAP" read private.txt
	same "permission message" "$ERR" "wap read: Permission denied: private.txt"
elif [ "$(id -u)" != 0 ]; then
	printf 'secret\n' > "$W/private.txt"; chmod 000 "$W/private.txt"
	expect "permission denied" 6 wap read private.txt
	same "permission message" "$ERR" "wap read: Permission denied: private.txt"
fi
printf '{"security":{"allowFileSystemAccess":false}}' > "$T/nofs.json"
expect "file system access disabled" 15 wap read f.txt --config "$T/nofs.json"
same "FEATURE_DISABLED message" "$ERR" "wap read: File system access is disabled by policy (security.allowFileSystemAccess)"
expect "file system access disabled --json" 15 wap read f.txt --config "$T/nofs.json" --json
jcheck "FEATURE_DISABLED code" "$OUT" 'j["code"] == "FEATURE_DISABLED"'
printf '\037\213\010\000garbage, not deflate at all' > "$W/bad.tar.gz"
expect "a damaged archive" 125 wap read bad.tar.gz
has "EXECUTION_FAILED message" "$ERR" "wap read: Cannot read archive bad.tar.gz: "
