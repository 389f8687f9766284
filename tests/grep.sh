# grep: every flag, the result shapes, errors, and agreement with ripgrep.
. tests/lib.sh
cd "$W"
mkdir -p src/sub node_modules/m .github .git build deep/a/b
printf 'alpha\nbeta PM_RESUME one\ngamma\ndelta\nPM_RESUME two\nzeta\n' > src/a.c
printf 'hello world\nfoo_resume bar\nFoo_Resume baz\n' > src/sub/b.h
printf 'x = PM_SUSPEND\n' > src/c.py
printf 'PM_RESUME in node_modules\n' > node_modules/m/i.js
printf 'PM_RESUME in build\n' > build/out.c
printf 'PM_RESUME in git\n' > .git/config
printf 'on: PM_RESUME\n' > .github/ci.yml
printf 'bin\000ary PM_RESUME\n' > bin.dat
printf 'deep PM_RESUME\n' > deep/a/b/d.txt

# --- lines, exit status
expect "match exits 0" 0 wap-grep PM_RESUME
same "sorted path:line:text, hidden searched, excluded/binary skipped" "$OUT" ".github/ci.yml:1:on: PM_RESUME
deep/a/b/d.txt:1:deep PM_RESUME
src/a.c:2:beta PM_RESUME one
src/a.c:5:PM_RESUME two"
expect "no match exits 1" 1 wap grep NO_SUCH_TEXT
same "no match prints nothing" "$OUT" ""
expect "through wap grep too" 0 wap grep PM_RESUME src
same "PATH limits the search" "$OUT" "src/a.c:2:beta PM_RESUME one
src/a.c:5:PM_RESUME two"
expect "a file as PATH" 0 wap grep PM_RESUME src/a.c
has "file PATH" "$OUT" "src/a.c:5:PM_RESUME two"
expect "several PATHs" 0 wap grep PM_RESUME src/a.c deep
has "second PATH searched" "$OUT" "deep/a/b/d.txt:1:"

expect "-n accepted" 0 wap grep -n PM_RESUME src
same "-n changes nothing" "$OUT" "$(wap grep PM_RESUME src)"

# --- --json: the WAP searchFiles shape
expect "--json" 0 wap grep PM_RESUME src --json
jcheck "searchFiles shape" "$OUT" 'set(j) >= {"matches","isTruncated","totalMatches"} and j["totalMatches"] == 2 and j["isTruncated"] is False'
jcheck "match object" "$OUT" 'j["matches"][0] == {"path":"src/a.c","line":2,"matchText":"beta PM_RESUME one","contextBefore":[],"contextAfter":[]}'
jcheck "binary files counted" "$(wap grep PM_RESUME --json)" 'j["binaryFilesSkipped"] == 1'

# --- matching flags
expect "-i" 0 wap grep -i foo_resume src
same "-i both cases" "$OUT" "src/sub/b.h:2:foo_resume bar
src/sub/b.h:3:Foo_Resume baz"
expect "--ignore-case long" 0 wap grep --ignore-case FOO_RESUME src
has "long -i" "$OUT" "Foo_Resume"
expect "-w needs a word" 1 wap grep -w resume src
same "-w: nothing printed" "$OUT" ""
expect "-w no match exits 1" 1 wap grep -w RESUME src
expect "-w word" 0 wap grep -w PM_RESUME src
has "-w finds the word" "$OUT" "src/a.c:2"
expect "-x" 0 wap grep -x gamma src
same "-x whole line" "$OUT" "src/a.c:3:gamma"
expect "-x partial is no match" 1 wap grep -x gam src
expect "-v" 0 wap grep -v a src/a.c
same "-v inverts" "$OUT" "src/a.c:5:PM_RESUME two"
expect "-F literal" 1 wap grep -F 'PM.RESUME' src
expect "regex dot matches" 0 wap grep 'PM.RESUME' src
expect "-F with regex metacharacters" 0 wap grep -F '= PM_' src
same "-F text" "$OUT" "src/c.py:1:x = PM_SUSPEND"
expect "-e twice" 0 wap grep -e alpha -e zeta src
same "-e alternatives" "$OUT" "src/a.c:1:alpha
src/a.c:6:zeta"
expect "-e then PATH" 0 wap grep -e alpha src/a.c
same "-e: first argument is a PATH" "$OUT" "src/a.c:1:alpha"
expect "-U multiline" 0 wap grep -U 'gamma\ndelta' src
same "-U prints each line" "$OUT" "src/a.c:3:gamma
src/a.c:4:delta"
expect "without -U no match across lines" 1 wap grep 'gamma\ndelta' src
expect "alternation" 0 wap grep 'PM_RESUME|PM_SUSPEND' src
has "alternation both" "$OUT" "src/c.py:1:x = PM_SUSPEND"

