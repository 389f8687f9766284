#!/bin/sh
# bench/exec.sh - overhead of running a command: `wap exec -- true` against
# `sh -c true` and Node's child_process.spawnSync, as whole processes
# (hyperfine) and per call inside a warm process (wap_proc_run vs spawnSync).
# timeout(1) is there as the nearest peer: it too forks, runs the command in
# a process group and waits.
# Usage: bench/exec.sh [WAP]   (from the source tree; needs hyperfine, node)
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
wap=$(cd "$(dirname "${1:-./wap}")" && pwd)/$(basename "${1:-./wap}")
runs=${RUNS:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -D_GNU_SOURCE -Ilib -o "$out/exec_loop" bench/exec_loop.c build/norm/libwap.a \
	$(pkg-config --libs libgit2 libpcre2-8 libarchive jansson libwebsockets) -lpthread
cd "$out" && mkdir -p ws && cd ws
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/h.json" \
	"$wap exec -- /bin/true" "sh -c true" "node $src/bench/spawnsync.js 1" \
	"timeout 30 /bin/true" >&2 \
	|| hyperfine --warmup 20 --runs "$runs" --export-json "$out/h.json" \
	"$wap exec -- /bin/true" "sh -c true" "node $src/bench/spawnsync.js 1" \
	"timeout 30 /bin/true" >&2
cd "$src"
loop_wap=$("$out/exec_loop" 1000)
loop_node=$(node bench/spawnsync.js 1000)
python3 - "$out/h.json" "$loop_wap" "$loop_node" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["results"]
med = [r["median"] * 1000 for r in h]
names = ["wap exec -- true", "sh -c true", "node spawnSync (startup included)",
         "timeout 30 /bin/true (coreutils)"]
print("whole process (hyperfine, median ms):")
for n, m in zip(names, med):
    print("  %-36s %7.2f ms  (%.2fx sh)" % (n, m, m / med[1]))
print("  wap exec / sh -c: %.2fx; node / wap exec: %.1fx" % (med[0] / med[1], med[2] / med[0]))
w, n = float(sys.argv[2]), float(sys.argv[3])
print("per call in a warm process (median of 1000, us):")
print("  wap_proc_run(/bin/true)              %7.1f us" % w)
print("  node spawnSync('/bin/true')          %7.1f us" % n)
print("  node / wap: %.2fx" % (n / w))
PY
