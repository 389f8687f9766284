# sandbox: escape attempts through every applet must be refused and leave
# nothing written outside the root.  Run twice: with openat2, and with the
# component-wise fallback (WAP_NO_OPENAT2=1).
. tests/lib.sh
ROOT=$(cd "$W" && pwd -P)
TT=$(cd "$T" && pwd -P)
OUTSIDE=$TT/outside
EVIL=$TT/ws-evil		# a sibling whose name starts with the root's name

mkdir -p "$OUTSIDE/dir" "$EVIL"
printf 'top secret\n' > "$OUTSIDE/secret.txt"
printf 'deep\n' > "$OUTSIDE/dir/deep.txt"
printf 'evil\n' > "$EVIL/file"

snapshot() {
	(cd "$TT" && find outside ws-evil -printf '%p %y %s %m %l\n' | sort
	 find outside ws-evil -type f -exec md5sum {} + | sort
	 ls -a "$TT" | grep -v -e '^out$' -e '^err$' -e '^jerr$')
}
printf '{"security":{"restrictedPaths":["**/.env","private/**"]}}' > "$TT/cfg.json"
BEFORE=$(snapshot)

setup() {
	rm -rf "$W"; mkdir -p "$W/sub/inner" "$W/private" "$W/secret" "$W/withlink"
	printf 'inside\n' > "$W/inside.txt"
	printf 'inner\n' > "$W/sub/inner/inner.txt"
	printf 'KEY=1\n' > "$W/.env"
	printf 'key\n' > "$W/private/key"
	ln -s "$OUTSIDE/secret.txt" "$W/out_file"	# absolute, to a file outside
	ln -s "$OUTSIDE" "$W/out_dir"			# absolute, to a dir outside
	ln -s ../outside "$W/rel_out"			# relative, leaving by ..
	ln -s ../../../outside "$W/sub/inner/up"	# relative, deeper
	ln -s chain2 "$W/chain1"; ln -s rel_out "$W/chain2"	# a chain leading out
	ln -s ../ws-evil "$W/evil_link"
	ln -s "$OUTSIDE/created.txt" "$W/dangle"	# dangling, pointing out
	ln -s loop2 "$W/loop1"; ln -s loop1 "$W/loop2"
	ln -s /proc/self/root "$W/magic"
	ln -s .env "$W/env_link"
	ln -s ../out_dir "$W/withlink/l"		# inside link to an outside link
	ln -s sub/inner/inner.txt "$W/in_link"		# links that stay inside
	ln -s ../inside.txt "$W/sub/in_up"
	ln -s sub "$W/in_dir"
}

