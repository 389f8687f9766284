# glob: pattern syntax, order, limits, filters, result shapes and errors.
. tests/lib.sh
cd "$W"
mkdir -p src/lib/deep src/config tests/config node_modules/p .git/objects build .hidden
for f in src/a.ts src/b.ts src/lib/c.ts src/lib/deep/d.ts src/x.c src/y.h src/lib/z.c \
	 tests/t1.js tests/t2.js README.md node_modules/p/i.ts build/out.ts .git/objects/o.ts \
	 .hidden/h.ts src/config/app.json 'src/we{ird}.txt'; do
	echo x > "$f"
done
touch -d '2021-01-01' src/a.ts
touch -d '2023-01-01' src/b.ts
touch -d '2022-01-01' src/lib/c.ts
touch -d '2020-01-01' src/lib/deep/d.ts
touch -d '2019-01-01' .hidden/h.ts

expect "** finds at any depth" 0 wap-glob '**/*.ts' --sort path
same "sorted by path, hidden found, excluded skipped" "$OUT" ".hidden/h.ts
src/a.ts
src/b.ts
src/lib/c.ts
src/lib/deep/d.ts"
expect "default order: newest first" 0 wap glob '**/*.ts'
same "mtime order" "$OUT" "src/b.ts
src/lib/c.ts
src/a.ts
src/lib/deep/d.ts
.hidden/h.ts"
expect "--sort mtime" 0 wap glob '**/*.ts' --sort mtime
same "--sort mtime is the default" "$OUT" "$(wap glob '**/*.ts')"
expect "--sort none" 0 wap glob '**/*.ts' --sort none
same "--sort none: same set" "$(printf '%s\n' "$OUT" | sort)" "$(wap glob '**/*.ts' --sort path | sort)"
expect "* stays in one directory" 0 wap glob 'src/*.ts' --sort path
same "src/*.ts" "$OUT" "src/a.ts
src/b.ts"
expect "no slash: top of PATH only" 0 wap glob '*.md'
same "*.md" "$OUT" "README.md"
expect "?" 0 wap glob 'tests/t?.js' --sort path
same "? one char" "$OUT" "tests/t1.js
tests/t2.js"
expect "[abc]" 0 wap glob 'src/[ab].ts' --sort path
same "class" "$OUT" "src/a.ts
src/b.ts"
expect "[!a]" 0 wap glob 'src/[!a].ts'
same "negated class" "$OUT" "src/b.ts"
expect "[a-c] range" 0 wap glob 'src/[a-b].ts' --sort path
same "range" "$OUT" "src/a.ts
src/b.ts"
expect "{a,b}" 0 wap glob 'src/**/*.{c,h}' --sort path
same "braces" "$OUT" "src/lib/z.c
src/x.c
src/y.h"
expect "nested braces" 0 wap glob '{src/{x,y}.{c,h},tests/t{1,9}.js}' --sort path
same "nested braces" "$OUT" "src/x.c
src/y.h
tests/t1.js"
expect "escaped brace" 0 wap glob 'src/we\{ird\}.txt'
same "escape" "$OUT" "src/we{ird}.txt"
expect "**/config finds directories" 0 wap glob '**/config' --sort path
same "directories named config" "$OUT" "src/config
tests/config"
expect "PATH" 0 wap glob '*.ts' src --sort path
same "relative to PATH, paths from the root" "$OUT" "src/a.ts
src/b.ts"
expect "PATH and **" 0 wap glob '**/*.ts' src/lib --sort path
same "under PATH" "$OUT" "src/lib/c.ts
src/lib/deep/d.ts"
expect "--type d" 0 wap glob 'src/**' --type d --sort path
same "directories only" "$OUT" "src/config
src/lib
src/lib/deep"
expect "-t f" 0 wap glob 'src/lib/**' -t f --sort path
same "files only" "$OUT" "src/lib/c.ts
src/lib/deep/d.ts
src/lib/z.c"
expect "--type bad" 2 wap glob '*' --type x
has "bad type" "$ERR" "Invalid type 'x'"

