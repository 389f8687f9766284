#!/bin/sh
# bench/scale.sh - how wap grep and wap glob grow with the tree, and wap
# grep of one 2 GB file, against ripgrep and fd in the same run.
#
#   bench/scale.sh                  both parts
#   PART=tree bench/scale.sh        only the 1x/2x/4x trees
#   PART=big bench/scale.sh         only the 2 GB file
#   ROUNDS=3 RUNS=3 J=2 BUSY=0      rounds, runs a round, threads, busy procs
#
# Trees: SCALE/x1, x2, x4 hold 1, 2 and 4 hard-linked copies of the Linux
# 6.1 source tree (bench/search.sh's corpus): the same bytes, cached once,
# so the growth measured is the tools' own, not the disk's.  Each is
# searched with `grep PM_RESUME` and listed with `glob '**/*.c'` (newest
# first, so every .c file is stat'ed); rg -uu and fd -HI beside them.  The
# slope is the least-squares time per copy; "t4/t1" near 4 is linear.
#
# Big file: SCALE/big/big.txt, the tree's .c files concatenated up to 2 GiB.
# `wap grep -m0 PM_RESUME big.txt` against `rg -n -H PM_RESUME big.txt` (the
# same lines; rg maps a single file, --no-mmap as a second peer reads it),
# timed with hyperfine,
# and the peak resident size of each from /usr/bin/time -v (a mapped file's
# touched pages count as resident).  The outputs are compared line for line.
#
# Commands alternate (hyperfine with every tool in one call, ROUNDS times);
# the table gives medians of the round medians, the ratio wap/peer and the
# load average (1 min) while each row was timed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
WAP=${WAP:-$here/wap}
CORPUS=${CORPUS:-/work/corpus/linux-source-6.1}
SCALE=${SCALE:-$(dirname "$CORPUS")/wap-scale}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
J=${J:-2}
PART=${PART:-tree big}
BUSY=${BUSY:-0}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wap-scale.XXXXXX")}
mkdir -p "$OUT"
# REPORT=1 OUT=DIR: only print the tables of the run kept in DIR
[ "${REPORT:-0}" = 1 ] && PART= BUSY=0

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench: $1 is needed ($2)" >&2; exit 2; }; }
need hyperfine "apt-get install hyperfine"
need rg "apt-get install ripgrep"
need fdfind "apt-get install fd-find"
need python3 "apt-get install python3"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
[ -x "$WAP" ] || { echo "bench: build wap first (make)" >&2; exit 2; }
[ -d "$CORPUS" ] || { echo "bench: no corpus at $CORPUS (run bench/search.sh once)" >&2; exit 2; }

busy_pids=
stop_busy() { for p in $busy_pids; do kill "$p" 2>/dev/null || true; done; busy_pids=; }
trap stop_busy EXIT INT TERM
k=0
while [ "$k" -lt "$BUSY" ]; do
	sh -c 'while :; do :; done' &
	busy_pids="$busy_pids $!"
	k=$((k + 1))
done

# ROWNAME DIR NAME CMD NAME CMD...: one alternating hyperfine call a round
timeit() {
	row=$1 dir=$2; shift 2
	python3 - "$row" "$dir" "$OUT" "$ROUNDS" "$RUNS" "$@" <<'PY'
import json, subprocess, sys
row, d, out, rounds, runs = sys.argv[1:6]
cmds = sys.argv[6:]
for rnd in range(int(rounds)):
    args = ["hyperfine", "-N", "--output=pipe", "-i", "--warmup", "1", "--runs", runs,
            "--export-json", f"{out}/h.json"]
    for k in range(0, len(cmds), 2):
        args += ["-n", cmds[k], cmds[k + 1]]
    load0 = float(open("/proc/loadavg").read().split()[0])
    subprocess.run(args, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    load = (load0 + float(open("/proc/loadavg").read().split()[0])) / 2
    with open(f"{out}/results.tsv", "a") as fh:
        for r in json.load(open(f"{out}/h.json"))["results"]:
            cpu = r["user"] + r["system"]
            fh.write(f"{row}\t{r['command']}\t{rnd}\t{r['median']}\t{cpu}\t{load:.2f}\n")
PY
}

warm() { rg -uuu --no-config -c zzz_no_such_text_zzz "$1" >/dev/null 2>&1 || true; }

[ "${REPORT:-0}" = 1 ] || : > "$OUT/results.tsv"
case " $PART " in *" tree "*)
	for n in 1 2 4; do
		d=$SCALE/x$n
		if [ ! -d "$d/c$n" ]; then
			echo "bench: making $d ($n hard-linked copies)" >&2
			rm -rf "$d"
			mkdir -p "$d"
			k=1
			while [ "$k" -le "$n" ]; do
				cp -al "$CORPUS" "$d/c$k"
				k=$((k + 1))
			done
		fi
	done
	for n in 1 2 4; do
		d=$SCALE/x$n
		warm "$d"
		# the same match sets: files and lines, sorted
		(cd "$d" && "$WAP" grep -j"$J" --no-ignore --no-default-excludes -m0 PM_RESUME) |
			sort > "$OUT/w.grep" || true
		(cd "$d" && rg -j"$J" -uu --no-config -n --no-heading PM_RESUME .) |
			sed 's|^\./||' | sort > "$OUT/r.grep" || true
		cmp -s "$OUT/w.grep" "$OUT/r.grep" || echo "bench: x$n: grep output differs from rg's" >&2
		(cd "$d" && "$WAP" glob -j"$J" --no-ignore --no-default-excludes -m0 '**/*.c') | sort > "$OUT/w.glob"
		(cd "$d" && fdfind -j"$J" -HI -e c) | sort > "$OUT/f.glob"
		cmp -s "$OUT/w.glob" "$OUT/f.glob" || echo "bench: x$n: glob output differs from fd's" >&2
		timeit "grep PM_RESUME x$n" "$d" \
			wap "$WAP grep -j$J --no-ignore --no-default-excludes -m0 PM_RESUME" \
			rg "rg -j$J -uu --no-config -n PM_RESUME"
		timeit "glob **/*.c x$n" "$d" \
			wap "$WAP glob -j$J --no-ignore --no-default-excludes -m0 **/*.c" \
			fd "fdfind -j$J -HI -e c"
	done