run() {
	m=$1	# label: openat2 or fallback
	setup
	# controls: what stays inside works in both modes
	expect "[$m] control: read through an inside link" 0 wap read in_link
	same "[$m] control: content" "$OUT" "1: inner"
	expect "[$m] control: relative link with .. staying inside" 0 wap read sub/in_up
	expect "[$m] control: directory link inside" 0 wap read in_dir/inner/inner.txt
	expect "[$m] control: write through an inside dir link" 0 wap write in_dir/w.txt --content w
	check "[$m] control: written inside" test -f "$W/sub/w.txt"

	# read
	expect "[$m] read ../ escape" 4 wap-read ../outside/secret.txt
	expect "[$m] read deep .. chain" 4 wap read ../../../../../../etc/passwd
	expect "[$m] read .. after a real dir" 4 wap read sub/inner/../../../outside/secret.txt
	expect "[$m] read ./ and .. mixed" 4 wap read ./././../outside/secret.txt
	expect "[$m] read sub/../.." 4 wap read sub/../..
	expect "[$m] read absolute path outside" 4 wap read /etc/passwd
	expect "[$m] read absolute path to the outside dir" 4 wap read "$OUTSIDE/secret.txt"
	expect "[$m] read sibling with the root's name as prefix" 4 wap read "$ROOT-evil/file"
	same "[$m] prefix sibling message" "$ERR" "wap read: Access denied: $ROOT-evil/file is outside the workspace root $ROOT"
	expect "[$m] read sibling via .." 4 wap read ../ws-evil/file
	expect "[$m] read symlink to an outside file" 4 wap read out_file
	expect "[$m] read through an absolute dir symlink" 4 wap read out_dir/secret.txt
	expect "[$m] read through a relative .. symlink" 4 wap read rel_out/secret.txt
	expect "[$m] read through a deeper relative symlink" 4 wap read sub/inner/up/secret.txt
	expect "[$m] read through a symlink chain" 4 wap read chain1/secret.txt
	expect "[$m] read through a link to the prefix sibling" 4 wap read evil_link/file
	expect "[$m] read a listing through a dir symlink" 4 wap read out_dir
	expect "[$m] read a symlink loop" 4 wap read loop1
	expect "[$m] read through /proc/self/root" 4 wap read magic/etc/passwd
	expect "[$m] read through a link to an outside link" 4 wap read withlink/l/secret.txt
	# write
	expect "[$m] write ../ escape" 4 wap-write ../outside/new.txt --content x
	expect "[$m] write absolute outside" 4 wap write "$OUTSIDE/new.txt" --content x
	expect "[$m] write into the prefix sibling" 4 wap write "$ROOT-evil/new.txt" --content x
	expect "[$m] write through a dir symlink" 4 wap write out_dir/new.txt --content x
	expect "[$m] write through a relative symlink" 4 wap write rel_out/new.txt --content x
	expect "[$m] write a symlink planted at the target" 4 wap write out_file --content pwned
	expect "[$m] append through a planted symlink" 4 wap write out_file --mode append --content pwned
	expect "[$m] write a dangling symlink pointing out" 4 wap write dangle --content pwned
	expect "[$m] write deep through a symlink, parents wanted" 4 wap write sub/inner/up/a/b/c.txt --content x
	# mkdir
	expect "[$m] mkdir ../ escape" 4 wap-mkdir ../outside/newdir
	expect "[$m] mkdir through a dir symlink" 4 wap mkdir out_dir/newdir
	expect "[$m] mkdir -p through a relative symlink" 4 wap mkdir rel_out/a/b
	expect "[$m] mkdir on a symlink pointing out" 4 wap mkdir out_dir
	expect "[$m] mkdir in the prefix sibling" 4 wap mkdir "$ROOT-evil/d"
	# rm
	expect "[$m] rm ../ escape" 4 wap-rm ../outside/secret.txt
	expect "[$m] rm through a dir symlink" 4 wap rm out_dir/secret.txt
	expect "[$m] rm -r through a dir symlink" 4 wap rm -r out_dir/dir
	expect "[$m] rm in the prefix sibling" 4 wap rm "$ROOT-evil/file"
	expect "[$m] rm -r the root by a .. path" 4 wap rm -r sub/..
	# mv
	expect "[$m] mv from outside" 4 wap-mv ../outside/secret.txt stolen.txt
	expect "[$m] mv to outside" 4 wap mv inside.txt ../outside/planted.txt
	expect "[$m] mv into a dir symlink" 4 wap mv inside.txt out_dir/planted.txt
	expect "[$m] mv out of a dir symlink" 4 wap mv out_dir/secret.txt here.txt
	expect "[$m] mv onto a symlink to an outside dir" 4 wap mv inside.txt rel_out
	expect "[$m] mv into the prefix sibling" 4 wap mv inside.txt "$ROOT-evil/x"
	# cp
	expect "[$m] cp from outside" 4 wap-cp ../outside/secret.txt x
	expect "[$m] cp a symlink to an outside file" 4 wap cp out_file x
	expect "[$m] cp -r a symlink to an outside dir" 4 wap cp -r out_dir x
	expect "[$m] cp into a dir symlink" 4 wap cp inside.txt out_dir/x
	expect "[$m] cp to outside" 4 wap cp inside.txt ../outside/x
	expect "[$m] cp over a planted symlink" 4 wap cp inside.txt out_file
	expect "[$m] cp --force over a planted symlink" 4 wap cp -f inside.txt out_file
	check "[$m] the planted link is left alone" test -L "$W/out_file"
	expect "[$m] cp -r copies inner links as links" 0 wap cp -r withlink wl2
	expect "[$m] the copied link still cannot be followed out" 4 wap read wl2/l/secret.txt
	# ls and stat
	expect "[$m] ls .." 4 wap-ls ..
	expect "[$m] ls through a dir symlink" 4 wap ls out_dir
	expect "[$m] ls through a relative symlink" 4 wap ls rel_out
	expect "[$m] ls the prefix sibling" 4 wap ls "$ROOT-evil"
	expect "[$m] ls -r does not follow links out" 0 wap ls -r --max-depth 10
	lacks "[$m] nothing from outside listed" "$OUT" "secret.txt"
	expect "[$m] ls a symlink to an outside file" 4 wap ls out_file
	expect "[$m] stat through a dir symlink" 4 wap-stat out_dir/secret.txt
	expect "[$m] stat --exists of a link to an outside file" 4 wap stat --exists out_file
	expect "[$m] rm through a symlink to an outside file" 4 wap rm out_file/x
	expect "[$m] mkdir through a symlink to an outside file" 4 wap mkdir out_file/x
	expect "[$m] stat --exists through a dir symlink" 4 wap stat --exists out_dir/secret.txt
	# overlong paths
	long=$(python3 -c 'print("a/" * 2100)')
	expect "[$m] overlong path" 2 wap read "$long"
	same "[$m] overlong message" "$ERR" "wap read: Invalid path: longer than 4095 bytes"
	expect "[$m] overlong write" 2 wap write "$long" --content x
	comp=$(python3 -c 'print("c" * 300)')
	expect "[$m] overlong component" 2 wap mkdir "$comp"
	same "[$m] component message" "$ERR" "wap mkdir: Invalid path: a component is longer than 255 bytes"
	# restrictedPaths from --restrict
	expect "[$m] --restrict a file" 5 wap read .env --restrict .env
	expect "[$m] --restrict through a symlink to it" 5 wap read env_link --restrict .env
	expect "[$m] --restrict a tree for write" 5 wap write secret/x --content x --restrict 'secret/**'
	check "[$m] nothing written in the restricted tree" test ! -e "$W/secret/x"
	expect "[$m] --restrict and cp out of it" 5 wap cp .env copy --restrict '**/.env'
	# restrictedPaths from a config file
	expect "[$m] config: read .env" 5 wap read .env --config "$TT/cfg.json"
	expect "[$m] config: read private/key" 5 wap read private/key --config "$TT/cfg.json"
	expect "[$m] config: write private/new" 5 wap write private/new --content x --config "$TT/cfg.json"
	expect "[$m] config: mv private/key out" 5 wap mv private/key k --config "$TT/cfg.json"
	expect "[$m] config: rm -r private" 5 wap rm -r private --config "$TT/cfg.json"
	expect "[$m] config: cp -r a tree holding .env" 5 wap cp -r . sub/copy --config "$TT/cfg.json"
	mkdir -p "$W/.wap" && printf '{"security.restrictedPaths":["private"]}' > "$W/.wap/config.json"
	expect "[$m] .wap/config.json under the root is not read unless named" 0 wap read private/key
	expect "[$m] --config names it" 5 wap read private/key --config "$W/.wap/config.json"
	same "[$m] restricted message" "$ERR" "wap read: Path restricted: private/key is denied by restrictedPaths"
	WAP_CONFIG=$TT/cfg.json expect "[$m] \$WAP_CONFIG" 5 wap stat .env
	rm -rf "$W/.wap"
	check "[$m] private/key still there" test -f "$W/private/key"
	# links that point out are removed as links, their targets untouched
	expect "[$m] rm a symlink pointing out removes the link" 0 wap rm -r rel_out
	check "[$m] the link is gone" test ! -L "$W/rel_out"
	same "[$m] nothing outside changed" "$(snapshot)" "$BEFORE"
}

run openat2
WAP_NO_OPENAT2=1
export WAP_NO_OPENAT2
run fallback
unset WAP_NO_OPENAT2
same "outside tree identical at the end" "$(snapshot)" "$BEFORE"
