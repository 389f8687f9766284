#!/bin/sh
# bench/exec.sh - overhead of running a command: `wap exec -- true` against
# `sh -c true` and Node's child_process.spawnSync, as whole processes
# (hyperfine) and per call inside a warm process (wap_proc_run vs spawnSync).
# timeout(1) is there as the nearest peer: it too forks, runs the command in
# a process group and waits.  The machine is shared, so hyperfine runs in
# ROUNDS rounds (default 3) and the ratios are taken per round.
# Usage: bench/exec.sh [WAP]   (from the source tree; needs hyperfine, node)
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
wap=$(cd "$(dirname "${1:-./wap}")" && pwd)/$(basename "${1:-./wap}")
runs=${RUNS:-200}
rounds=${ROUNDS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# linked as wap is (Makefile: -z now, every symbol bound at start; relative
# relocations packed)
cc -O2 -D_GNU_SOURCE -Wl,-z,now -Wl,-z,pack-relative-relocs $(for d in lib/*/; do printf -- '-I%s ' "$d"; done) -Ibuild/norm \
	-o "$out/exec_loop" bench/exec_loop.c build/norm/libwap.a \
	$(pkg-config --libs libgit2 libpcre2-8 libarchive jansson libwebsockets nettle) -lcap -ldl -lutil -lpthread
cc -O2 -o "$out/pidns" bench/pidns.c
mkdir -p "$out/ws"
cd "$out/ws"
r=1
while [ "$r" -le "$rounds" ]; do
	hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/h$r.json" \
		"$wap exec -- /bin/true" "sh -c true" "node $src/bench/spawnsync.js 1" \
		"timeout 30 /bin/true" >&2
	r=$((r + 1))
done
cd "$src"
loop_wap=$("$out/exec_loop" 1000)
loop_sb=$(cd "$out/ws" && "$out/exec_loop" 1000 --sandbox)
loop_list=$(cd "$out/ws" && "$out/exec_loop" 300 --sandbox --deny curl)
# the PID namespace alone (root): vfork+exec+wait, with a namespace and its
# init supervising, with the command our own child and the init idle, with
# one init kept for every command (a wap serve thread's)
ns=-
[ "$(id -u)" = 0 ] && ns="$("$out/pidns" 0 1000) $("$out/pidns" 1 1000) $("$out/pidns" 2 1000) $("$out/pidns" 3 1000)"
loop_node=$(node bench/spawnsync.js 1000)
# not root (as nobody, where we are root): the user namespace's path
nb=- nbsb=-
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$out" && chmod 777 "$out/ws"
	asnobody() { (cd "$out/ws" && setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME="$out/ws" XDG_CONFIG_HOME="$out/ws" "$@"); }
	nb=$(asnobody "$out/exec_loop" 1000) nbsb=$(asnobody "$out/exec_loop" 1000 --sandbox)
fi
python3 - "$loop_wap" "$loop_node" "$loop_sb" "$nb" "$nbsb" "$loop_list" "$ns" "$out"/h*.json <<'PY'
import json, sys, statistics
names = ["wap exec -- /bin/true", "sh -c true", "node spawnSync.js (startup included)",
         "timeout 30 /bin/true"]
rounds = [[r["median"] * 1000 for r in json.load(open(f))["results"]] for f in sys.argv[8:]]
print("whole process, hyperfine medians in ms (one column per round):")
for i, n in enumerate(names):
    print("  %-38s %s" % (n, "  ".join("%7.2f" % r[i] for r in rounds)))
def ratio(a, b):
    return statistics.median(r[a] / r[b] for r in rounds)
print("ratios (median over rounds):")
print("  wap exec / sh -c true        %6.2fx" % ratio(0, 1))
print("  wap exec / timeout /bin/true %6.2fx" % ratio(0, 3))
print("  node spawnSync.js / wap exec %6.1fx" % ratio(2, 0))
w, n, sb = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print("per call in a warm process (median of 1000 calls):")
print("  wap_proc_run(/bin/true)      %7.1f us" % w)
print("  the same, sandboxed          %7.1f us  (wap exec --sandbox, wap serve's default)" % sb)
print("  the same, restrictedCommands %7.1f us  (a list: [\"curl\"])" % float(sys.argv[6]))
print("  node spawnSync('/bin/true')  %7.1f us" % n)
print("  node / wap                   %6.2fx" % (n / w))
print("  wap / node                   %6.3fx   sandboxed %.3fx" % (w / n, sb / n))
if sys.argv[7] != "-":
    a, b, c, d = (float(v) for v in sys.argv[7].split())
    print("a PID namespace alone (bench/pidns.c, /bin/true, median of 1000):")
    print("  vfork+exec+wait              %7.1f us" % a)
    print("  in a namespace, init waits   %7.1f us  (+%.0f us: what wap pays)" % (b, b - a))
    print("  the command our own child    %7.1f us  (+%.0f us: one hand-off less)" % (c, c - a))
    print("  one init kept, as a thread's %7.1f us  (%+.0f us: wap serve's road)" % (d, d - a))
if sys.argv[4] != "-":
    nb, nbsb = float(sys.argv[4]), float(sys.argv[5])
    print("as nobody (not root: user and PID namespaces made by clone):")
    print("  wap_proc_run(/bin/true)      %7.1f us  %.3fx node" % (nb, nb / n))
    print("  the same, sandboxed          %7.1f us  %.3fx node" % (nbsb, nbsb / n))
PY
