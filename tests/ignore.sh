# ignore: the walker's .gitignore / .git/info/exclude decisions agree with
# git's (`git check-ignore`, `git ls-files --others --exclude-standard`) on
# a tree with nested ignore files, negations, anchored, directory-only,
# "**" and character-class patterns.
. tests/lib.sh
export HOME=$T GIT_CONFIG_NOSYSTEM=1 XDG_CONFIG_HOME=$T/xdg
cd "$W"
git init -q .
mkdir -p a/b/c docs/build2 logs/keep out src/gen src/lib/tmp tmpdir/x 'sp ace' weird \
	 deep/er/est nested/logs anch/sub/anch
while IFS= read -r f; do echo x > "$f"; done <<'EOF'
top.o
top.c
keep.log
app.log
logs/x.log
logs/keep/important.log
logs/keep/other.txt
a/b/c/f.o
a/b/c/f.c
a/b/c/g.tmp
a/b.tmp
a/x.bak
a/b/x.bak
docs/build2/out.html
docs/readme.md
out/bin
out/keep.txt
src/gen/g.c
src/gen/keep.c
src/lib/tmp/t.c
src/lib/l.c
src/main.c
tmpdir/x/y.c
tmpdir/z
weird/#hash
weird/!bang
weird/trail
weird/file1
weird/fileA
weird/file9
deep/er/est/leaf.c
deep/er/leaf.d
nested/logs/n.log
anch/anch
anch/sub/anch/f
anch/sub/anch.txt
root.txt
sp ace/f ile.txt
EOF
cat > .gitignore <<'EOF'
# comment
*.o
*.log
!keep.log
/root.txt
out/*
!out/keep.txt
tmpdir/
**/gen/*
!**/gen/keep.c
a/**/*.bak
docs/build2/
\#hash
\!bang
trail   
file[0-9]
deep/**/leaf.*
/anch
EOF
cat > logs/.gitignore <<'EOF'
!*.log
x.log
EOF
cat > logs/keep/.gitignore <<'EOF'
*.txt
EOF
cat > src/.gitignore <<'EOF'
lib/tmp
/main.c
EOF
cat > a/.gitignore <<'EOF'
b/c/*.tmp
*.tmp
!b.tmp
EOF
cat > nested/.gitignore <<'EOF'
logs/
EOF
mkdir -p .git/info "$XDG_CONFIG_HOME/git"
printf 'top.c\n' > .git/info/exclude
printf '*.d\n!keep.log\n' > "$XDG_CONFIG_HOME/git/ignore"

# every path (files and directories), as wap lists them and as git decides
find . -path ./.git -prune -o -mindepth 1 -print | sed 's|^\./||' | LC_ALL=C sort > "$T/all"
wap glob "**" --no-default-excludes --sort path -m 0 2>"$T/err" | LC_ALL=C sort > "$T/wap"
check "wap glob ran" test -s "$T/wap"
git check-ignore --stdin < "$T/all" | LC_ALL=C sort > "$T/ignored"
check "git ignores something" test -s "$T/ignored"
LC_ALL=C comm -23 "$T/all" "$T/ignored" > "$T/kept"
if cmp -s "$T/wap" "$T/kept"; then ok "wap keeps exactly what git check-ignore does not ignore"
else fail "wap vs git check-ignore: $(diff "$T/wap" "$T/kept" | head -20 | tr '\n' ' ')"; fi
while IFS= read -r p; do
	if grep -qxF -- "$p" "$T/ignored"; then want=ignored; else want=kept; fi
	if grep -qxF -- "$p" "$T/wap"; then got=kept; else got=ignored; fi
	same "$p: $want as git says" "$got" "$want"
done < "$T/all"

# files: git ls-files --others --exclude-standard
git ls-files --others --exclude-standard | LC_ALL=C sort > "$T/gitfiles"
wap glob '**' --type f --no-default-excludes --sort path -m 0 | LC_ALL=C sort > "$T/wapfiles"
if cmp -s "$T/wapfiles" "$T/gitfiles"; then ok "files agree with git ls-files --others --exclude-standard"
else fail "files differ: $(diff "$T/wapfiles" "$T/gitfiles" | head -10 | tr '\n' ' ')"; fi

# grep walks the same way
echo NEEDLE > top.o
echo NEEDLE > src/lib/tmp/n.c
echo NEEDLE > src/lib/n.c
expect "grep honours the ignore files" 0 wap grep -l NEEDLE
same "grep skips ignored files" "$OUT" "src/lib/n.c"
expect "grep --no-ignore" 0 wap grep -l NEEDLE --no-ignore
same "grep --no-ignore" "$OUT" "src/lib/n.c
src/lib/tmp/n.c
top.o"

# a search below the top still applies the ancestors' files
expect "search from a subdirectory" 0 wap grep -l NEEDLE src/lib
same "ancestor .gitignore applies" "$OUT" "src/lib/n.c"
expect "glob from a subdirectory" 0 wap glob '**' src --sort path -m 0
same "glob below the top agrees" "$OUT" "$(grep '^src/' "$T/wap"; echo src/lib/n.c)"

# .ignore (ripgrep's): applies with or without git, wins over .gitignore
echo '!*.o' > .ignore
expect ".ignore overrides .gitignore" 0 wap grep -l NEEDLE
same ".ignore re-includes" "$OUT" "src/lib/n.c
top.o"
rm .ignore
rm -rf .git
expect "outside a work tree .gitignore is not applied" 0 wap grep -l NEEDLE
same "no git, no .gitignore" "$OUT" "src/lib/n.c
src/lib/tmp/n.c
top.o"
echo '*.o' > .ignore
expect ".ignore without git" 0 wap grep -l NEEDLE
same ".ignore applies without git" "$OUT" "src/lib/n.c
src/lib/tmp/n.c"

# random trees and random ignore files: the same decisions as git
cat > "$T/fuzz.py" <<'EOF'
import os, random, subprocess, shutil, sys
wap, base, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ["a", "b", "foo", "x.c", "y.o", "ab", "ba", "f1", "f9", ".h", "a.b.c", "dir"]
pieces = ["a", "b", "foo", "*", "?", "[ab]", "[!a]", "**", "*.c", "*.o", "f[0-9]", "x*", "*b",
          "dir", ".h", "a.*"]
def rand_pat(r):
    p = "/".join(r.choice(pieces) for _ in range(r.randint(1, 3)))
    if r.random() < 0.2: p = "/" + p
    if r.random() < 0.2: p = p + "/"
    if r.random() < 0.25: p = "!" + p
    return p
bad = 0
for trial in range(n):
    r = random.Random(trial)
    root = os.path.join(base, "t%d" % trial)
    os.makedirs(root)
    dirs = [""]
    for _ in range(r.randint(3, 10)):
        d = os.path.join(r.choice(dirs), r.choice(names))
        if os.path.isfile(os.path.join(root, d)): continue
        os.makedirs(os.path.join(root, d), exist_ok=True)
        dirs.append(d)
    for _ in range(r.randint(5, 25)):
        f = os.path.join(r.choice(dirs), r.choice(names))
        if os.path.isdir(os.path.join(root, f)): continue
        open(os.path.join(root, f), "w").close()
    for d in r.sample(dirs, min(len(dirs), r.randint(1, 3))):
        with open(os.path.join(root, d, ".gitignore"), "w") as fh:
            fh.write("\n".join(rand_pat(r) for _ in range(r.randint(1, 5))) + "\n")
    subprocess.run(["git", "init", "-q", root], check=True)
    allp = []
    for dp, dn, fn in os.walk(root):
        dn[:] = [x for x in dn if not (dp == root and x == ".git")]
        allp += [os.path.relpath(os.path.join(dp, x), root) for x in dn + fn]
    ign = set(subprocess.run(["git", "-C", root, "check-ignore", "--stdin"], input="\n".join(allp) + "\n",
                             capture_output=True, text=True).stdout.split("\n")) - {""}
    got = set(subprocess.run([wap, "glob", "--root", root, "**", "-m", "0", "--no-default-excludes"],
                             capture_output=True, text=True).stdout.split("\n")) - {""}
    if got != set(allp) - ign:
        bad += 1
        print("trial %d: wap only %s, git only %s" % (trial, sorted(got - (set(allp) - ign))[:3],
                                                      sorted((set(allp) - ign) - got)[:3]))
sys.exit(1 if bad else 0)
EOF
mkdir "$T/fz"
if python3 "$T/fuzz.py" "$WAP" "$T/fz" 40 > "$T/fz.out" 2>&1; then ok "40 random trees: the same decisions as git check-ignore"
else fail "random trees differ from git: $(head -3 "$T/fz.out")"; fi

# the workspace root inside a repository (a package of a monorepo): the
# enclosing repository's rules apply, as git decides them
R=$T/mono
mkdir -p "$R/pkg/app/src" "$R/pkg/app/dist2" "$R/pkg/other"
git -C "$R" init -q .
printf '*.o\n/pkg/app/dist2/\n!keep.o\n' > "$R/.gitignore"
printf 'app/*.tmp\n' > "$R/pkg/.gitignore"
printf 'gen.c\n' > "$R/.git/info/exclude"
for f in src/a.c src/a.o src/keep.o dist2/x.js x.tmp y.txt src/gen.c; do echo x > "$R/pkg/app/$f"; done
(cd "$R" && find pkg/app -mindepth 1 | sed 's|^pkg/app/||' | LC_ALL=C sort) > "$T/mall"
(cd "$R" && sed 's|^|pkg/app/|' "$T/mall" | git check-ignore --stdin | sed 's|^pkg/app/||' | LC_ALL=C sort) > "$T/mign"
LC_ALL=C comm -23 "$T/mall" "$T/mign" > "$T/mkept"
wap glob --root "$R/pkg/app" '**' -m 0 | LC_ALL=C sort > "$T/mwap"
if cmp -s "$T/mwap" "$T/mkept"; then ok "root inside a repository: the same decisions as git"
else fail "root inside a repository: $(diff "$T/mwap" "$T/mkept" | tr '\n' ' ')"; fi
same "something was ignored there" "$(wc -l < "$T/mign" | tr -d ' ')" "5"
expect "grep there" 0 wap grep --root "$R/pkg/app" -l x
same "grep skips the outer repository's ignored files" "$OUT" "src/a.c
src/keep.o
y.txt"
# .ignore files of the enclosing repository's directories above the root
# apply too (as ripgrep applies parent .ignore files); a .ignore negation
# beats a .gitignore of the same directory
printf 'y.txt\n' > "$R/pkg/.ignore"
printf '!app/x.tmp\n' >> "$R/pkg/.ignore"
expect "grep under a parent .ignore" 0 wap grep --root "$R/pkg/app" -l x
same "the parent's .ignore skips y.txt, and re-includes x.tmp" "$OUT" "src/a.c
src/keep.o
x.tmp"
if command -v rg >/dev/null 2>&1; then
	same "the same files as rg" "$OUT" "$(cd "$R/pkg/app" && rg -l --no-config --sort path x)"
else
	ok "the same files as rg # SKIP rg not installed"
fi
rm "$R/pkg/.ignore"

# a .gitignore of many stars and double stars on a deep tree: git's
# wildmatch backtracked (every place of each star, times the stars after
# it): a grep or glob of such a tree ran for minutes, with no bound and no
# cancel. Each place of the pattern and the path is now decided once.
H=$T/hostile && rm -rf "$H" && mkdir -p "$H" && cd "$H" && git init -q .
python3 -c "
import os
d = '.'
for i in range(31):
    d += '/' + 'x' * 40
    os.makedirs(d, exist_ok=True)
    open(d + '/a.h', 'w').write('x\n')
    open(d + '/a.hh', 'w').write('x\n')
open('.gitignore', 'w').write('**/*x*x*x*x*x*x*x*x*/**/*.hh\n*x*x*x*x*x*x*x*x*x*x*y\n')"
# (git itself runs for minutes on it: the answer is the rule's, every
# .hh lies under a dir of eight x's and more, no .h does)
find . -name '*.h' | sed 's|^\./||' | LC_ALL=C sort > "$T/gitls"
start=$(date +%s%N)
expect "hostile .gitignore: glob over 31 levels is answered" 0 timeout 60 wap --root "$H" glob '**/*.h*' --sort path
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$ms" -lt 10000 ]; then ok "hostile .gitignore: in ${ms} ms"; else fail "hostile .gitignore: took ${ms} ms"; fi
same "hostile .gitignore: what the rules leave (the 31 .h files)" "$OUT" "$(cat "$T/gitls")"
same "hostile .gitignore: 31 of them" "$(printf '%s\n' "$OUT" | grep -c '\.h$')" 31
expect "hostile .gitignore: grep is answered" 0 timeout 60 wap --root "$H" grep -l x -g '*.h*'
same "hostile .gitignore: grep searches the 31 files the rules leave" "$(printf '%s\n' "$OUT" | wc -l)" 31
cd "$W"
# hostile ignore files (an agent writes them): a pattern of many stars
# against a long name is decided at once, not by trying every place of
# every star, nor "**/**/..." by trying each with and without a directory (as git's wildmatch does: `git check-ignore` takes for ever
# on it); a NUL ends a pattern, as for git (the pattern was read past its
# copy's end), and the same names are ignored
H=$T/hostile2
mkdir -p "$H/sub" "$T/hnul"
git -C "$H" init -q .
a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
printf '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\nsub/*a*a*a*a*a*a*a*a*a*a*a*a*b\n*.o\n' > "$H/.gitignore"
# and each "**/" of a line tried with and without a directory, for ever
printf '%s\n' "$(printf '**/%.0s' $(seq 20))x/y" >> "$H/.gitignore"
d=$(printf 'a/%.0s' $(seq 40))
mkdir -p "$H/${d}x"
for f in "${a}c" "sub/${a}c" "sub/${a}b" x.o y.c "${d}z" "${d}x/y"; do echo x > "$H/$f"; done
s0=$(date +%s)
timeout 60 "$WAP" glob --root "$H" '**' --type f -m 0 > "$T/hglob" 2>&1
same "a many-star pattern against a long name: decided in time" "$(( $(date +%s) - s0 < 30 ))" 1
same "and decided as git would" "$(LC_ALL=C sort "$T/hglob")" ".gitignore
${d}z
${a}c
sub/${a}c
y.c"
H=$T/hnul
git -C "$H" init -q .
printf 'keep\000.c\n*.o\000x\n!x.o\000\\\n' > "$H/.gitignore"
for f in keep keep.c x.o x.ox y.c; do echo x > "$H/$f"; done
"$WAP" glob --root "$H" '**' --type f -m 0 > "$T/hglob" 2>&1
(cd "$H" && find . -type f ! -path './.git/*' | sed 's|^\./||' | git check-ignore --stdin | LC_ALL=C sort) > "$T/hign"
(cd "$H" && find . -type f ! -path './.git/*' | sed 's|^\./||' | LC_ALL=C sort | LC_ALL=C comm -23 - "$T/hign") > "$T/hkept"
same "patterns with a NUL: the files git keeps" "$(LC_ALL=C sort "$T/hglob")" "$(cat "$T/hkept")"