# --- JSON shape and limits
expect "--json" 0 wap glob 'src/*.ts' --json --sort path
jcheck "files/isTruncated/totalFound" "$OUT" 'j["totalFound"] == 2 and j["isTruncated"] is False and [f["path"] for f in j["files"]] == ["src/a.ts","src/b.ts"]'
jcheck "file object" "$OUT" 'j["files"][0]["isDirectory"] is False and j["files"][0]["mtime"].startswith("2021-01-01T")'
jcheck "directory object" "$(wap glob '**/config' --json)" 'all(f["isDirectory"] for f in j["files"])'
expect "--max-results" 0 wap glob '**/*.ts' --max-results 2 --json
jcheck "truncated, total" "$OUT" 'len(j["files"]) == 2 and j["isTruncated"] is True and j["totalFound"] == 5'
expect "-m text" 0 wap glob '**/*.ts' -m 1
has "truncation said" "$OUT" "1 of 5 shown"
for i in $(seq 1 120); do : > "many$i.log"; done
jcheck "default 100" "$(wap glob '*.log' --json)" 'len(j["files"]) == 100 and j["totalFound"] == 120'
jcheck "-m 0: all" "$(wap glob '*.log' -m 0 --json)" 'len(j["files"]) == 120 and not j["isTruncated"]'
rm -f many*.log

# --- no match
expect "no match exits 1" 1 wap glob '**/*.nothing'
same "nothing printed" "$OUT" ""
jcheck "empty list, not an error" "$(wap glob '**/*.nothing' --json)" 'j == {"files": [], "isTruncated": False, "totalFound": 0}'
expect "missing literal directory is no match" 1 wap glob 'nodir/**/*.ts'
expect "--tagged" 0 wap glob '**/config' --tagged --sort path
same "[DIR]/[FILE] form" "$OUT" "Found 2 match(es) for '**/config':

[DIR] src/config
[DIR] tests/config"
expect "--tagged files" 0 wap glob '*.md' --tagged
has "[FILE]" "$OUT" "[FILE] README.md"
expect "--tagged none" 1 wap glob '*.zz' --tagged
same "no matches text" "$OUT" "No matches found for pattern '*.zz' in ."

# --- exclusions, ignore files, symlinks
expect "--no-default-excludes" 0 wap glob '**/*.ts' --no-default-excludes --sort path
same "defaults off, .git never" "$OUT" ".hidden/h.ts
build/out.ts
node_modules/p/i.ts
src/a.ts
src/b.ts
src/lib/c.ts
src/lib/deep/d.ts"
printf '*.js\n' > .gitignore
mv .git .git-off
expect "no git: .gitignore not applied" 0 wap glob 'tests/*' --sort path
same "outside a work tree" "$OUT" "tests/config
tests/t1.js
tests/t2.js"
mv .git-off .git
mkdir .git/info
expect "git work tree: .gitignore applies" 0 wap glob 'tests/*' --sort path
same ".gitignore applied" "$OUT" "tests/config"
expect "--no-ignore" 0 wap glob 'tests/*' --no-ignore --sort path
same "--no-ignore" "$OUT" "tests/config
tests/t1.js
tests/t2.js"
echo 'lib/' > src/.ignore
expect ".ignore applies" 0 wap glob 'src/**/*.ts' --sort path
same ".ignore" "$OUT" "src/a.ts
src/b.ts"
rm -f .gitignore src/.ignore
ln -s src/lib linklib
ln -s / rootlink
ln -s . self
expect "symlinks listed, not followed" 0 wap glob 'link*' --json
jcheck "link is listed" "$OUT" '[f["path"] for f in j["files"]] == ["linklib"] and j["files"][0]["isDirectory"] is False'
expect "--follow" 0 wap glob '**/c.ts' --follow --sort path
same "--follow: through the link, loop-safe" "$OUT" "linklib/c.ts
src/lib/c.ts"
expect "-L never leaves the root" 1 wap glob 'rootlink/*' -L
expect "-L: the link itself" 0 wap glob 'root*' -L
same "a link leaving the root is listed, not followed" "$OUT" "rootlink"
rm -f linklib rootlink self

