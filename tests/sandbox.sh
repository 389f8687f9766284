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

# ---- the process sandbox: exec --sandbox and terminals ----
abi=$(python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(max(0, l.syscall(444, None, 0, 1)))' 2>/dev/null || echo 0)
if [ "${abi:-0}" -lt 1 ]; then
	ok "# SKIP no Landlock on this kernel: the process sandbox refuses to run (tests/exec.sh)"
else
setup
tag=$(basename "$TT")
# the temp dir: private to the run, never the caller's TMPDIR, gone afterwards
expect "sandbox: TMPDIR=/etc from the caller does not open /etc" 2 wap exec --sandbox --env TMPDIR=/etc -- sh -c "echo x > /etc/wap-escape.$tag"
check "sandbox: nothing written in /etc" test ! -e "/etc/wap-escape.$tag"
expect "sandbox: /tmp itself is not writable" 2 wap exec --sandbox -- sh -c "echo x > /tmp/wap-escape.$tag"
check "sandbox: nothing written in /tmp" test ! -e "/tmp/wap-escape.$tag"
expect "sandbox: /dev/shm is not writable" 2 wap exec --sandbox -- sh -c "echo x > /dev/shm/wap-escape.$tag"
check "sandbox: nothing written in /dev/shm" test ! -e "/dev/shm/wap-escape.$tag"
expect "sandbox: \$TMPDIR is a private writable dir" 0 wap exec --sandbox --env TMPDIR=/etc -- sh -c 'echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && stat -c %a "$TMPDIR" && echo "$TMPDIR"'
same "sandbox: written and read back, mode 0700" "$(printf '%s\n' "$OUT" | sed -n 1,2p)" "t
700"
ptmp=$(printf '%s\n' "$OUT" | sed -n 3p)
case $ptmp in /tmp/wap-sandbox-$(id -u)/*) ok "sandbox: the private dir is under /tmp ($ptmp)";; *) fail "sandbox: private dir $ptmp";; esac
check "sandbox: the private dir is removed after the run" test ! -e "$ptmp"
# however deep a tree the command leaves there (past PATH_MAX), and with
# dirs it closed to its owner
deep='import os
t = os.environ["TMPDIR"]; print(t)
fd = os.open(t, os.O_RDONLY)
for i in range(150):
    os.mkdir("d" * 200, dir_fd=fd)
    fd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
os.mkdir("shut", dir_fd=fd); os.mkdir("shut/in", dir_fd=fd)
open(os.open("shut/in/f", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w").write("y")
os.chmod("shut/in", 0, dir_fd=fd); os.chmod("shut", 0, dir_fd=fd)
print("made")'
expect "sandbox: a tree 150 levels deep in the temp dir" 0 wap exec --sandbox -- python3 -c "$deep"
same "sandbox: made" "$(printf '%s\n' "$OUT" | sed -n 2p)" made
ptmp=$(printf '%s\n' "$OUT" | sed -n 1p)
check "sandbox: the private dir is removed after the run, however deep" test ! -e "$ptmp"

# no device nodes (root could make one for the disk), no disk devices
expect "sandbox: mknod of a block device refused" 1 wap exec --sandbox -- mknod ./blk b 7 0
has "sandbox: mknod EACCES" "$ERR" "Permission denied"
check "sandbox: no device node made" test ! -e "$W/blk"
blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -1)
if [ -n "$blk" ]; then
	expect "sandbox: a disk device ($blk) cannot be opened" 1 wap exec --sandbox -- head -c 1 "$blk"
	has "sandbox: the device refused by Landlock" "$ERR" "Permission denied"
else
	ok "# SKIP no block device in /dev"
fi

# root keeps only the capabilities of file work (no init_module, raw I/O,
# reboot, sethostname, bpf...), in the bounding set too
if [ "$(id -u)" = 0 ]; then
	caps='import sys; d = dict(l.split(":\t") for l in open("/proc/self/status").read().splitlines() if l.startswith("Cap")); print(" ".join("%s=%d%d%d" % (k, (int(d[k], 16) >> 16) & 1, (int(d[k], 16) >> 21) & 1, (int(d[k], 16) >> 1) & 1) for k in ("CapEff", "CapBnd")))'
	expect "caps control: root has CAP_SYS_MODULE and CAP_SYS_ADMIN" 0 wap exec -- /usr/bin/python3 -c "$caps"
	same "caps control: module, admin, dac_override" "$OUT" "CapEff=111 CapBnd=111"
	expect "caps: the sandbox drops them" 0 wap exec --sandbox -- /usr/bin/python3 -c "$caps"
	same "caps: no module, no admin; dac_override kept" "$OUT" "CapEff=001 CapBnd=001"
fi

# run as root, the system dirs are granted whole, and root's DAC override
# read what the system lets no one but root read there: /etc/shadow, host
# keys, a 0700 dir of /var/lib.  What the system lets everyone read stays
# readable (a shell, python, git, the CA certificates), and the root stays
# root's to read and write where it lies beneath a system dir.  The init's
# /proc/1/mountinfo (the server's namespace) and the command's own mount
# table showed mounts the view hides.
if [ "$(id -u)" = 0 ]; then
	priv="/etc/wap-priv.$tag" privdir="/var/lib/wap-priv.$tag"
	(umask 077; printf 'planted etc secret\n' > "$priv"; mkdir "$privdir"
	 printf 'planted var secret\n' > "$privdir/f"; chmod 644 "$privdir/f")
	for f in "$priv" "$privdir/f" /etc/shadow /etc/gshadow $(ls /etc/ssh/ssh_host_*_key 2>/dev/null); do
		[ -e "$f" ] || continue
		expect "as root: a sandboxed command cannot read $f" 1 wap exec --sandbox -- cat "$f"
		has "  ... refused by the kernel" "$ERR" "Permission denied"
		lacks "  ... nothing of it shown" "$OUT" ":"
	done
	expect "as root: nor list a dir closed to others" 2 wap exec --sandbox -- ls "$privdir"
	expect "as root: nor copy the secret by another way" 0 wap exec --json --sandbox -- sh -c "cp $priv x.txt; python3 -c 'print(open(\"$priv\").read())'; dd if=$priv 2>/dev/null; cat /proc/self/root$priv"
	lacks "  ... not shown" "$OUT" "planted etc secret"
	check "  ... not copied" test ! -e "$W/x.txt"
	expect "as root control: what everyone may read is read" 0 wap exec --sandbox -- sh -c 'head -1 /etc/passwd && ls /usr/bin > /dev/null && git --version > /dev/null && python3 -c "print(1)" && cat /etc/ssl/certs/*.pem > /dev/null && /usr/bin/true && echo fine'
	has "  ... passwd, ls, git, python3, CA certificates" "$OUT" "fine"
	rm -rf "$privdir" "$priv"
	# a workspace beneath a system dir is root's as it was: a 0600 file of
	# root's and one of another user's read and written
	if [ -d /opt ]; then
		ow=$(mktemp -d /opt/wap-ws.XXXXXX)
		(umask 077; printf 'mine\n' > "$ow/mine"; printf 'theirs\n' > "$ow/theirs"; mkdir "$ow/shut")
		chown 12345:12345 "$ow/theirs" "$ow/shut"
		expect "as root: a workspace under /opt is read and written as before" 0 wap exec --sandbox --root "$ow" -- sh -c 'cat mine theirs && echo new >> mine && echo more >> theirs && echo in > shut/f && cat shut/f'
		same "  ... all of it" "$OUT" "mine
theirs
in"
		same "  ... written" "$(cat "$ow/mine" "$ow/theirs")" "mine
new
theirs
more"
		rm -rf "$ow"
	fi
	# a pod's secrets: the service-account token where /var/run is a dir
	# of its own (the system dirs are granted whole, /var with it; the
	# token is 0644), and a docker secret in /run/secrets; made in a mount
	# namespace of the test's own, over /var and /run
	if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
		fv=$TT/fakevar
		mkdir -p "$fv"
		out=$(unshare -m --propagation private sh -c '
			sa=$1/run/secrets/kubernetes.io/serviceaccount
			mount -t tmpfs fakevar "$1" && mkdir -p "$sa" "$1/lib" &&
			mount -t tmpfs sa "$sa" && echo "k8s-token-$2" > "$sa/token" && chmod 644 "$sa/token" &&
			mount -t tmpfs run /run && mkdir /run/secrets && echo "docker-secret-$2" > /run/secrets/db &&
			chmod 644 /run/secrets/db && mount --rbind "$1" /var || exit 9
			cat "$sa/token" /run/secrets/db && echo outside-ok
			wap exec --sandbox -- sh -c "cat /var/run/secrets/kubernetes.io/serviceaccount/token; cat /run/secrets/db; ls /var/run; grep -c secrets /proc/self/mountinfo; echo end"
		' sh "$fv" "$tag" 2>&1)
		has "as root control: the pod's token and secret are there outside" "$out" "outside-ok"
		lacks "as root: a sandboxed command cannot read the service-account token in /var/run" "$(printf '%s\n' "$out" | sed '1,/outside-ok/d')" "k8s-token-$tag"
		lacks "as root: nor a docker secret in /run/secrets" "$(printf '%s\n' "$out" | sed '1,/outside-ok/d')" "docker-secret-$tag"
		has "  ... the command ran, its table naming no secrets mount" "$out" "0
end"
	else
		ok "# SKIP a pod's secrets: no unshare -m"
	fi
	# a mount of the host's that the view hides (under /tmp), and one the
	# init's mount table alone lists
	hm="$TT/hostmnt-$tag"
	mkdir -p "$hm"
	if mount -t tmpfs -o size=64k "wapsecret-$tag" "$hm" 2>/dev/null; then
		for f in /proc/1/mountinfo /proc/1/mounts /proc/self/mountinfo /proc/self/mounts /proc/thread-self/mountinfo; do
			expect "as root: $f from a sandboxed command" 0 wap exec --json --sandbox -- cat "$f"
			lacks "  ... does not show the host's mount of $hm" "$OUT" "hostmnt-$tag"
		done
		expect "as root control: the command's own table shows its view" 0 wap exec --sandbox -- cat /proc/self/mountinfo
		has "  ... the workspace root" "$OUT" "$ROOT"
		out=$(python3 - "$WAP" "$W" "$tag" <<'EOF2'
import sys
from wapstdio import Stdio
wap, root, tag = sys.argv[1:4]
s = Stdio([wap, "serve", "--root", root])
s.call("initialize", protocolVersion="2025-06-18", capabilities={})
r = s.call("tools/call", name="exec", arguments={"command":
    "cat /proc/1/mountinfo /proc/self/mountinfo /etc/shadow 2>&1; echo end"})
print(r)
s.close()
EOF2
)
		lacks "serve as root: an MCP exec sees no host mount" "$out" "hostmnt-$tag"
		has "  ... and cannot read /etc/shadow" "$out" "/etc/shadow: Permission denied"
		has "  ... and ran to its end" "$out" "end"
		umount "$hm"
	else
		ok "# SKIP the host's mount tables: cannot mount a tmpfs"
	fi
fi

# Landlock does not see a change of a file's metadata: chmod, chown,
# utimes, extended attributes, file flags (chattr, file_setattr).  Root kept
# CAP_CHOWN and CAP_FOWNER and chmod'ed a device node of the host's /dev to
# 0666 (the disk, for every user), a sysfs file to be read by all; any user
# chmod'ed, touched and tagged (user.* xattrs need only write permission)
# its own files outside the root, and a --read-only command those of the
# root.  What the command may not write is mounted read-only in its view
# (EROFS): every mount but the root and its temp dir.
mounts='while read -r _ _ _ _ mp opts _; do case ",$opts," in *,rw,*) echo "rw $mp";; esac; done < /proc/self/mountinfo'
expect "sandbox: the command's mounts (the control reads them)" 0 wap exec --sandbox -- sh -c "$mounts"
has "sandbox control: the root is writable" "$OUT" "rw $ROOT"
bad=$(printf '%s\n' "$OUT" | while read -r _ mp; do
	case $mp in "$ROOT"|"$ROOT"/*|/tmp/wap-sandbox-*|/dev/pts|/proc) ;; *) echo "$mp";; esac; done)
same "sandbox: nothing outside the root, the temp dir, its pts and proc is mounted writable" "$bad" ""
expect "sandbox --read-only: the root is mounted read-only too" 0 wap exec --read-only -- sh -c "$mounts"
lacks "  ... not rw" "$OUT" "rw $ROOT"
printf 'x\n' > "$W/meta.txt"; chmod 644 "$W/meta.txt"; touch -d 2001-01-01 "$W/meta.txt"
wap exec --read-only -- sh -c 'chmod 666 meta.txt; touch meta.txt; python3 -c "import os; os.setxattr(\"meta.txt\", \"user.wap\", b\"1\")"' >/dev/null 2>&1
same "sandbox --read-only: chmod, touch, setxattr leave the root's file as it was" "$(stat -c '%a %Y' "$W/meta.txt") $(python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$W/meta.txt")" "644 978307200 []"
rm -f "$W/meta.txt"
vt=$(mktemp /var/tmp/wap-meta.XXXXXX)
chmod 666 "$vt"; touch -d 2001-01-01 "$vt"
if python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.t", b"1"); os.removexattr(sys.argv[1], "user.t")' "$vt" 2>/dev/null; then
	expect "sandbox: metadata of a file outside the root (0666, $vt)" 0 wap exec --sandbox -- sh -c "chmod 600 $vt; touch $vt; python3 -c 'import os; os.setxattr(\"$vt\", \"user.wap\", b\"1\")'; echo done"
	same "  ... unchanged: mode, time, no xattr" "$(stat -c '%a %Y' "$vt") $(python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$vt")" "666 978307200 []"
else
	ok "# SKIP metadata outside the root: no user xattrs on /var/tmp"
fi
rm -f "$vt"
if [ "$(id -u)" = 0 ] && nod=/dev/wap-meta.$tag && mknod -m 0600 "$nod" c 1 3 2>/dev/null; then
	expect "as root: chmod and chown of a node of the host's /dev" 0 wap exec --sandbox -- sh -c "chmod 666 $nod; chown 65534 $nod; echo done"
	same "  ... leave it root's, 0600" "$(stat -c '%a %u' "$nod")" "600 0"
	rm -f "$nod"
else
	ok "# SKIP chmod of a node in /dev: not root"
fi
if [ "$(id -u)" = 0 ] && [ -z "${ASAN:-}" ] && command -v setpriv >/dev/null; then
	nb=$(mktemp -d /tmp/wap-meta-nb.XXXXXX); chmod 755 "$nb"; mkdir "$nb/ws"
	own=$(mktemp /var/tmp/wap-meta.XXXXXX); chmod 600 "$own"; touch -d 2001-01-01 "$own"
	# nobody may not reach into this tree (a fresh clone under a 0700
	# dir): a copy of the binary
	cp "$WAP" "$nb/wap"
	chown -R 65534:65534 "$nb" "$own"
	out=$(cd "$nb/ws" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nb" XDG_CONFIG_HOME="$nb/cfg" WAP_ROOT="$nb/ws" "$nb/wap" exec --sandbox -- \
		sh -c "chmod 666 $own; touch $own; python3 -c 'import os; os.setxattr(\"$own\", \"user.wap\", b\"1\")'; echo ran-\$(id -u)" 2>&1)
	has "as nobody: metadata of its own file outside the root (the command ran)" "$out" "ran-65534"
	has "  ... refused: read-only file system" "$out" "Read-only file system"
	same "as nobody: its own file outside the root keeps its mode, time, xattrs" "$(stat -c '%a %Y' "$own") $(python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$own")" "600 978307200 []"
	rm -rf "$nb" "$own"
else
	ok "# SKIP metadata as nobody: needs root (to become nobody) and setpriv, not ASan"
fi

# --read-only covers exec
expect "read-only: exec cannot write the root" 2 wap exec --read-only -- sh -c 'echo x > ro.txt'
check "read-only: nothing written" test ! -e "$W/ro.txt"

# .git and .wap are read-only inside the sandbox (a private mount namespace
# bind-mounts them read-only: EROFS says that mechanism held)
git -C "$W" init -q
mkdir -p "$W/.wap" "$W/sub/nested"
git -C "$W/sub/nested" init -q
printf '{}' > "$W/.wap/config.json"
gitcfg=$(md5sum < "$W/.git/config")
expect "sandbox: cannot plant .git/hooks/pre-commit" 2 wap exec --sandbox -- sh -c 'echo "#!/bin/sh" > .git/hooks/pre-commit'
has "sandbox: .git held by the read-only mount" "$ERR" "Read-only file system"
check "sandbox: no hook planted" test ! -e "$W/.git/hooks/pre-commit"
expect "sandbox: cannot set core.fsmonitor" 0 wap exec --json --sandbox -- git config core.fsmonitor 'touch /tmp/pwned'
jcheck "sandbox: git config failed" "$OUT" 'j["exit_code"] != 0'
expect "sandbox: cannot write objects/info/alternates" 2 wap exec --sandbox -- sh -c 'echo /tmp > .git/objects/info/alternates'
same "sandbox: .git/config unchanged" "$(md5sum < "$W/.git/config")" "$gitcfg"
expect "sandbox: cannot rename .git away" 1 wap exec --sandbox -- mv .git g
check "sandbox: .git stays" test -d "$W/.git"
expect "sandbox: cannot write .git from a cwd inside it" 2 wap exec --sandbox --cwd .git -- sh -c 'echo x > hooks/post-checkout'
check "sandbox: no hook planted from inside" test ! -e "$W/.git/hooks/post-checkout"
expect "sandbox: a nested repository's .git too" 2 wap exec --sandbox -- sh -c 'echo x > sub/nested/.git/hooks/pre-commit'
git -C "$W" init -q lvl1
mkdir -p "$W/sub/wt"
printf 'gitdir: ../../.git\n' > "$W/sub/wt/.git"
expect "sandbox: a repository's .git one level down" 2 wap exec --sandbox -- sh -c 'echo x > lvl1/.git/hooks/pre-commit'
expect "sandbox: a .git file two levels down" 2 wap exec --sandbox -- sh -c 'echo "gitdir: /tmp" > sub/wt/.git'
same "sandbox: the .git file unchanged" "$(cat "$W/sub/wt/.git")" "gitdir: ../../.git"
expect "sandbox: cannot change .wap/config.json" 2 wap exec --sandbox -- sh -c 'echo "{\"security\":{}}" > .wap/config.json'
same "sandbox: .wap/config.json unchanged" "$(cat "$W/.wap/config.json")" "{}"
expect "sandbox: cannot add to .wap" 2 wap exec --sandbox -- sh -c 'echo x > .wap/new'
# a protected .git cannot be carried out of reach: the directories on the
# way to it are mount points, which cannot be renamed or removed
mkdir -p "$W/vend"
git -C "$W/vend" init -q lib
expect "sandbox: cannot move a nested repository's parent deeper" 1 \
	wap exec --sandbox -- sh -c 'mkdir -p p/q/r && mv vend p/q/r/'
check "sandbox: the nested repository stays" test -d "$W/vend/lib/.git"
expect "sandbox: cannot rename the repository's own dir" 1 wap exec --sandbox -- mv vend/lib vend/lib2
expect "sandbox: the moved-deeper hook is never written" 2 wap exec --sandbox -- sh -c \
	'echo x > p/q/r/vend/lib/.git/hooks/pre-commit || echo x > vend/lib/.git/hooks/pre-commit'
check "sandbox: no hook in the nested repository" test ! -e "$W/vend/lib/.git/hooks/pre-commit"
expect "sandbox: a file beside the nested repository is still written" 0 \
	wap exec --sandbox -- sh -c 'echo ok > vend/lib/file && echo ok > vend/file'
rm -rf "$W/p" "$W/vend/lib/file" "$W/vend/file"
# decoys cannot push a repository out of the protected set: past the
# limit the command is refused, not run with some .git writable
for i in $(seq 1 520); do mkdir -p "$W/decoy/d$i/.git"; done
expect "sandbox: too many .git to protect: refused" 7 wap exec --sandbox -- sh -c 'echo x > vend/lib/.git/hooks/pre-commit'
has "sandbox: says why" "$ERR" "too many"
check "sandbox: nothing planted past the limit" test ! -e "$W/vend/lib/.git/hooks/pre-commit"
rm -rf "$W/decoy"
# a config file beneath the root (--config) is read-only to commands too,
# as it is to every other door; so are the dirs on the way to it
mkdir -p "$W/conf" && echo '{"security":{"restrictedCommands":["curl"]}}' > "$W/conf/wap.json"
expect "sandbox: cannot rewrite the config beneath the root" 2 \
	wap --config "$W/conf/wap.json" exec --sandbox -- sh -c 'echo "{}" > conf/wap.json'
expect "sandbox: cannot move the config's dir away" 1 \
	wap --config "$W/conf/wap.json" exec --sandbox -- mv conf conf2
same "sandbox: the config unchanged" "$(cat "$W/conf/wap.json")" '{"security":{"restrictedCommands":["curl"]}}'
rm -rf "$W/conf"
expect "sandbox: cannot unmount the read-only .git" 0 wap exec --json --sandbox -- umount .git
jcheck "sandbox: umount failed" "$OUT" 'j["exit_code"] != 0'
expect "sandbox: nor reach it through /proc/PPID/cwd" 2 wap exec --sandbox -- sh -c 'echo x > /proc/$PPID/cwd/.git/hooks/pre-commit'
check "sandbox: no hook planted through /proc" test ! -e "$W/.git/hooks/pre-commit"
if command -v gcc >/dev/null; then
	cat > "$TT/byhandle.c" <<'EOF2'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* open .git/config by its handle through the root's (writable) mount */
int main(void)
{
	struct file_handle *h = malloc(sizeof(*h) + 128);
	int mid, fd;

	h->handle_bytes = 128;
	if (name_to_handle_at(AT_FDCWD, ".git/config", h, &mid, 0) < 0) {
		perror("name_to_handle_at");
		return 1;
	}
	fd = open_by_handle_at(open(".", O_RDONLY | O_DIRECTORY), h, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "[core]\n\tfsmonitor = touch /tmp/pwned\n", 36) < 0) {
		perror("open_by_handle_at");
		return 1;
	}
	return 0;
}
EOF2
	gcc -o "$W/byhandle" "$TT/byhandle.c"
	expect "sandbox: cannot open .git/config by its handle (root)" 1 wap exec --sandbox -- ./byhandle
	has "sandbox: open_by_handle_at refused by seccomp" "$ERR" "open_by_handle_at: Permission denied"
	rm -f "$W/byhandle"