;; esac

case " $PART " in *" big "*)
	B=$SCALE/big
	if [ ! -s "$B/big.txt" ]; then
		echo "bench: making $B/big.txt (2 GiB of the tree's .c files)" >&2
		mkdir -p "$B"
		python3 - "$CORPUS" "$B/big.txt" <<'PY'
import os, sys
root, dst = sys.argv[1:3]
want, n = 2 << 30, 0
files = []
for d, _, fs in os.walk(root):
    files += [os.path.join(d, f) for f in fs if f.endswith(".c")]
files.sort()
with open(dst, "wb") as o:
    while n < want:
        for f in files:
            b = open(f, "rb").read()
            if b"\0" in b:
                continue
            b = b[: want - n]
            o.write(b)
            n += len(b)
            if n >= want:
                break
PY
	fi
	cat "$B/big.txt" > /dev/null
	(cd "$B" && "$WAP" grep -m0 PM_RESUME big.txt) > "$OUT/w.big"
	(cd "$B" && rg --no-config -n --with-filename PM_RESUME big.txt) > "$OUT/r.big"
	if cmp -s "$OUT/w.big" "$OUT/r.big"; then same=yes; else same=NO; fi
	: > "$OUT/rss.tsv"
	for t in wap rg rg-no-mmap; do
		case $t in
		wap) c="$WAP grep -m0 PM_RESUME big.txt" ;;
		rg) c="rg --no-config -n -H PM_RESUME big.txt" ;;
		*) c="rg --no-config -n -H --no-mmap PM_RESUME big.txt" ;;
		esac
		(cd "$B" && /usr/bin/time -v $c > /dev/null 2> "$OUT/time.$t") || true
		rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$OUT/time.$t")
		printf '%s\t%s\n' "$t" "$((rss / 1024))" >> "$OUT/rss.tsv"
	done
	timeit "grep 2 GiB file" "$B" \
		wap "$WAP grep -m0 PM_RESUME big.txt" \
		rg "rg --no-config -n -H PM_RESUME big.txt" \
		"rg --no-mmap" "rg --no-config -n -H --no-mmap PM_RESUME big.txt"
	echo "big file: $(wc -c < "$B/big.txt") bytes, $(wc -l < "$OUT/w.big") matching lines, same lines as rg -n: $same" >&2
;; esac
stop_busy

python3 - "$OUT" "$J" <<'PY'
import os, re, statistics, sys
from collections import OrderedDict
out, j = sys.argv[1:3]
rows = [l.rstrip("\n").split("\t") for l in open(f"{out}/results.tsv") if l.strip()]
data, loads = OrderedDict(), {}
for row, tool, rnd, med, cpu, load in rows:
    data.setdefault(row, OrderedDict()).setdefault(tool, []).append((float(med), float(cpu)))
    loads.setdefault(row, []).append(float(load))
med = lambda v, k: statistics.median(x[k] for x in v)
print(f"| query (-j{j}) | wap | peer | peer time | wap/peer | wap/peer CPU | load |")
print("|---|---|---|---|---|---|---|")
for row, tools in data.items():
    w = tools["wap"]
    for k, (t, v) in enumerate((t, v) for t, v in tools.items() if t != "wap"):
        print(f"| {row if k == 0 else ''} | {med(w,0)*1000:.0f} ms | {t} | {med(v,0)*1000:.0f} ms "
              f"| {med(w,0)/med(v,0):.2f}x | {med(w,1)/med(v,1):.2f}x | "
              f"{statistics.median(loads[row]):.1f} |")
# slope: least squares of time on copies, per tool and query
fits = OrderedDict()
for row, tools in data.items():
    m = re.match(r"(.*) x(\d+)$", row)
    if not m:
        continue
    for t, v in tools.items():
        fits.setdefault((m.group(1), t), []).append((int(m.group(2)), med(v, 0), med(v, 1)))
def slope(pts):
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x in xs)
if fits:
    # CPU time (user + system) too: on a busy machine it is the steadier
    print()
    print("| query | tool | 1x | 2x | 4x | slope (ms per copy) | t4/t1 | CPU 1x / 2x / 4x | CPU t4/t1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (q, t), pts in fits.items():
        pts.sort()
        sl = slope([(p[0], p[1]) for p in pts])
        by = {p[0]: p[1] for p in pts}
        bc = {p[0]: p[2] for p in pts}
        cells = " | ".join(f"{by[n]*1000:.0f} ms" if n in by else "" for n in (1, 2, 4))
        cc = " / ".join(f"{bc[n]*1000:.0f}" if n in bc else "" for n in (1, 2, 4))
        r = f"{by[4]/by[1]:.2f}" if 1 in by and 4 in by else ""
        rc = f"{bc[4]/bc[1]:.2f}" if 1 in bc and 4 in bc else ""
        print(f"| `{q}` | {t} | {cells} | {sl*1000:.0f} | {r} | {cc} ms | {rc} |")
if os.path.exists(f"{out}/rss.tsv"):
    print()
    print("| 2 GiB file | peak RSS |")
    print("|---|---|")
    for l in open(f"{out}/rss.tsv"):
        t, mb = l.split()
        print(f"| {t} | {mb} MB |")
PY
echo "(raw data: $OUT)" >&2
