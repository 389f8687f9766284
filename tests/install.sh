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
# `make static` (the static image, the micro-VM guest): every library linked
# in, none of the linker's --wrap; it must link and work.  Built into $T
# where its archives are here (scripts/container-deps --static installs them).
if [ -n "${ASAN:-}" ]; then
	ok "# SKIP the static build: not under ASan (the normal run builds it)"
elif scripts/container-deps --static --check >/dev/null 2>&1; then
	expect "make STATIC=1 links" 0 make -s STATIC=1 B="$T/static" "$T/static/wap"
	git -C "$W" init -q && git -C "$W" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
	expect "the static binary: git log" 0 "$T/static/wap" git log --format=%s
	same "the static binary: its answer" "$OUT" "one"
	expect "the static binary: exec" 0 "$T/static/wap" exec -- sh -c 'echo ran'
	same "the static binary: exec's output" "$OUT" "ran"
else
	ok "# SKIP the static build: its archives are missing (scripts/container-deps --static)"
fi