else
	ok "# SKIP open_by_handle_at: no gcc"
fi
expect "sandbox: the rest of the root stays writable" 0 wap exec --sandbox -- sh -c 'echo x > sub/w && cat sub/w'
expect "sandbox: git still reads its repository" 0 wap exec --sandbox -- git status --short

# network off means off: only unix sockets are made, abstract ones reach
# nothing outside the sandbox
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0wap-test-'"$tag"'"); s.listen(4)
t = socket.socket(); t.setsockopt(socket.SOL_TCP, 23, 5); t.bind(("127.0.0.1", 0)); t.listen(8)
open(sys.argv[1], "w").write(str(t.getsockname()[1])); time.sleep(20)' "$TT/nport" & lp=$!
wait_for 30 [ -s "$TT/nport" ]
net='
import errno, socket, sys
port = int(sys.argv[1])
def try_(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def tfo():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendto(b"GET / HTTP/1.0\r\n\r\n", 0x20000000, ("127.0.0.1", port))
def tfo_connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, 30, 1)
    s.connect(("127.0.0.1", port))
def autobind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.listen(1)
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port))
def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
def netlink():
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
def vsock():
    socket.socket(40, socket.SOCK_STREAM)
def abstract():
    s = socket.socket(socket.AF_UNIX); s.connect("\0wap-test-'"$tag"'")