# --- errors
expect "missing pattern" 2 wap glob
has "missing pattern message" "$ERR" "missing PATTERN"
expect "unbalanced brace" 2 wap glob '{a,b'
has "invalid glob" "$ERR" "Invalid glob '{a,b': unbalanced '{'"
jcheck "invalid glob JSON" "$(wap glob '{a' --json)" 'j["code"] == "INVALID_ARGUMENT"'
expect "PATH missing" 2 wap glob '*' no/such
has "directory not found" "$ERR" "Directory not found: no/such"
expect "PATH is a file" 2 wap glob '*' README.md
has "not a directory" "$ERR" "Not a directory: README.md"
expect "PATH outside" 2 wap glob '*' ../..
has "access denied" "$ERR" "Access denied"
expect "bad sort" 2 wap glob '*' --sort size
has "bad sort message" "$ERR" "Invalid sort 'size'"
# a glob of many stars on long names, which backtracked to PCRE2's match
# limit on every name (42 ms each: 1,000 of them 42 s of a server's
# worker, then SIZE_LIMIT_EXCEEDED): decided, and at once
mkdir -p bait && python3 -c "
for i in range(1000): open('bait/b' + 'a' * 200 + '%04d' % i, 'w').close()"
expect "glob: many stars on 1,000 long names are decided: none" 1 timeout 20 wap glob --json 'bait/*a*a*a*a*a*a*a*a*a*a*a*a*a*b'
jcheck "glob: no match, no limit" "$OUT" 'j["totalFound"]==0 and "code" not in j'
expect "glob: many stars on 1,000 long names are decided: one" 0 timeout 20 wap glob --json 'bait/*a*a*a*a*a*a*a*a*a*a*a*a*a*0999'
jcheck "glob: the one that matches" "$OUT" 'j["totalFound"]==1 and j["files"][0]["path"].endswith("a0999")'
rm -rf bait
# a restrictedPaths glob of many stars and double stars on a deep tree: it
# passed the match limit on every path and, undecided, denied them all (a
# read of a file it does not match refused, a glob finding nothing)
python3 -c "
import os
d = 'deep'
for i in range(31):
    d += '/' + 'x' * 40
    os.makedirs(d, exist_ok=True)
    open(d + '/a.h', 'w').close()"
expect "glob: a deep tree under a restrictedPaths glob of many stars" 0 timeout 20 wap --restrict '**/*x*x*x*x*x*x*x*/**/*.hh' glob --json 'deep/**/*.h'
jcheck "glob: every file the deny glob does not match is found" "$OUT" 'j["totalFound"]==31'
expect "read: a file that deny glob does not match" 0 timeout 20 wap --restrict '**/*x*x*x*x*x*x*x*/**/*.hh' read "$(find deep -name a.h | tail -n 1)"
expect "read: a file it does match is denied" 5 timeout 20 wap --restrict '**/*x*x*x*x*x*x*x*/**/*.h' read "$(find deep -name a.h | tail -n 1)"
rm -rf deep
expect "-j1 same answer" 0 wap glob '**/*.ts' -j1 --sort path
same "-j1" "$OUT" "$(wap glob '**/*.ts' -j2 --sort path)"

# --- the same files as fd (sets: fd does not sort)
if command -v fdfind >/dev/null 2>&1; then
	G=$T/gen
	mkdir -p "$G"
	python3 - "$G" <<'EOF'