# --- output modes
expect "-l" 0 wap grep -l PM_RESUME
same "-l files" "$OUT" ".github/ci.yml
deep/a/b/d.txt
src/a.c"
jcheck "-l --json" "$(wap grep -l PM_RESUME --json)" 'j["files"] == [".github/ci.yml","deep/a/b/d.txt","src/a.c"] and j["isTruncated"] is False'
expect "-c" 0 wap grep -c PM_RESUME src
same "-c counts" "$OUT" "src/a.c:2"
jcheck "-c --json" "$(wap grep -c PM_RESUME --json src)" 'j["counts"] == [{"path":"src/a.c","count":2}] and j["totalMatches"] == 2'
expect "-o" 0 wap grep -o 'PM_\w+' src
same "-o parts" "$OUT" "src/a.c:2:PM_RESUME
src/a.c:5:PM_RESUME
src/c.py:1:PM_SUSPEND"
expect "-o twice on a line" 0 wap grep -o 'a' src/sub/b.h
same "-o each occurrence" "$OUT" "src/sub/b.h:2:a
src/sub/b.h:3:a"
expect "-C1" 0 wap grep -C1 PM_RESUME src/a.c
same "-C1 context, merged" "$OUT" "src/a.c-1-alpha
src/a.c:2:beta PM_RESUME one
src/a.c-3-gamma
src/a.c-4-delta
src/a.c:5:PM_RESUME two
src/a.c-6-zeta"
expect "-A1" 0 wap grep -A1 alpha src/a.c
same "-A1" "$OUT" "src/a.c:1:alpha
src/a.c-2-beta PM_RESUME one"
expect "-B2" 0 wap grep -B2 gamma src/a.c
same "-B2" "$OUT" "src/a.c-1-alpha
src/a.c-2-beta PM_RESUME one
src/a.c:3:gamma"
expect "-A0 separators" 0 wap grep -A1 -e alpha -e zeta src/a.c
same "-- between groups" "$OUT" "src/a.c:1:alpha
src/a.c-2-beta PM_RESUME one
--
src/a.c:6:zeta"
jcheck "context in JSON" "$(wap grep -C1 gamma src/a.c --json)" 'j["matches"][0]["contextBefore"] == ["beta PM_RESUME one"] and j["matches"][0]["contextAfter"] == ["delta"]'

# --- limits
for i in $(seq 1 30); do echo "hit $i"; done > many.txt
expect "--max-results" 0 wap grep hit many.txt --max-results 5 --json
jcheck "truncated with the true total" "$OUT" 'len(j["matches"]) == 5 and j["isTruncated"] is True and j["totalMatches"] == 30'
expect "-m text" 0 wap grep hit many.txt -m 3
has "truncation said" "$OUT" "3 of 30 matches shown"
jcheck "-m 0 is all" "$(wap grep hit many.txt -m 0 --json)" 'len(j["matches"]) == 30 and not j["isTruncated"]'
jcheck "default 100" "$(for i in $(seq 1 150); do echo "hit $i"; done > many2.txt; wap grep hit many2.txt --json)" 'len(j["matches"]) == 100 and j["totalMatches"] == 150'
python3 -c 'print("x" * 3000 + " NEEDLE")' > long.txt
expect "long line" 0 wap grep NEEDLE long.txt --json
jcheck "line cut at 2000" "$OUT" 'j["matches"][0]["matchText"].startswith("x" * 2000) and "cut" in j["matches"][0]["matchText"] and len(j["matches"][0]["matchText"]) < 2100'
python3 -c 'print("é" * 2500 + " NEEDLE")' > long2.txt
expect "long line of 2-byte characters" 0 wap grep NEEDLE long2.txt --json
jcheck "cut at 2000 characters, not bytes" "$OUT" 'j["matches"][0]["matchText"].startswith("é" * 2000 + " [") and "2000 characters" in j["matches"][0]["matchText"]'
expect "cut in text too" 0 wap grep NEEDLE long2.txt
has "text cut note" "$OUT" "line cut at 2000 characters"
python3 -c 'print("é" * 1500 + " NEEDLE")' > long3.txt
jcheck "2000 bytes but fewer characters: not cut" "$(wap grep NEEDLE long3.txt --json)" 'j["matches"][0]["matchText"].endswith("NEEDLE")'
rm -f many.txt many2.txt long.txt long2.txt long3.txt
python3 -c '
import sys
with open("big.log", "w") as f:
    for i in range(500000):
        f.write("line %d of a file bigger than the read buffer\n" % i)
    f.write("NEEDLE at the end\n")
'
expect "a file over 16 MiB" 0 wap grep NEEDLE big.log
same "found at its end" "$OUT" "big.log:500001:NEEDLE at the end"
expect "big file count" 0 wap grep -c 'line \d+ of' big.log
same "every line counted" "$OUT" "big.log:500000"
rm -f big.log

# --- a UTF-8 byte order mark is not text (as rg)
printf '\357\273\277first BOMLINE\nsecond\n' > bom.txt
expect "BOM: ^ at the first line's text" 0 wap grep '^first' bom.txt
same "BOM not shown" "$OUT" "bom.txt:1:first BOMLINE"
expect "BOM: --write keeps it" 0 wap grep BOMLINE -r X --write bom.txt
printf '\357\273\277first X\nsecond\n' > "$T/bom.want"
check "BOM kept, text replaced" cmp bom.txt "$T/bom.want"
rm -f bom.txt