try_("tfo", tfo); try_("tfo_connect", tfo_connect); try_("autobind", autobind)
try_("udp", udp); try_("raw", raw); try_("netlink", netlink); try_("vsock", vsock)
try_("abstract", abstract)
try_("unix", lambda: socket.socketpair())'
expect "network: the probes run without --no-network" 0 wap exec -- /usr/bin/python3 -c "$net" "$(cat "$TT/nport")"
has "network: control reaches the listener" "$OUT" "tfo_connect ok"
has "network: control reaches the abstract socket" "$OUT" "abstract ok"
expect "network: --no-network probes" 0 wap exec --no-network -- /usr/bin/python3 -c "$net" "$(cat "$TT/nport")"
# abstract unix sockets are scoped from Landlock ABI 6 on
[ "$abi" -ge 6 ] && abs=EPERM || abs=ok
same "network: every non-unix socket refused, abstract unix scoped (ABI $abi)" "$OUT" "tfo EACCES
tfo_connect EACCES
autobind EACCES
udp EACCES
raw EACCES
netlink EACCES
vsock EACCES
abstract $abs
unix ok"
kill $lp 2>/dev/null; wait $lp 2>/dev/null

# command lists hold in the kernel: a denied program cannot be run by any
# shell trick, and nothing is run from the workspace or the temp dir.
# Each form runs from a script file (which the line parser cannot see
# into), first without a list (the control: it reaches curl), then with.
printf '{"security":{"restrictedCommands":["curl"]}}' > "$TT/deny.json"
printf '{"security":{"allowedCommands":["bash","sh","ls","cat","env","flock","watch","timeout","cp","chmod"]}}' > "$TT/allow.json"
bypass() {
	d=$1; printf '%s\n' "$2" > "$W/b.sh"
	rm -f "$W/o.txt"
	wap exec --timeout 20000 -- bash b.sh > "$T/out" 2>&1
	if ! cat "$T/out" "$W/o.txt" 2>/dev/null | grep -q libcurl; then fail "$d: the control did not reach curl: $(head -c 300 "$T/out")"; return; fi
	for list in deny allow; do
		rm -f "$W/o.txt" "$W/c"
		wap exec --timeout 20000 --config "$TT/$list.json" -- bash b.sh > "$T/out" 2>&1
		if cat "$T/out" "$W/o.txt" 2>/dev/null | grep -q libcurl; then
			fail "$d ($list-list): curl ran"
		elif grep -q -e "Permission denied" -e "Operation not permitted" "$T/out" "$W/o.txt" 2>/dev/null; then
			ok "$d ($list-list): refused by the kernel"
		else
			fail "$d ($list-list): no curl, but no refusal either: $(head -c 300 "$T/out")"
		fi
	done
}
if [ -x /usr/bin/curl ]; then
	bypass "env -S" "env -S 'curl --version'"
	bypass "eval of a computed name" 'c=cu; eval "${c}rl --version"'
	bypass '${x@P}' 'x="\$(curl --version)"; echo "${x@P}"'
	bypass "PS4" 'PS4="\$(curl --version >&2)"; set -x; true'
	command -v flock >/dev/null && bypass "flock -c" "flock lk -c 'curl --version'"
	# each run of watch's command is a new sh, so $$ differs and -g ends
	# watch after the second run; the timeout is only a guard
	command -v watch >/dev/null && bypass "watch" "TERM=dumb timeout 30 watch -n 0.5 -g 'curl --version > o.txt 2>&1; echo \$\$'"
	bypass "hash -p" 'hash -p /usr/bin/curl x; x --version'
	bypass ". <(...)" '. <(echo curl --version)'
	bypass "alias" "$(printf 'shopt -s expand_aliases\nalias x=curl\nx --version')"
	bypass "a copied binary" 'cp /usr/bin/curl ./c && ./c --version'
	bypass "a copy in the temp dir" 'cp /usr/bin/curl "$TMPDIR/c" && "$TMPDIR/c" --version'
	bypass "the dynamic loader" 'for l in /lib64/ld-linux-*.so.* /lib/ld-linux-*.so.*; do [ -e "$l" ] && exec "$l" /usr/bin/curl --version; done'
	bypass "a symlink" 'ln -sf /usr/bin/curl l && ./l --version'
	bypass "PATH from --env" 'PATH=/usr/local/bin:/usr/bin curl --version'