import os, random, sys
random.seed(3)
root = sys.argv[1]
for d in range(40):
    p = os.path.join(root, *["d%d" % random.randint(0, 4) for _ in range(random.randint(0, 4))])
    os.makedirs(p, exist_ok=True)
    for f in range(6):
        open(os.path.join(p, "f%d.%s" % (f, random.choice(["c", "h", "txt", "o", "log"]))), "w").close()
os.makedirs(os.path.join(root, ".hid"), exist_ok=True)
open(os.path.join(root, ".hid", "x.c"), "w").close()
with open(os.path.join(root, ".gitignore"), "w") as fh:
    fh.write("*.o\nd3/\n!d3/keep.c\nd1/*.log\n")
EOF
	for e in c h txt o log; do
		WAP_ROOT=$G wap glob "**/*.$e" --no-ignore --no-default-excludes -m 0 --sort path | LC_ALL=C sort > "$T/w.out"
		(cd "$G" && fdfind -HI -e "$e" | LC_ALL=C sort) > "$T/f.out"
		if cmp -s "$T/w.out" "$T/f.out"; then ok "same files as fd -HI -e $e"
		else fail "files differ from fd -e $e: $(diff "$T/w.out" "$T/f.out" | head -3 | tr '\n' ' ')"; fi
	done
	(cd "$G" && git init -q .)
	for e in c h txt o log; do
		WAP_ROOT=$G wap glob "**/*.$e" -m 0 | LC_ALL=C sort > "$T/w.out"
		(cd "$G" && fdfind -H -e "$e" | LC_ALL=C sort) > "$T/f.out"
		if cmp -s "$T/w.out" "$T/f.out"; then ok "git work tree: same files as fd -H -e $e"
		else fail "git work tree: files differ from fd -H -e $e: $(diff "$T/w.out" "$T/f.out" | head -3 | tr '\n' ' ')"; fi
	done
else
	ok "same files as fd # SKIP fdfind not installed"
fi

# Order on a bigger tree: names that share long prefixes and differ across
# 8-byte words, bytes below '/', mtimes with ties; several threads, so the
# workers' sorted runs are merged, and -m cuts the merge.
S=$T/order
python3 - "$S" <<'EOF2'
import os, random, sys
random.seed(11)
root = sys.argv[1]
parts = ["a", "a-b", "a.b", "a b", "a+", "ab", "abcdefgh", "abcdefghi", "abcdefgh-ijklmnop",
         "abcdefgh.ijklmnop", "abcdefghijklmnop", "Z", "_x", "\u00e9t\u00e9"]
for i in range(600):
    d = os.path.join(root, *random.sample(parts, random.randint(0, 3)))
    p = os.path.join(d, random.choice(parts) + random.choice(["", ".c", "-1.c", "/"]))
    try:
        os.makedirs(d, exist_ok=True)
        if p.endswith("/"):
            os.makedirs(p, exist_ok=True)
            continue
        if not os.path.isdir(p):
            open(p, "w").close()
    except OSError:  # a file where a directory was wanted, or the reverse
        continue
    if os.path.isdir(p):
        continue
    t = 1600000000 + random.randint(0, 40) * 1000
    os.utime(p, ns=(t * 10**9, t * 10**9 + random.choice([0, 0, 500])))
