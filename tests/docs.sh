# docs: every applet answers --help, has a man page and completions, and the
# committed man/ and completions/ are what scripts/mkdocs makes of the usage
# texts today (so a flag added to an applet without `make docs` fails here).
. tests/lib.sh
for a in $(wap --list); do
	expect "$a --help exits 0" 0 wap "$a" --help
	has "$a --help shows usage" "$OUT" "usage: wap $a"
	expect "wap-$a --help through the link" 0 "wap-$a" --help
	check "man/wap-$a.1 exists" test -f "man/wap-$a.1"
	check "$a in bash completion" grep -q "wap-$a" completions/wap.bash
	check "$a in zsh completion" grep -q "wap-$a" completions/_wap
	check "$a in fish completion" grep -q "subcommand -a $a " completions/wap.fish
done
scripts/mkdocs "$WAP" "$T/docs" >/dev/null 2>&1
check "man pages are up to date (run make docs)" diff -r man "$T/docs/man"
check "completions are up to date (run make docs)" diff -r completions "$T/docs/completions"
expect "wap --version" 0 wap --version
has "version printed" "$OUT" "wap "
expect "unknown applet exits 127" 127 wap no-such-applet
has "unknown applet message" "$ERR" "unknown applet"
expect "wap --list" 0 wap --list
expect "wap --help" 0 wap --help
expect "wap with no arguments is a usage error" 2 wap
mkdir "$T/inst"
expect "wap --install -s DIR" 0 wap --install -s "$T/inst"
check "installed symlink runs" "$T/inst/wap-info" --help
mkdir -p "$T/inst2"
expect "wap --install DIR (hard links) into an existing dir" 0 wap --install "$T/inst2"
check "hard link made" test -f "$T/inst2/wap-info"