else
	ok "# SKIP the bypass forms need /usr/bin/curl"
fi
expect "policy: memfd_create is refused under a list" 1 wap exec --config "$TT/deny.json" -- /usr/bin/python3 -c 'import os; os.memfd_create("x")'
has "policy: memfd_create EACCES" "$ERR" "Permission denied"
if command -v gcc >/dev/null && [ -e /lib64/ld-linux-x86-64.so.2 ]; then
	printf 'int main(void) { return 42; }\n' > "$W/p.c"
	expect "policy control: a program built in the workspace runs without a list" 42 wap exec --sandbox -c 'gcc -o p p.c && ./p'
	expect "policy: nothing in the workspace runs under a list" 126 wap exec --config "$TT/deny.json" -c 'gcc -o p p.c && ./p'
	expect "policy: nor through the dynamic loader (noexec mount)" 127 wap exec --config "$TT/deny.json" -c 'exec /lib64/ld-linux-x86-64.so.2 ./p'
	has "policy: the loader cannot map it" "$ERR" "failed to map segment"
	rm -f "$W/p" "$W/p.c"
else
	ok "# SKIP programs built in the workspace: no gcc or not x86-64"
fi
# links in the PATH dirs: a refused name's link leads to its target's dir,
# which then gets a rule a file (the link's target stays refused there),
# whether the link is relative, absolute or a chain through a link beside it;
# a link to a file beside it is that file
if [ "$(id -u)" = 0 ] && [ -d /opt ]; then
	ob=$(mktemp -d /opt/wap-lists.XXXXXX)
	mkdir -p "$ob/bin" "$ob/lib"
	for f in "$ob/lib/rel" "$ob/lib/abs" "$ob/lib/chain" "$ob/bin/beside" "$ob/lib/fine"; do
		cp /bin/true "$f"
	done
	ln -s ../lib/rel "$ob/bin/badrel"
	ln -s "$ob/lib/abs" "$ob/bin/badabs"
	ln -s ../lib/chain "$ob/bin/mid"
	ln -s mid "$ob/bin/badchain"
	ln -s beside "$ob/bin/badbeside"
	ln -s beside "$ob/bin/okbeside"
	chmod -R a+rX "$ob"
	printf '{"security":{"restrictedCommands":["badrel","badabs","badchain","badbeside"]}}' > "$TT/links.json"
	for t in rel abs chain; do
		expect "policy: a refused $t link's target is refused too" 125 wap exec --config "$TT/links.json" --env PATH="$ob/bin:/usr/bin" -- "$ob/lib/$t"
	done
	expect "policy: a refused link to a file beside it: that file is refused" 125 wap exec --config "$TT/links.json" --env PATH="$ob/bin:/usr/bin" -- "$ob/bin/beside"
	expect "policy: and so is every name for it" 125 wap exec --config "$TT/links.json" --env PATH="$ob/bin:/usr/bin" -- okbeside
	expect "policy: a file beside the refused ones still runs" 0 wap exec --config "$TT/links.json" --env PATH="$ob/bin:/usr/bin" -- "$ob/lib/fine"
	printf '{"security":{"allowedCommands":["okbeside"]}}' > "$TT/links-ok.json"
	expect "policy: an allowed link to a file beside it runs" 0 wap exec --config "$TT/links-ok.json" --env PATH="$ob/bin:/usr/bin" -- okbeside
	rm -rf "$ob"