# --- UTF-16 with a byte order mark is searched as text (as rg); without
# one it is binary
mkdir u16 && python3 - <<'EOF2'
t = "line one\nPM_RESUME \u00e9t\u00e9 \U0001F600\n\u4e2d PM_RESUME\n"
open("u16/le.txt", "wb").write(t.encode("utf-16"))            # BOM, little-endian
open("u16/be.txt", "wb").write(b"\xfe\xff" + t.encode("utf-16-be"))
open("u16/nobom.txt", "wb").write(t.encode("utf-16-le"))
EOF2
expect "UTF-16 LE and BE found" 0 wap grep PM_RESUME u16
same "decoded lines, line numbers" "$OUT" "u16/be.txt:2:PM_RESUME été 😀
u16/be.txt:3:中 PM_RESUME
u16/le.txt:2:PM_RESUME été 😀
u16/le.txt:3:中 PM_RESUME"
jcheck "UTF-16 without a BOM is binary" "$(wap grep PM_RESUME u16 --json)" 'j["binaryFilesSkipped"] == 1 and j["totalMatches"] == 4'
if command -v rg >/dev/null 2>&1; then
	same "the same lines as rg" "$OUT" "$(rg --no-config --sort path -n PM_RESUME u16)"
else
	ok "the same lines as rg # SKIP rg not installed"
fi
expect "-o in UTF-16" 0 wap grep -o 'é+t' u16/le.txt
same "-o decoded" "$OUT" "u16/le.txt:2:ét"
expect "--replace --write in UTF-16" 0 wap grep 'PM_(RESUME)' -r 'pm_$1' --write u16/le.txt u16/be.txt --json
jcheck "two files, four replacements" "$OUT" 'j["count"] == 4 and len(j["files"]) == 2'
same "LE file: still UTF-16LE with its BOM, text replaced" \
	"$(python3 -c 'import sys; b = open("u16/le.txt", "rb").read(); print(b[:2] == b"\xff\xfe", b[2:].decode("utf-16-le") == "line one\npm_RESUME \u00e9t\u00e9 \U0001F600\n\u4e2d pm_RESUME\n")')" "True True"
same "BE file: still UTF-16BE with its BOM" \
	"$(python3 -c 'b = open("u16/be.txt", "rb").read(); print(b[:2] == b"\xfe\xff", "pm_RESUME" in b[2:].decode("utf-16-be"))')" "True True"
printf '\377\376P\000M\000_\000\000\330\n\000' > u16/bad.txt
expect "a lone surrogate: found, shown as U+FFFD" 0 wap grep PM_ u16/bad.txt
expect "a lone surrogate: not rewritten" 2 wap grep PM_ -r X --write u16/bad.txt
has "says why" "$ERR" "not valid UTF-16"
rm -rf u16

# --- filters
expect "--include" 0 wap grep PM_ --include '*.py'
same "--include only" "$OUT" "src/c.py:1:x = PM_SUSPEND"
expect "--include twice" 0 wap grep PM_ --include '*.py' --include '*.yml'
has "--include both" "$OUT" ".github/ci.yml"
expect "--exclude dir" 0 wap grep PM_RESUME --exclude src --exclude deep
same "--exclude prunes" "$OUT" ".github/ci.yml:1:on: PM_RESUME"
expect "--exclude file glob" 0 wap grep PM_ --exclude '*.c' src
same "--exclude *.c" "$OUT" "src/c.py:1:x = PM_SUSPEND"
expect "--type c" 0 wap grep -i resume --type c
same "--type c: .c and .h" "$OUT" "src/a.c:2:beta PM_RESUME one
src/a.c:5:PM_RESUME two
src/sub/b.h:2:foo_resume bar
src/sub/b.h:3:Foo_Resume baz"
expect "-t py" 0 wap grep PM_ -t py
same "-t py" "$OUT" "src/c.py:1:x = PM_SUSPEND"
expect "--type unknown" 2 wap grep PM_ --type cobol
has "unknown type message" "$ERR" "Unknown file type 'cobol'"
expect "--max-depth 1" 1 wap grep PM_RESUME --max-depth 1 src/..
expect "--max-depth 2" 0 wap grep PM_RESUME --max-depth 2
same "--max-depth 2" "$OUT" ".github/ci.yml:1:on: PM_RESUME
src/a.c:2:beta PM_RESUME one
src/a.c:5:PM_RESUME two"
expect "--no-default-excludes" 0 wap grep -l PM_RESUME --no-default-excludes
same "defaults off, .git never" "$OUT" ".github/ci.yml
build/out.c
deep/a/b/d.txt
node_modules/m/i.js
src/a.c"
expect "-a binary as text" 0 wap grep -l PM_RESUME -a
has "-a searches binary" "$OUT" "bin.dat"
expect "--text long" 0 wap grep -l ary --text
has "--text" "$OUT" "bin.dat"

# --- sort
touch -d '2020-01-01' src/a.c; touch -d '2024-01-01' deep/a/b/d.txt; touch -d '2022-01-01' .github/ci.yml
expect "--sort mtime" 0 wap grep -l PM_RESUME --sort mtime
same "newest first" "$OUT" "deep/a/b/d.txt
.github/ci.yml
src/a.c"
expect "--sort none" 0 wap grep -l PM_RESUME --sort none
same "--sort none finds the same" "$(printf '%s\n' "$OUT" | sort)" ".github/ci.yml
deep/a/b/d.txt
src/a.c"
expect "--sort bad" 2 wap grep x --sort size
has "bad sort message" "$ERR" "Invalid sort 'size'"
expect "-j1" 0 wap grep -j1 PM_RESUME
same "-j1 same output" "$OUT" "$(wap grep -j4 PM_RESUME)"
expect "--threads 3" 0 wap grep --threads 3 -c PM_RESUME