EOF2
py_order() { # path|mtime: the expected order of every file under $S
	python3 - "$S" "$1" <<'EOF2'
import os, sys
root, by = sys.argv[1], sys.argv[2]
out = []
for d, dirs, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        out.append((os.lstat(p).st_mtime_ns, os.path.relpath(p, root).encode()))
if by == "path":
    out.sort(key=lambda x: x[1].replace(b"/", b"\x01"))
else:
    out.sort(key=lambda x: (-x[0], x[1].replace(b"/", b"\x01")))
sys.stdout.buffer.write(b"".join(p + b"\n" for _, p in out))
EOF2
}
for j in 1 3; do
	same "--sort path -j$j: byte order, '/' first" \
		"$(WAP_ROOT=$S wap glob '**' -t f -m0 -j$j --sort path)" "$(py_order path)"
	same "newest first -j$j: mtime (ns), then path" \
		"$(WAP_ROOT=$S wap glob '**' -t f -m0 -j$j)" "$(py_order mtime)"
	same "-m 25 -j$j: the first 25 of the whole order" \
		"$(WAP_ROOT=$S wap glob '**' -t f -m25 -j$j | head -n 25)" "$(py_order mtime | head -n 25)"
	same "--json -m 9 -j$j: the same paths" \
		"$(jget "$(WAP_ROOT=$S wap glob '**' -t f -m9 -j$j --json)" 'chr(10).join(f["path"] for f in j["files"])')" \
		"$(py_order mtime | head -n 9)"
done
# whole seconds only (no nanoseconds, as a tar unpacks), ties, spread over
# more than one radix digit: the keys' low bits that never differ skipped
S2=$T/secs
python3 - "$S2" <<'EOF2'
import os, random, sys
random.seed(3)
root = sys.argv[1]
for i in range(300):
    p = os.path.join(root, random.choice(["", "d/", "d/e/", "f/"]), "n%d%s" % (i % 97, random.choice(["", ".c"])))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").close()
    t = 1500000000 + random.choice([0, 1, 2, 2047, 2048, 4096, 3**12, 2**20 + 5, 2**25])
    os.utime(p, ns=(t * 10**9, t * 10**9))
EOF2
S0=$S; S=$S2
for j in 1 2; do
	same "whole seconds, newest first -j$j" "$(WAP_ROOT=$S wap glob '**' -t f -m0 -j$j)" "$(py_order mtime)"
done
S=$S0

# The order comes from the walk's tree (each directory's names sorted as
# they are read, then depth first; newest first a radix sort of that by
# mtime): directories, symlinks (listed, and followed with -L), a big
# directory of names that share 8 bytes and end in bytes below '/' and
# above 0x7f, equal mtimes and nanosecond differences, a start below the
# root.  The reference sorts wap's own unsorted set (--sort none) in Python.
R=$T/tree
python3 - "$R" <<'EOF2'
import os, random, sys
random.seed(5)
root = sys.argv[1]
os.makedirs(root)
def mk(p, t):
    p = os.path.join(root, p)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    if p.endswith("/"):
        os.makedirs(p, exist_ok=True)
    else:
        open(p, "w").close()
    os.utime(p, ns=(t, t), follow_symlinks=False)
base = 1700000000 * 10**9
names = ["abcdefgh", "abcdefgh-", "abcdefgh.c", "abcdefgh/", "abcdefghij", "abcdefghij/",
         "abcdefgh ", "abcdefgh+x", "abcdefgh\u00e9", "abcdefgh\u00ff", "abcdefg", "abcdefgh_",
         "a", "a/", "a-", "a.b", "A", "Z", "z", "_", "~", "abc\tx", "abcdefghijklmnopqrstuvwxyz0123456789"]
for i in range(400):
    d = random.choice(["", "big/", "big/abcdefgh/", "s/", "s/t/", "big/abcdefghij/x/"])
    n = random.choice(names)
    n = n if n.endswith("/") else n + random.choice(["", "", str(i % 17), ".c"])
    try:
        mk(d + n, base + random.choice([0, 0, 0, 1, 999999999, 10**9, 7 * 10**9]))
    except OSError:  # a file where a directory was wanted, or the reverse
        pass
mk("lnkt.c", base + 2)
os.symlink("../big", os.path.join(root, "s/lnk-dir"))
os.symlink("../lnkt.c", os.path.join(root, "s/lnk-file"))
os.symlink("nowhere", os.path.join(root, "s/lnk-dangling"))
for d, dirs, files in os.walk(root):  # directories last: creating changed them
    for x in dirs:
        os.utime(os.path.join(d, x), ns=(base + 3, base + 3 + len(x) % 2), follow_symlinks=False)