else
	ok "# SKIP links in a system dir: not root, or no /opt"
fi
# a server keeps the lists' layer from one command to the next
# (landlock.c): what changed on disk since must count.  A link turned as
# update-alternatives turns it makes its new target the refused one and
# frees the old; a program installed in a PATH dir since runs.  Each step
# waits a second after the change it follows, so the layer made after it
# is kept (a dir changed in the last second is not trusted to show a
# later change) and the next command runs under the kept one.
if [ "$(id -u)" = 0 ] && [ -d /opt ]; then
	ob=$(mktemp -d /opt/wap-lists.XXXXXX)
	mkdir -p "$ob/bin" "$ob/alt" "$ob/lib"
	cp /bin/echo "$ob/lib/v1"; cp /bin/echo "$ob/lib/v2"
	ln -s "$ob/alt/tool" "$ob/bin/tool"
	ln -s "$ob/lib/v1" "$ob/alt/tool"
	chmod -R a+rX "$ob"
	printf '{"security":{"restrictedCommands":["tool"]}}' > "$TT/alt.json"
	printf 'exec "$@"\n' > "$W/run.sh"
	cat > "$TT/alt.py" <<'EOF2'
import subprocess, sys, time
from wapstdio import Stdio
wap, root, cfg, ob = sys.argv[1:5]
s = Stdio([wap, "serve", "--root", root, "--config", cfg])
call = s.call
call("initialize", protocolVersion="2025-06-18", capabilities={})
for step in sys.argv[5:]:
    if step.startswith("$ "):
        subprocess.run(step[2:], shell=True, check=True)
        time.sleep(1.2)
        continue
    r = call("tools/call", name="exec", arguments={"command": "bash run.sh " + step,
                                                     "env": {"PATH": ob + "/bin:/usr/bin:/bin"}})
    res = r.get("result", {}).get("structuredContent") or r
    print(("%s %s" % (res.get("exit_code"), res.get("stdout", ""))).strip())