# --- symlinks
ln -s src/a.c link.c
ln -s src srclink
ln -s / rootlink
ln -s .. up
expect "links not followed" 0 wap grep -l alpha
same "only the file itself" "$OUT" "src/a.c"
expect "--follow" 0 wap grep -l alpha --follow
same "--follow: links inside the root, loop-safe, never outside" "$OUT" "link.c
src/a.c
srclink/a.c"
expect "-L" 0 wap grep -L -c alpha
rm -f link.c srclink rootlink up

# --- archives
mkdir -p arch && tar czf arch/t.tar.gz src/a.c && printf 'gz PM_RESUME\n' | gzip > arch/one.txt.gz
(cd "$T" && rm -f z.zip && python3 -c 'import zipfile; z=zipfile.ZipFile("z.zip","w"); z.writestr("in/zip.txt","zip PM_RESUME\n"); z.close()' && mv z.zip "$W/arch/")
expect "archives skipped by default" 1 wap grep PM_RESUME arch
expect "-z" 0 wap grep -z PM_RESUME arch
same "-z members" "$OUT" "arch/one.txt.gz:1:gz PM_RESUME
arch/t.tar.gz//src/a.c:2:beta PM_RESUME one
arch/t.tar.gz//src/a.c:5:PM_RESUME two
arch/z.zip//in/zip.txt:1:zip PM_RESUME"
expect "--search-archives" 0 wap grep --search-archives -l zip arch
same "zip member" "$OUT" "arch/z.zip//in/zip.txt"
mkdir -p arch2 && cd arch2
printf 'in xz PM_RESUME\n' | xz > a.txt.xz
printf 'in bz2 PM_RESUME\n' | bzip2 > c.txt.bz2
mkdir m && printf 'member PM_RESUME\n' > m/f.txt && tar cJf e.tar.xz m && rm -rf m
if command -v zstd >/dev/null 2>&1; then printf 'in zst PM_RESUME\n' | zstd -q > b.txt.zst; fi
cd "$W"
expect "-z xz, bz2, zst, tar.xz" 0 wap grep -z PM_RESUME arch2
has "xz" "$OUT" "arch2/a.txt.xz:1:in xz PM_RESUME"
has "bz2" "$OUT" "arch2/c.txt.bz2:1:in bz2 PM_RESUME"
has "tar.xz member" "$OUT" "arch2/e.tar.xz//m/f.txt:1:member PM_RESUME"
if command -v zstd >/dev/null 2>&1; then has "zst" "$OUT" "arch2/b.txt.zst:1:in zst PM_RESUME"; fi
rm -rf arch arch2

# --- replace
expect "--replace shows" 0 wap grep 'PM_(\w+)' -r 'pm_$1' src/a.c
same "replaced lines" "$OUT" "src/a.c:2:beta pm_RESUME one
src/a.c:5:pm_RESUME two"
same "file untouched" "$(cat src/a.c | head -2 | tail -1)" "beta PM_RESUME one"
cp src/a.c src/w.c
expect "--replace --write" 0 wap grep 'PM_(\w+)' --replace '${1}_X' --write src/w.c --json
jcheck "{count, files}" "$OUT" 'j == {"count": 2, "files": ["src/w.c"]}'
same "file rewritten" "$(cat src/w.c)" "alpha
beta RESUME_X one
gamma
delta
RESUME_X two
zeta"
expect "--write text" 1 wap grep 'NOPE' -r x --write src/w.c
expect "--write without --replace" 2 wap grep x --write
has "needs --replace" "$ERR" "--write needs --replace"
expect "--write read-only" 2 wap grep alpha -r b --write src/w.c --read-only
has "read-only refused" "$ERR" "read-only"
jcheck "read-only JSON error" "$(wap grep alpha -r b --write src/w.c --read-only --json)" 'j["code"] == "PATH_RESTRICTED"'
rm -f src/w.c

# --- jsonl: ripgrep's message stream
expect "--jsonl" 0 wap grep --jsonl PM_RESUME src
printf '%s\n' "$OUT" > "$T/jl"
check "--jsonl lines are JSON" python3 -c '
import json,sys
m=[json.loads(l) for l in open(sys.argv[1])]
t=[x["type"] for x in m]
assert t==["begin","match","match","end","summary"], t
a=m[1]["data"]
assert a["path"]=={"text":"src/a.c"} and a["lines"]=={"text":"beta PM_RESUME one\n"}, a
assert a["line_number"]==2 and a["absolute_offset"]==6, a
assert a["submatches"]==[{"match":{"text":"PM_RESUME"},"start":5,"end":14}], a
assert m[3]["data"]["stats"]["matched_lines"]==2
assert m[4]["data"]["stats"]["searches_with_match"]==1
' "$T/jl"
expect "--jsonl context" 0 wap grep --jsonl -C1 gamma src/a.c
printf '%s\n' "$OUT" > "$T/jl"
check "--jsonl context messages" python3 -c '
import json,sys
m=[json.loads(l) for l in open(sys.argv[1])]
t=[x["type"] for x in m]
assert t==["begin","context","match","context","end","summary"], t
assert m[1]["data"]["line_number"]==2 and m[1]["data"]["absolute_offset"]==6, m[1]
assert m[3]["data"]["lines"]["text"]=="delta\n" and m[3]["data"]["absolute_offset"]==31, m[3]
' "$T/jl"
expect "--jsonl no match" 1 wap grep --jsonl NOPE_NOPE src