EOF2
ref_order() { # mtime|path [stat]: wap's unsorted lines on stdin, in the order
	python3 -c '
import os, sys
root, by, follow = sys.argv[1], sys.argv[2], len(sys.argv) > 3
ps = [l for l in sys.stdin.buffer.read().split(b"\n") if l]
def unquote(p):  # a name shown quoted (a control character in it): its bytes
    if not p.startswith(b"\""):
        return p
    out, i, p = bytearray(), 0, p[1:-1]
    while i < len(p):
        c = p[i:i + 1]
        if c != b"\\":
            out += c
            i += 1
        elif p[i + 1:i + 2].isdigit():
            out.append(int(p[i + 1:i + 4], 8))
            i += 4
        else:
            out += {b"a": b"\a", b"b": b"\b", b"t": b"\t", b"n": b"\n", b"v": b"\v",
                    b"f": b"\f", b"r": b"\r"}.get(p[i + 1:i + 2], p[i + 1:i + 2])
            i += 2
    return bytes(out)
def key(p):
    p = unquote(p)
    f = os.path.join(root.encode(), p)
    try:  # -L: what a link leads to; a dangling link itself
        st = os.stat(f, follow_symlinks=follow)
    except FileNotFoundError:
        st = os.lstat(f)
    k = p.replace(b"/", b"\x01")
    return (-st.st_mtime_ns, k) if by == "mtime" else k
sys.stdout.buffer.write(b"".join(p + b"\n" for p in sorted(ps, key=key)))' "$R" "$@"
}
for j in 1 3; do
	for q in "**" "--type f **" "--type d **" "**/*.c" "big/**" "** s" "-L **" "-L **/*.c" "*" "big/*"; do
		set -f
		st=
		case $q in -L*) st=stat;; esac
		all=$(WAP_ROOT=$R wap glob -m0 -j$j --sort none $q)
		same "tree order, path, -j$j: $q" "$(WAP_ROOT=$R wap glob -m0 -j$j --sort path $q)" \
			"$(printf '%s\n' "$all" | ref_order path)"
		same "tree order, newest first, -j$j: $q" "$(WAP_ROOT=$R wap glob -m0 -j$j $q)" \
			"$(printf '%s\n' "$all" | ref_order mtime $st)"
		set +f
	done