s.close()
EOF2
	sleep 1.2
	out=$(python3 "$TT/alt.py" "$WAP" "$W" "$TT/alt.json" "$ob" "tool a" "$ob/lib/v2 b" \
		"\$ ln -sfn $ob/lib/v2 $ob/alt/tool.new && mv -T $ob/alt/tool.new $ob/alt/tool" \
		"$ob/lib/v2 c" "tool d" "$ob/lib/v1 e" \
		"\$ cp /bin/echo $ob/bin/fresh" "fresh f" "$ob/lib/v1 g" 2>&1)
	same "policy: a kept list layer sees a link turned and a program installed" "$out" "126
0 b
126
126
0 e
0 f
0 g"
	rm -rf "$ob" "$W/run.sh"
else
	ok "# SKIP a kept list layer: not root, or no /opt"
fi
printf 'wap secret\n' > "$TT/held.txt"
exec 7< "$TT/held.txt"	# wap holds it open: PATH=/proc/self/fd must not name it
expect "policy: PATH through /proc grants nothing" 1 wap exec --config "$TT/deny.json" --env PATH=/proc/self/fd:/usr/bin -- cat "$TT/held.txt"
exec 7<&-
expect "policy: allowed commands still run" 0 wap exec --config "$TT/deny.json" -- bash -c 'ls >/dev/null && git --version && cat b.sh >/dev/null'
expect "policy: allow-list commands run" 0 wap exec --config "$TT/allow.json" -c 'ls >/dev/null && cat b.sh > /dev/null'
expect "policy: no Landlock, no run (a list needs the sandbox)" 15 env WAP_LANDLOCK_ABI=0 wap exec --config "$TT/deny.json" -- true
has "policy: the refusal says why" "$ERR" "Sandbox unavailable"

