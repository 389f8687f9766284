# names: a file name holding a control character (a newline, a carriage
# return, an escape) or beginning with '"' is shown in text output quoted
# and C-escaped, as git shows it, on the CLI and in a server's text blocks
# alike: no name can pass for a line of wap's own or drive a terminal.
# --json and --jsonl carry the name itself.
. tests/lib.sh
cd "$W"
nl=$(printf 'a\nmain.c:1:fake.txt')
esc=$(printf 'e\033]0;pwned\007x')
cr=$(printf 'r\rover')
for f in "$nl" "$esc" "$cr" '"q.txt' 'plain "x".txt' 'tab	name'; do printf 'hit\n' > "$f"; done
mkdir "$(printf 'd\nir')" && printf 'hit\n' > "$(printf 'd\nir')/f"

expect "grep over names with control characters" 0 wap grep hit --sort path
same "grep: quoted as git quotes, plain names as they are" "$OUT" '"\"q.txt":1:hit
"a\nmain.c:1:fake.txt":1:hit
"d\nir/f":1:hit
"e\033]0;pwned\ax":1:hit
plain "x".txt:1:hit
"r\rover":1:hit
"tab\tname":1:hit'
lacks "grep: no raw escape reaches the output" "$OUT" "$(printf '\033')"
expect "grep -l" 0 wap grep -l hit --sort path
same "grep -l: quoted" "$(printf '%s\n' "$OUT" | head -2)" '"\"q.txt"
"a\nmain.c:1:fake.txt"'
expect "grep -c" 0 wap grep -c hit --sort path
same "grep -c: quoted" "$(printf '%s\n' "$OUT" | sed -n 2p)" '"a\nmain.c:1:fake.txt":1'
expect "grep -C1 (context lines)" 0 wap grep -C1 hit "$nl"
same "grep with context: the path quoted" "$OUT" '"a\nmain.c:1:fake.txt":1:hit'
expect "grep --json keeps the name itself" 0 wap grep hit "$nl" --json
jcheck "grep --json: the raw name" "$OUT" 'j["matches"][0]["path"] == "a\nmain.c:1:fake.txt"'
expect "grep --jsonl keeps the name itself (rg's messages)" 0 wap grep hit "$nl" --jsonl
has "grep --jsonl: JSON-escaped" "$OUT" '"path":{"text":"a\nmain.c:1:fake.txt"}'
expect "grep -r --write lists files quoted" 0 wap grep hit "$cr" -r HIT --write
same "grep --write: quoted" "$(printf '%s\n' "$OUT" | tail -1)" '"r\rover"'

expect "glob over the names" 0 wap glob '**' --sort path --type f
same "glob: quoted" "$OUT" '"\"q.txt"
"a\nmain.c:1:fake.txt"
"d\nir/f"
"e\033]0;pwned\ax"
plain "x".txt
"r\rover"
"tab\tname"'
expect "glob --tagged" 0 wap glob '*' --sort path --tagged
has "glob --tagged: quoted" "$OUT" '[DIR] "d\nir"'
expect "glob --json keeps the name itself" 0 wap glob 'a*' --json
jcheck "glob --json: the raw name" "$OUT" 'j["files"][0]["path"] == "a\nmain.c:1:fake.txt"'

expect "ls" 0 wap ls .
has "ls: an entry quoted" "$OUT" '[FILE] "e\033]0;pwned\ax"'
has "ls: a directory quoted" "$OUT" '[DIR] "d\nir"'
has "ls: a plain name as it is" "$OUT" '[FILE] plain "x".txt'
expect "stat" 0 wap stat "$esc"
has "stat: Path quoted" "$OUT" 'Path: "e\033]0;pwned\ax"'
ln -s "$cr" lnk
expect "stat of a link" 0 wap stat lnk
has "stat: Target quoted" "$OUT" 'Target: "r\rover"'
expect "stat --exists" 0 wap stat --exists "$nl"
same "stat --exists: quoted" "$OUT" '"a\nmain.c:1:fake.txt" exists (file)'

expect "write" 0 wap write "$(printf 'w\nx')" --content y
has "write: quoted" "$OUT" 'Created "w\nx": 1 bytes'
expect "edit" 0 wap edit "$(printf 'w\nx')" --old y --new z
has "edit: quoted" "$OUT" 'M "w\nx": 1 change'
expect "mkdir" 0 wap mkdir "$(printf 'm\nd')"
same "mkdir: quoted" "$OUT" 'Created directory "m\nd"'
expect "cp" 0 wap cp "$(printf 'w\nx')" "$(printf 'c\np')"
has "cp: quoted" "$OUT" 'Copied "w\nx" -> "c\np"'
expect "mv" 0 wap mv "$(printf 'c\np')" "$(printf 'm\nv')"
same "mv: quoted" "$OUT" 'Moved "c\np" -> "m\nv"'
expect "rm" 0 wap rm "$(printf 'm\nv')"
same "rm: quoted" "$OUT" 'Removed "m\nv"'
expect "a patch's file list" 0 wap edit --patch - <<'P'
*** Begin Patch
*** Add File: p	q
+new
*** End Patch
P
has "a patch's file list: quoted" "$OUT" 'A "p\tq"'

# a server's text blocks: the same renderer, so the same quoting
python3 - "$WAP" "$W" > "$T/mcp.out" <<'PY'
import sys
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--root", sys.argv[2]])
s.call("initialize", protocolVersion="2025-06-18", capabilities={}, clientInfo={"name": "t", "version": "1"})
for name, args in (("grep", {"pattern": "hit", "paths": ["a\nmain.c:1:fake.txt"]}),
                   ("glob", {"pattern": "e*"}), ("ls", {"path": "."})):
    r = s.call("tools/call", name=name, arguments=args)
    print(r["result"]["content"][0]["text"])
s.close()
PY
out=$(cat "$T/mcp.out")
has "MCP grep text: quoted" "$out" '"a\nmain.c:1:fake.txt":1:hit'
has "MCP glob text: quoted" "$out" '"e\033]0;pwned\ax"'
has "MCP ls text: quoted" "$out" '[FILE] "r\rover"'
lacks "MCP text: no raw escape" "$out" "$(printf '\033')"