done
# files the pattern's last component rules out are dropped as the walk
# reads them: the same set and order as an equal pattern that cannot be
# tested on a name alone (a class, a '?')
for j in 1 3; do
	set -f
	for pq in "**/*.c|**/*.[c]" "big/**/abc*|big/**/ab[c]*" "s/*|s/?*" "**/{a,A}*|**/[aA]*" \
		"*|?*" "big/abcdefgh/*.c|big/abcdefgh/*.[c]" "**/a*-|**/a*[-]" "-t d **/a*|-t d **/[a]*" \
		"-L **/*.c|-L **/*.[c]"; do
		p=${pq%%|*} q=${pq#*|}
		same "early drop -j$j: $p as $q" "$(WAP_ROOT=$R wap glob -m0 -j$j $p)" \
			"$(WAP_ROOT=$R wap glob -m0 -j$j $q)"
		same "early drop -j$j, --sort none: $p as $q" \
			"$(WAP_ROOT=$R wap glob -m0 -j$j --sort none $p | sort)" \
			"$(WAP_ROOT=$R wap glob -m0 -j$j --sort none $q | sort)"
	done
	set +f
done
same "early drop: some found" "$(WAP_ROOT=$R wap glob -m0 '**/*.c' | wc -l | tr -d ' ')" \
	"$(cd "$R" && find . -name '*.c' \( -type f -o -type l \) | wc -l | tr -d ' ')"
same "tree order: the set is the walk's" "$(WAP_ROOT=$R wap glob -m0 '**' | wc -l)" \
	"$(cd "$R" && find . -mindepth 1 | wc -l)"
same "tree order: -m 7 is the head of the order" "$(WAP_ROOT=$R wap glob -m7 '**' | head -n 7)" \
	"$(WAP_ROOT=$R wap glob -m0 '**' | head -n 7)"

# A tree big enough that one worker's entries, its names and the radix
# keys outgrow the heap's arrays (2 MB and more are mapped): 72k files
B=$T/bigtree
python3 - "$B" <<'EOF2'
import os, random, sys
random.seed(9)
root = sys.argv[1]
for d in range(120):
    dp = os.path.join(root, "dir-%03d-%s" % (d, "x" * (d % 13)))
    os.makedirs(dp)
    for f in range(600):
        p = os.path.join(dp, "file-%04d-%s.c" % ((f * 7919) % 600, "y" * (f % 11)))
        open(p, "w").close()
        t = 1700000000 + random.randint(0, 3000)
        os.utime(p, ns=(t * 10**9, t * 10**9 + random.choice([0, 0, 0, 250])))
    os.utime(dp, ns=(1700000001 * 10**9, 1700000001 * 10**9))
EOF2
R0=$R; R=$B
for j in 1 2; do
	set -f
	all=$(WAP_ROOT=$B wap glob -m0 -j$j --sort none '**')
	same "72k files, newest first, -j$j" "$(WAP_ROOT=$B wap glob -m0 -j$j '**')" \
		"$(printf '%s\n' "$all" | ref_order mtime)"
	same "72k files, path, -j$j" "$(WAP_ROOT=$B wap glob -m0 -j$j --sort path '**')" \
		"$(printf '%s\n' "$all" | ref_order path)"
	set +f
done
same "72k files: all of them" "$(WAP_ROOT=$B wap glob -m0 '**' | wc -l)" 72120
# their arrays are mapped (from 1 MB on) and handed on to the caller: what
# is freed after must not be the bottom of the address space (munmap(NULL,
# the handed-on array's size) unmapped a binary loaded low: under valgrind
# wap crashed at exit)
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
	for o in -m5 "--json -m0"; do
		(cd "$B" && WAP_ROOT=$B strace -f -qq --seccomp-bpf -e trace=munmap -o "$T/big.strace" \
			wap glob $o '**' >/dev/null 2>&1)
		same "72k files, $o: nothing unmapped at address 0" "$(grep -c 'munmap(NULL' "$T/big.strace")" 0
	done
else
	ok "72k files, -m5: nothing unmapped at address 0 # SKIP no strace"
	ok "72k files, --json -m0: nothing unmapped at address 0 # SKIP no strace"
fi
R=$R0

# The one order the tree cannot give: a name that is a sibling's name and
# byte 0x01 ("q\1b" sorts between "q" and "q/c", '/' weighing 0x01); such
# a name sends the hits to a comparison sort of whole paths
X=$T/odd
python3 - "$X" <<'EOF2'
import os, sys
root = sys.argv[1]
for p, t in [("q/c", 5), ("q\x01b", 5), ("q\x01d", 5), ("q/\x01", 6), ("r", 5), ("p\x01/e", 4)]:
    f = os.path.join(root, p)
    os.makedirs(os.path.dirname(f), exist_ok=True)
    open(f, "w").close()
    os.utime(f, ns=(t * 10**18, t * 10**18))
EOF2
R=$X
for j in 1 2; do
	all=$(WAP_ROOT=$X wap glob -m0 -j$j --sort none '**')
	same "0x01 names, path, -j$j" "$(WAP_ROOT=$X wap glob -m0 -j$j --sort path '**')" \
		"$(printf '%s\n' "$all" | ref_order path)"
	same "0x01 names, newest first, -j$j" "$(WAP_ROOT=$X wap glob -m0 -j$j '**')" \
		"$(printf '%s\n' "$all" | ref_order mtime)"
done
same "0x01 names: 'q\\1b' between 'q/\\1' and 'q/c'" "$(WAP_ROOT=$X wap glob -m0 --sort path -t f 'q*/**' | od -An -c)" \
	"$(printf '"q/\\001"\n"q\\001b"\nq/c\n"q\\001d"\n' | od -An -c)"

# The same with the 0x01 in a directory that is no hit (-t f keeps no
# name for it, only its place in the tree): "p\1/e" before "p/x"
X2=$T/odd2
python3 - "$X2" <<'EOF2'
import os, sys
root = sys.argv[1]
for p in ["p/x", "p\x01/e"]:
    f = os.path.join(root, p)
    os.makedirs(os.path.dirname(f), exist_ok=True)
    open(f, "w").close()
    os.utime(f, ns=(5 * 10**18, 5 * 10**18))
EOF2
for j in 1 2; do
	same "0x01 in a directory not listed, path, -j$j" "$(WAP_ROOT=$X2 wap glob -m0 -j$j -t f --sort path '**' | od -An -c)" \
		"$(printf '"p\\001/e"\np/x\n' | od -An -c)"
	same "0x01 in a directory not listed, newest first, -j$j" "$(WAP_ROOT=$X2 wap glob -m0 -j$j -t f '**' | od -An -c)" \
		"$(printf '"p\\001/e"\np/x\n' | od -An -c)"
done

# mtimes more than 2^34 s (544 years) apart do not fit the radix key: a
# comparison sort then, the same order (ext4 keeps 2^34 s at most: tmpfs)
Y=$(mktemp -d /dev/shm/wap-ages.XXXXXX 2>/dev/null) || Y=$T/ages
span=$(python3 - "$Y" <<'EOF2'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "d"), exist_ok=True)
ts = {"old": -2**34 * 10**9, "d/new": 2**35 * 10**9, "mid": 10**18, "d/mid2": 10**18 + 5}
try:
    for p, t in ts.items():
        f = os.path.join(root, p)
        open(f, "w").close()
        os.utime(f, ns=(t, t))
    print(int(all(os.lstat(os.path.join(root, p)).st_mtime_ns == t for p, t in ts.items())))