# terminals get the same sandbox; text sent in chunks cannot reassemble a
# denied command
cat > "$TT/term.py" <<'EOF2'
import json, sys
from wapstdio import Stdio
s = Stdio([sys.argv[1], "serve", "--profile", "acp", "--root", sys.argv[2], "--config", sys.argv[3]])
call = s.call
cmd = json.loads(sys.argv[4]) if sys.argv[4].startswith("[") else ["bash", "-c", sys.argv[4]]
r = call("terminal/create", sessionId="s", command=cmd[0], args=cmd[1:])
if "error" in r:
    print(json.dumps(r)); sys.exit(0)
tid = r["result"]["terminalId"]
call("terminal/wait_for_exit", sessionId="s", terminalId=tid)
print(json.dumps(call("terminal/output", sessionId="s", terminalId=tid)["result"]["output"]))
s.close()
EOF2
printf '{"security":{"readOnly":true}}' > "$TT/ro.json"
out=$(python3 "$TT/term.py" "$WAP" "$W" "$TT/ro.json" 'echo x > term-ro.txt; echo done' 2>&1)
check "terminal/create under readOnly: the root is not written" test ! -e "$W/term-ro.txt"
has "terminal/create under readOnly: refused (the root is mounted read-only)" "$out" "Read-only file system"
printf '{"security":{"sandbox":true}}' > "$TT/sb.json"
out=$(python3 "$TT/term.py" "$WAP" "$W" "$TT/sb.json" 'echo x > .git/hooks/pre-push; echo done' 2>&1)
check "terminal: .git read-only" test ! -e "$W/.git/hooks/pre-push"
out=$(python3 "$TT/term.py" "$WAP" "$W" "$TT/sb.json" '["env", "-S", "curl --version"]' 2>&1)
has "terminal/create control: curl runs without a list" "$out" "libcurl"
out=$(python3 "$TT/term.py" "$WAP" "$W" "$TT/deny.json" '["env", "-S", "curl --version"]' 2>&1)
lacks "terminal/create with restrictedCommands: env -S curl does not run" "$out" "libcurl"
has "  ... refused by the lists' reading of the whole command line" "$out" "COMMAND_RESTRICTED"
out=$(python3 "$TT/term.py" "$WAP" "$W" "$TT/deny.json" '["python3", "-c", "import os; os.execv(\"/usr/bin/cu\" + \"rl\", [\"curl\", \"--version\"])"]' 2>&1)
lacks "terminal/create with restrictedCommands: curl run by an allowed program does not run" "$out" "libcurl"
has "terminal/create: refused by the kernel" "$out" "Permission denied"
# Agent Control terminal.sendText: "cu" then "rl --version" (each piece
# passes the line check; the kernel refuses the program)
WSDIR=$(cd "$(dirname "$0")/ws" && pwd)
if [ -d "$WSDIR/node_modules/ws" ] && command -v node >/dev/null; then
	cat > "$TT/chunks.js" <<EOF2
