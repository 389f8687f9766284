# install: `make install PREFIX=… DESTDIR=…` puts the binary, one wap-NAME link
# per applet, the man pages and the completions in place, and they work.
. tests/lib.sh
dest=$T/dest
expect "make install DESTDIR PREFIX" 0 make -s install DESTDIR="$dest" PREFIX=/opt/wap ASAN="${ASAN:-}"
check "binary installed" test -x "$dest/opt/wap/bin/wap"
for a in $(wap --list); do
	check "link wap-$a installed" test -L "$dest/opt/wap/bin/wap-$a"
	check "man page wap-$a.1 installed" test -f "$dest/opt/wap/share/man/man1/wap-$a.1"
done
check "bash completion installed" test -f "$dest/opt/wap/share/bash-completion/completions/wap"
check "zsh completion installed" test -f "$dest/opt/wap/share/zsh/site-functions/_wap"
check "fish completion installed" test -f "$dest/opt/wap/share/fish/vendor_completions.d/wap.fish"
echo hi > "$W/f"
expect "installed link runs an applet" 0 "$dest/opt/wap/bin/wap-read" f
has "installed wap-read reads" "$OUT" "1: hi"
check "bash completion parses" bash -n "$dest/opt/wap/share/bash-completion/completions/wap"