# --- errors
expect "invalid regex" 2 wap grep 'a(b' src
same "PCRE2 message and offset" "$ERR" "wap grep: Invalid regex 'a(b': missing closing parenthesis at offset 3"
expect "invalid regex --json" 2 wap grep '[z-a]' --json
jcheck "INVALID_ARGUMENT with offset" "$OUT" 'j["code"] == "INVALID_ARGUMENT" and j["details"]["offset"] == 3 and "range out of order" in j["error"]'
expect "missing pattern" 2 wap grep
has "missing pattern message" "$ERR" "missing PATTERN"
expect "missing path" 2 wap grep x no/such/dir
has "not found" "$ERR" "File not found"
jcheck "not found JSON" "$(wap grep x no/such --json)" 'j["code"] == "FILE_NOT_FOUND"'
expect "outside the root" 2 wap grep x ../..
has "access denied" "$ERR" "Access denied"
expect "unknown option" 2 wap grep --frobnicate x
expect "bad -A" 2 wap grep -A -1 x
expect "--restrict honoured" 0 wap grep -l PM_RESUME --restrict 'deep/**'
lacks "restricted path skipped" "$OUT" "deep/"

# --- a file bigger than the read buffer (16 MiB): searched in pieces of
# whole lines, in bounded memory, with the lines, numbers and counts GNU
# grep gives (matches fall on every side of the pieces' seams)
mkdir -p big
python3 - big/big.txt big/long.txt <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1, 1_300_001):
        if i % 9973 == 0:
            f.write(f"line {i} PM_RESUME here\n")
        else:
            f.write(f"line {i} " + "x" * (i % 97) + "\n")
    f.write("last PM_RESUME no newline")
with open(sys.argv[2], "w") as f:
    f.write("start\n" + "y" * (20 << 20) + " PM_RESUME\nafter PM_RESUME\n")
