#!/bin/bash
# tests/rgjson.sh - `wap grep --jsonl` against `rg --json`: the same
# message stream (begin, match, context, end, summary), byte for byte,
# once the elapsed times (the only thing that may differ) are blanked.
. "$(dirname "$0")/lib.sh"

if ! command -v rg >/dev/null 2>&1; then
	echo "ok 1 - rg --json comparison # SKIP rg not installed"
	exit 0
fi

# the fixture tree: no hidden files (rg skips them), no .gitignore
cd "$W" || exit 1
printf 'hello world\nfoo bar foo\nbaz\n\nhello again\nfoo\n' > a.txt
printf 'one\r\nhello there\r\nfoo\r\n' > crlf.txt
printf 'caf\xe9 hello\nplain foo\n' > latin1.txt
printf 'hello from a bad name\n' > "$(printf 'n\xffame.txt')"
printf 'hello\nxx\0yy\nhello foo\n' > bin.dat
: > empty.txt
mkdir -p sub
printf 'foofoo foo\nno\nfoo\n' > sub/multi.txt
printf 'last line without newline hello' > sub/nonl.txt

# the elapsed times, and only them, blanked
norm() { sed -E 's/"(elapsed|elapsed_total)":\{[^}]*\}/"\1":T/g'; }

# cmp DESC ARGS...: `rg --json ARGS` and `wap grep --jsonl ARGS`
cmpj() {
	d=$1; shift
	rg --json --no-config --sort path "$@" < /dev/null 2>/dev/null | norm > "$T/r.out"
	wap grep --jsonl "$@" < /dev/null 2>/dev/null | norm > "$T/w.out"
	if [ ! -s "$T/r.out" ]; then
		fail "$d: rg printed nothing"
	elif cmp -s "$T/r.out" "$T/w.out"; then
		ok "as rg --json: $d"
	else
		fail "as rg --json: $d: $(diff "$T/r.out" "$T/w.out" | head -8)"
	fi
}

cmpj "one match per line, walking" hello
cmpj "several matches per line" foo
cmpj "context lines" -C1 foo
cmpj "before and after context, overlapping" -B2 -A1 baz
cmpj "inverted" -v hello a.txt crlf.txt
cmpj "inverted with context" -v -C1 foo a.txt
cmpj "zero-width ^" '^' a.txt crlf.txt
cmpj "zero-width \\b" '\b' a.txt sub/multi.txt
cmpj "zero-width \$" 'o$' a.txt crlf.txt
cmpj "empty matches beside real ones" 'x*' sub/multi.txt
cmpj "CRLF lines" there crlf.txt
cmpj "a non-UTF-8 line" hello latin1.txt
cmpj "a non-UTF-8 path" bad
cmpj "a file without a final newline" newline sub/nonl.txt
cmpj "a binary file found by walking is skipped" foo
cmpj "a binary file named explicitly" hello bin.dat
cmpj "an empty file named explicitly" -e hello -e foo empty.txt a.txt
cmpj "fixed strings, case-insensitive" -F -i HELLO a.txt latin1.txt
cmpj "word regexp" -w foo a.txt sub/multi.txt
cmpj "a directory argument" foo sub
cmpj "a multiline match" -U 'foo\nbaz|bar foo\nbaz' a.txt
cmpj "-a: a named binary file as text" -a hello bin.dat

# the paths given are kept as given, as rg (and grep -r) print them: "."
# gives "./a.txt", "./sub" gives "./sub/multi.txt"; none given, no prefix
cmpj "'.' given: ./ before every path" foo .
cmpj "'./sub' given" foo ./sub
cmpj "'./sub/' given" foo ./sub/
cmpj "'sub/' given" foo sub/
cmpj "'./a.txt' given" hello ./a.txt
cmpj "'.' and 'sub' given" hello . sub
# the text output: as grep -rn prints the same paths
for args in ". " "./sub" "./sub/ sub" "./a.txt ./sub/multi.txt"; do
	grep -rn foo $args 2>/dev/null | LC_ALL=C sort > "$T/g.out"
	wap grep foo $args 2>/dev/null | LC_ALL=C sort > "$T/w.out"
	if cmp -s "$T/g.out" "$T/w.out" && [ -s "$T/g.out" ]; then ok "text paths as grep -rn: $args"
	else fail "text paths as grep -rn: $args: $(diff "$T/g.out" "$T/w.out" | head -6)"; fi
done