except OSError:
    print(0)
EOF2
)
if [ "$span" = 1 ]; then
	same "mtimes 1700 years apart: newest first" "$(WAP_ROOT=$Y wap glob -m0 -t f '**')" "d/new
d/mid2
mid
old"
else
	ok "mtimes 1700 years apart # SKIP no file system here keeps such mtimes"
fi
case $Y in /dev/shm/*) rm -rf "$Y";; esac

# --- "**", "**/*SUFFIX" and grep's "*SUFFIX" are answered without the
# regex: the same paths as a regex-shaped spelling of the same glob
F=$T/fast
mkdir -p "$F/d.c" "$F/s/t" "$F/.h"
for f in a.c .c x.c.bak d.c/in s/y.C s/t/z.c "s/t/n l.c" .h/w.c abc; do echo zz > "$F/$f"; done
same "'**/*.c' as '**/*.[c]'" "$(WAP_ROOT=$F wap glob --sort path -m0 '**/*.c')" \
	"$(WAP_ROOT=$F wap glob --sort path -m0 '**/*.[c]')"
same "'**' as '**/*'" "$(WAP_ROOT=$F wap glob --sort path -m0 '**')" \
	"$(WAP_ROOT=$F wap glob --sort path -m0 '**/*')"
expect "grep --include '*.c'" 0 env WAP_ROOT=$F wap grep --include '*.c' -l -m0 zz
same "grep --include '*.c' as '*.[c]'" "$OUT" \
	"$(WAP_ROOT=$F wap grep --include '*.[c]' -l -m0 zz)"
has "grep --include '*.c' at any depth" "$OUT" "s/t/n l.c"