const { Client, sleep } = require('$WSDIR/client');
(async () => {
  const [port, token] = process.argv.slice(2);
  const c = await new Client('ws://127.0.0.1:' + port).open();
  await c.auth(token);
  const r = await c.call('terminal.create', {});
  const id = r.result && r.result.terminalId;
  if (!id) { console.log(JSON.stringify(r)); process.exit(0); }
  let out = '';
  c.waiters.push({ check: () => { for (const m of c.notes.splice(0)) if (m.method === 'terminal.output') out += m.params.data; } });
  await c.call('terminal.sendText', { terminalId: id, text: 'cu', addNewLine: false });
  await c.call('terminal.sendText', { terminalId: id, text: 'rl --version; echo end-of-test' });
  for (let i = 0; i < 100 && !/(^|\n)end-of-test\r?\n/.test(out); i++) await sleep(100);
  console.log(JSON.stringify(out));
  await c.close();
  process.exit(0);
})();
EOF2
	for cfg in sb deny; do
		SHELL=/bin/bash wap serve --ws 127.0.0.1:0 --token-file "$TT/tok.$cfg" --root "$W" --config "$TT/$cfg.json" 2>"$TT/ws.$cfg.log" & sp=$!
		port=
		for i in $(seq 50); do
			port=$(sed -n 's/.*on ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TT/ws.$cfg.log"); [ -n "$port" ] && break; sleep 0.1
		done
		out=$(node "$TT/chunks.js" "$port" "$(cat "$TT/tok.$cfg")" 2>&1)
		kill $sp; wait $sp 2>/dev/null
		if [ $cfg = sb ]; then
			has "terminal.sendText control: curl in two chunks runs without a list" "$out" "libcurl"
		else
			lacks "terminal.sendText in chunks: curl does not run under restrictedCommands" "$out" "libcurl"
			has "terminal.sendText in chunks: refused by the kernel" "$out" "Permission denied"
		fi
	done
else
	ok "# SKIP terminal.sendText in chunks: no node or tests/ws/node_modules (npm ci in tests/ws)"
fi
rm -rf "$W/.git" "$W/.wap" "$W/sub/nested" "$W/lvl1" "$W/sub/wt" "$W/b.sh" "$W/lk" "$W/l"
fi

# ---- wap serve sandboxes a client's commands by default ----
if [ "${abi:-0}" -ge 1 ]; then
	OUTSIDE=$(mktemp -d /tmp/wap-serve-out.XXXXXX)
	call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"echo x > '"$OUTSIDE"'/f; echo x > .git/hooks-planted; echo rc=$?"}}}'
	mkdir -p "$W/.git"
	out=$(printf '%s\n' "$call" | wap serve --drain --root "$W" 2>&1)
	check "serve: an MCP exec cannot write outside the root by default" test ! -e "$OUTSIDE/f"
	check "serve: nor plant a file in .git" test ! -e "$W/.git/hooks-planted"
	has "serve: the outside is not there for the command (its view)" "$out" "$OUTSIDE/f: No such file or directory"
	has "serve: .git is the kernel's read-only" "$out" ".git/hooks-planted: Read-only file system"
	out=$(printf '%s\n' "$call" | wap serve --drain --no-sandbox --root "$W" 2>&1)
	check "serve --no-sandbox: the invoker's choice runs unconfined" test -e "$OUTSIDE/f"
	rm -f "$OUTSIDE/f" "$W/.git/hooks-planted"
	echo '{"security": {"sandbox": false}}' > "$T/nosb.json"
	out=$(printf '%s\n' "$call" | wap serve --drain --config "$T/nosb.json" --root "$W" 2>&1)
	check "serve: security.sandbox false in the invoker's config turns it off" test -e "$OUTSIDE/f"
	rm -rf "$OUTSIDE" "$W/.git"
else
	ok "# SKIP serve's default sandbox: no Landlock"
fi