PY
expect "big file: matches" 0 wap grep -m 0 PM_RESUME big/big.txt
grep -Hn PM_RESUME big/big.txt > "$T/g.out"
if printf '%s\n' "$OUT" | cmp -s - "$T/g.out"; then ok "big file: the lines and numbers grep -n gives"
else fail "big file: lines differ from grep -n: $(printf '%s\n' "$OUT" | diff - "$T/g.out" | head -4)"; fi
expect "big file: -c" 0 wap grep -c PM_RESUME big/big.txt
same "big file: -c as grep -c" "$OUT" "big/big.txt:$(grep -c PM_RESUME big/big.txt)"
expect "big file: -v -c" 0 wap grep -v -c PM_RESUME big/big.txt
same "big file: -v -c as grep -v -c" "$OUT" "big/big.txt:$(grep -v -c PM_RESUME big/big.txt)"
expect "big file: -l" 0 wap grep -l PM_RESUME big
same "big file: -l" "$OUT" "big/big.txt
big/long.txt"
expect "a line longer than the buffer" 0 wap grep -m 0 -n after big/long.txt
same "long line: the next line's number" "$OUT" "big/long.txt:3:after PM_RESUME"
expect "long line: -c" 0 wap grep -c PM_RESUME big/long.txt
same "long line: -c" "$OUT" "big/long.txt:2"
# (found by the walk: a named file is mapped whole, as ripgrep's --json
# reports a named binary file)
expect "big file: --jsonl offsets" 0 wap grep --jsonl -m 0 PM_RESUME big
jl_off=$(printf '%s\n' "$OUT" | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m["type"] == "match" and m["data"]["line_number"] == 997300:
        print(m["data"]["absolute_offset"])')
same "big file: absolute_offset of a match" "$jl_off" "$(grep -b 'line 997300 PM' big/big.txt | cut -d: -f1)"
jcheck "big file: --json line numbers" "$(wap grep --json -m 0 PM_RESUME big)" \
	'[m["line"] for m in j["matches"] if m["path"] == "big/big.txt"][-2:] == [1296490, 1300001]'
if [ -z "${ASAN:-}" ]; then
	rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$WAP" grep -m 0 PM_RESUME big/big.txt)
	if [ "$rss" -lt 64 ]; then ok "big file: bounded memory (${rss} MB)"
	else fail "big file: ${rss} MB resident for a $(($(wc -c < big/big.txt) >> 20)) MB file"; fi
else
	ok "big file: bounded memory # SKIP ASan's shadow memory"
fi
rm -rf big

# --- files bigger than one read (256 KiB) but smaller than 16 MiB: read in
# pieces of whole lines too.  Matches straddle every seam the pieces can
# have (a match every few lines, and at each multiple of 256 KiB), several
# on a line, CRLF lines, lines longer than a piece (not shown: output cuts
# them), no final newline;
# lines, numbers, counts and -o as GNU grep gives them.
mkdir -p mid
python3 - mid <<'PY'
import os, sys
d = sys.argv[1]
out = bytearray()
i = 0
while len(out) < (1536 << 10):
    i += 1
    if i % 613 == 0:
        out += b"PM_RESUME twice PM_RESUME on %d\n" % i
    elif i % 457 == 0:
        out += b"crlf PM_RESUME %d\r\n" % i
    elif i % 1000 == 999 and len(out) > (1300 << 10):
        out += b"long " + b"z" * (300 << 10) + b" PM_RESUMf %d\n" % i
    else:
        out += b"line %d " % i + b"x" * (i % 89) + b"\n"
# a match across each multiple of 256 KiB, an unterminated last line
for k in range(1, 6):
    at = (k << 18) - 4
    out[at:at + 9] = b"PM_RESUME"
out += b"filler\nend PM_RESUME"
open(os.path.join(d, "mid.txt"), "wb").write(out)
# at the size of one read, one byte over, one under
for n in ((256 << 10) - 1, 256 << 10, (256 << 10) + 1):
    body = b"a\n" * ((n - 10) // 2)
    body += b"PM_RESUME"[: n - len(body)]
    body += b"\n" * (n - len(body))
    open(os.path.join(d, "edge%d.txt" % n), "wb").write(body[:n - 10] + b"PM_RESUME\n")
# binary: a NUL in the first 8 KiB; text with a NUL beyond them
open(os.path.join(d, "bin.dat"), "wb").write(b"x\0" + b"PM_RESUME\n" * 60000)
open(os.path.join(d, "late.txt"), "wb").write(b"PM_RESUME\n" * 1000 + b"\0\n" + b"PM_RESUME\n" * 60000)
# a UTF-8 byte order mark (not searched, not shown) before pieces
open(os.path.join(d, "bom.txt"), "wb").write(b"\xef\xbb\xbfPM_RESUME first\n" + b"b\n" * 200000 + b"PM_RESUME last\n")
# UTF-16 with a byte order mark, over 256 KiB: searched whole, as UTF-8
open(os.path.join(d, "u16.txt"), "wb").write(b"\xff\xfe" + ("w\n" * 70000 + "PM_RESUME u16\n").encode("utf-16-le"))
PY
for f in mid.txt edge262143.txt edge262144.txt edge262145.txt late.txt; do
	expect "mid $f: matches" 0 wap grep -m 0 PM_RESUME mid/$f
	grep -a -Hn PM_RESUME mid/$f > "$T/g.out"
	if printf '%s\n' "$OUT" | cmp -s - "$T/g.out"; then ok "mid $f: the lines and numbers grep -n gives"
	else fail "mid $f: lines differ from grep -n: $(printf '%s\n' "$OUT" | diff - "$T/g.out" | head -4)"; fi
	expect "mid $f: -c" 0 wap grep -c PM_RESUME mid/$f
	same "mid $f: -c as grep -c" "$OUT" "mid/$f:$(grep -a -c PM_RESUME mid/$f)"
done
expect "mid: -v -c" 0 wap grep -v -c PM_RESUME mid/mid.txt
same "mid: -v -c as grep -v -c" "$OUT" "mid/mid.txt:$(grep -v -c PM_RESUME mid/mid.txt)"
expect "mid: -o" 0 wap grep -m 0 -o PM_RESUME mid/mid.txt
same "mid: -o as grep -o (two on a line)" "$OUT" "$(grep -Hno PM_RESUME mid/mid.txt)"
expect "mid: -i" 0 wap grep -m 0 -i pm_resume mid/mid.txt
same "mid: -i as grep -i" "$OUT" "$(grep -Hni pm_resume mid/mid.txt)"
expect "mid: a regex" 0 wap grep -m 0 'M_\w+ (on|\d+\r)' mid/mid.txt
same "mid: a regex as grep -P" "$OUT" "$(grep -HnP 'M_\w+ (on|\d+\r)' mid/mid.txt)"
expect "mid: -l" 0 wap grep -l PM_RESUME mid
same "mid: -l (binary skipped)" "$OUT" "mid/bom.txt
mid/edge262143.txt
mid/edge262144.txt
mid/edge262145.txt
mid/late.txt
mid/mid.txt
mid/u16.txt"
expect "mid: a UTF-8 BOM before pieces" 0 wap grep -m 0 PM_RESUME mid/bom.txt
same "mid: BOM dropped, lines counted" "$OUT" "mid/bom.txt:1:PM_RESUME first
mid/bom.txt:200002:PM_RESUME last"
expect "mid: UTF-16 over one read" 0 wap grep -m 0 'PM_RESUME u16' mid/u16.txt
same "mid: UTF-16 line number" "$OUT" "mid/u16.txt:70001:PM_RESUME u16"
jcheck "mid: binary counted" "$(wap grep --json PM_RESUME mid)" 'j["binaryFilesSkipped"] == 1'
expect "mid: --jsonl" 0 wap grep --jsonl -m 0 PM_RESUME mid
printf '%s\n' "$OUT" | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m["type"] == "match" and m["data"]["path"]["text"] == "mid/mid.txt":
        print("%d:%s" % (m["data"]["absolute_offset"], m["data"]["lines"]["text"].rstrip("\n")))' > "$T/jl.out"
grep -b PM_RESUME mid/mid.txt > "$T/gb.out"
if cmp -s "$T/jl.out" "$T/gb.out"; then ok "mid: --jsonl absolute_offset and lines as grep -b"
else fail "mid: --jsonl offsets differ from grep -b: $(diff "$T/jl.out" "$T/gb.out" | head -4)"; fi
# found in a directory it is searched in pieces; named, whole (as ripgrep
# reports a named binary file): the same matches, offsets and end stats
jlm() { python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m["data"].get("path", {}).get("text") == "mid/mid.txt" and m["type"] != "begin":
        m["data"].get("stats", {}).pop("elapsed", None)
        print(json.dumps(m, sort_keys=True))'; }
printf '%s\n' "$OUT" | jlm > "$T/jl.dir"
expect "mid: --jsonl of the file named" 0 wap grep --jsonl -m 0 PM_RESUME mid/mid.txt
printf '%s\n' "$OUT" | jlm > "$T/jl.named"
if [ -s "$T/jl.dir" ] && cmp -s "$T/jl.dir" "$T/jl.named"; then ok "mid: --jsonl in pieces as searched whole"
else fail "mid: --jsonl in pieces differs from whole: $(diff "$T/jl.dir" "$T/jl.named" | head -4)"; fi
expect "mid: -C 1 (read whole)" 0 wap grep -m 0 -C 1 PM_RESUME mid/mid.txt
same "mid: -C 1 as grep -C 1" "$OUT" "$(grep -Hn -C 1 PM_RESUME mid/mid.txt)"
rm -rf mid

# --- agreement with ripgrep on a generated tree
if command -v rg >/dev/null 2>&1; then
	G=$T/gen
	mkdir -p "$G"
	python3 - "$G" <<'EOF'
import os, random, sys
random.seed(7)
root = sys.argv[1]
words = ["alpha", "beta", "PM_RESUME", "pm_resume", "dev_resume", "foo_resume(x)", "suspend",
         "PM_SUSPEND", "return", "int", "x->y", "a.b", "TODO:", "Ünïcode", "naïve", "résumé",
         "tab\there", "end;", "{", "}", "0x1f", "sk", "KS", "ſ",
         "e\u0301t\u0301e\u0301", "हिन्दी", "Ⓐb", "x\u203fy", "½", "२३", "a\u200db"]
for d in range(30):
    p = os.path.join(root, "d%d" % (d % 7), "s%d" % d)
    os.makedirs(p, exist_ok=True)
    for f in range(8):
        with open(os.path.join(p, "f%d.%s" % (f, random.choice(["c", "h", "txt", "py"]))), "w") as fh:
            for l in range(random.randint(0, 60)):
                fh.write(" ".join(random.choice(words) for _ in range(random.randint(0, 9))) + "\n")
with open(os.path.join(root, "noeol.txt"), "w") as fh:
    fh.write("last PM_RESUME")
with open(os.path.join(root, "crlf.txt"), "w") as fh:
    fh.write("one PM_RESUME\r\ntwo\r\n")
EOF
	cd "$G"
	for p in PM_RESUME pm_resume '\w+_resume\b' 'PM_RESUME|PM_SUSPEND' 'resume\(' 'a\.b' '^\w+$' \
		 'x->y' '[0-9]+' '^$' 'é' 'TODO:\s+\w' '(?i)ks' 'sk$' 'end;$' '\bint\b' '.' 'alpha beta'; do
		for f in "" -i -w -x -F -v; do
			WAP_ROOT=$G wap grep $f -m 0 --no-ignore -- "$p" 2>&1 | tr -d '\r' | sort > "$T/w.out"
			rg $f -n --no-heading -uu --no-config -- "$p" . < /dev/null 2>&1 | sed 's|^\./||' | tr -d '\r' | sort > "$T/r.out"
			if cmp -s "$T/w.out" "$T/r.out"; then ok "same lines as rg: $f '$p'"
			else fail "same lines as rg: $f '$p': $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
		done
	done
	# ripgrep's classes: a word char is a letter, mark, digit, connector
	# or joiner (not PCRE2's letters and numbers); POSIX classes are ASCII
	for p in '\w+' '\W' '\b\w+' '\w\B' '[[:alpha:]]+' '[[:^alpha:]]+' '[[:word:][:punct:]]+' \
		 '[\w-]+' '(?x) \w+ # a comment ) ['; do
		for f in -o "-o -i" -w -c; do
			WAP_ROOT=$G wap grep $f -m 0 --no-ignore -- "$p" 2>&1 | tr -d '\r' | sort > "$T/w.out"
			rg $f -n --no-heading -uu --no-config -- "$p" . < /dev/null 2>&1 | sed 's|^\./||' | tr -d '\r' | sort > "$T/r.out"
			if cmp -s "$T/w.out" "$T/r.out"; then ok "rg's classes: $f '$p'"
			else fail "rg's classes: $f '$p': $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
		done
	done
	# rg's own spellings on the command line: -S, -g GLOB / -g !GLOB, --hidden;
	# of -w and -x the last given wins
	set -f	# the globs go to wap and rg as written
	for a in "-S pm_resume" "-S PM_RESUME" "-S -e pm_resume -e Beta" "-S résumé" "-S Ünïcode" \
		 "-S -i PM_Resume" "-g *.c PM_RESUME" "-g *.c -g !f1* PM_RESUME" "-g !d0 -g !*.py PM_RESUME" \
		 "-g d1/** -S beta" "--hidden PM_RESUME" "-w -x int" "-x -w int" "-wx int" "-xw int"; do
		WAP_ROOT=$G wap grep -m 0 --no-ignore $a 2>&1 | tr -d '\r' | sort > "$T/w.out"
		rg -n --no-heading -uu --no-config $a . < /dev/null 2>&1 | sed 's|^\./||' | tr -d '\r' | sort > "$T/r.out"
		if [ -s "$T/w.out" ] && cmp -s "$T/w.out" "$T/r.out"; then ok "as rg: $a"
		else fail "as rg: $a: $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
	done
	set +f
	# empty matches, as rg finds them: one character on after one, none
	# where the match before ended (x* in "axxb": "", "xx", ""), for -o,
	# --jsonl's submatches, --replace and -o --replace (ASCII: rg 13
	# also stops inside a UTF-8 character, which rg 14 no longer does)
	E=$T/empty
	mkdir -p "$E"
	printf 'axxb\nabc\nxx\nfoo bar foo\nfoofoo x\n\n' > "$E/a.txt"
	for p in 'x*' '' '\b' 'a?' 'x*?' '\B' '(f)(o+)' 'o\b'; do
		for c in -o --jsonl "-r <\$0>" "-o -r <\$0>" "-r [\$1]" "-o -r [\$2]"; do
			c2=$(printf '%s' "$c" | sed 's/--jsonl/--json/')
			WAP_ROOT=$E wap grep -m 0 $c -- "$p" a.txt 2>&1 | grep -v '"type":"\(begin\|end\|summary\)"' > "$T/w.out"
			(cd "$E" && rg -n --no-config $c2 -- "$p" a.txt < /dev/null 2>&1) | sed 's/^/a.txt:/; s/^a\.txt:{/{/' |
				grep -v '"type":"\(begin\|end\|summary\)"' > "$T/r.out"
			if cmp -s "$T/w.out" "$T/r.out"; then ok "empty matches as rg: $c '$p'"
			else fail "empty matches as rg: $c '$p': $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
		done
	done
	# rg's -u (no ignore files) and -uu (hidden files too: wap's way),
	# with an .ignore file that leaves d1 out
	printf 'd1\n' > "$G/.ignore"
	for u in "" -u -uu "-u -u" --unrestricted; do
		WAP_ROOT=$G wap grep -m 0 $u PM_RESUME 2>&1 | sort > "$T/w.out"
		rg -n --no-heading --no-config $u PM_RESUME . < /dev/null 2>&1 | sed 's|^\./||' | sort > "$T/r.out"
		if [ -s "$T/w.out" ] && cmp -s "$T/w.out" "$T/r.out"; then ok "as rg: ${u:-no -u} with an .ignore"
		else fail "as rg: ${u:-no -u} with an .ignore: $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
	done
	rm "$G/.ignore"
	OUT=$(WAP_ROOT=$G wap grep -uuu PM_RESUME 2>&1); st=$?
	same "-uuu (rg's --binary) is refused, exit 2" "$st: $OUT" \
		"2: wap grep: -uuu (rg's --binary) is not supported: -a (--text) searches binary files as text"
	for p in PM_RESUME '\w+_resume\b'; do
		WAP_ROOT=$G wap grep -c -m 0 -- "$p" | sort > "$T/w.out"
		rg -c -uu --no-config -- "$p" . | sed 's|^\./||' | sort > "$T/r.out"
		if cmp -s "$T/w.out" "$T/r.out"; then ok "same counts as rg: '$p'"; else fail "counts differ: '$p'"; fi
		WAP_ROOT=$G wap grep -o -m 0 -- "$p" | sort > "$T/w.out"
		rg -o -n --no-heading -uu --no-config -- "$p" . | sed 's|^\./||' | sort > "$T/r.out"
		if cmp -s "$T/w.out" "$T/r.out"; then ok "same -o as rg: '$p'"; else fail "-o differs: '$p': $(diff "$T/w.out" "$T/r.out" | head -3)"; fi
	done
	# byte for byte, in order, with context and separators
	for p in PM_RESUME 'end;$' '\bint\b'; do
		for c in -C2 -A1 -B3 "-v -A1" -o "-w -C1" "-i -B1" -c -l; do
			WAP_ROOT=$G wap grep -m 0 --no-ignore $c -- "$p" > "$T/w.out" 2>&1
			rg --sort path -n --no-heading -uu --no-config $c -- "$p" . < /dev/null 2>&1 | sed "s|^\./||" > "$T/r.out"
			if cmp -s "$T/w.out" "$T/r.out"; then ok "output as rg --sort path: $c '$p'"
			else fail "output as rg --sort path: $c '$p': $(diff "$T/w.out" "$T/r.out" | head -5)"; fi
		done
	done
	cd "$W"
else
	ok "same lines as rg # SKIP rg not installed"
fi
