#!/bin/sh
# bench/search.sh - wap grep / wap glob against ripgrep, GNU grep, fd and
# find on the Linux 6.1 source tree (Debian's linux-source-6.1), same
# queries, same run, with hyperfine.
#
#   bench/search.sh                 every query: 2 threads, then -j1, then git
#   ROUNDS=7 bench/search.sh        more rounds
#   ONLY=PM_RESUME bench/search.sh  queries whose name contains the word
#   ONLY=RESUME,resume              ... or one of the words
#   JS=2 GIT=0 bench/search.sh      only -j2; skip the git work tree part
#   bench/search.sh --busy 2        the same with 2 CPU-burning processes
#   BUSY=2 bench/search.sh          running beside every timing (a busy CI
#                                   machine); the table's threads column
#                                   says "-j2 busy2"
#
# The corpus has no .git, so ignore files do not apply to rg and fd; wap is
# run with --no-ignore --no-default-excludes and rg with -uu (hidden files,
# no ignore files), fd with -HI, so all walk the same files.  GNU grep and
# find are single-threaded and run in the -j2 pass only.
# Last part (GIT=1): the same tree as a git work tree (a hard-linked copy
# beside it, Debian's top-level .gitignore removed, `git init`), so the
# kernel's 305 .gitignore files apply: wap, rg and fd with their defaults.
#
# The "floor: walk+stat" row (bench/statfloor.c) is a bare C walk with one
# fstatat per file and nothing else: what any newest-first listing costs
# (for **/*.c one fstatat per *.c file, as wap stats only what matches).
# Peers that stat every file as wap's newest-first order must: `fd -l`
# (fd's long listing, `ls -l` in batches) and `find -printf %T@`.
#
# Output goes to a pipe (hyperfine --output=pipe): no tool can special-case
# /dev/null.  Every tool prints the same lines (path:line:text: rg and grep
# get -n, which a pipe does not turn on; rg's order differs, not its set).  Commands alternate: each round runs every query once more for
# every tool (hyperfine --warmup 1 --runs RUNS), after warming the cache;
# the reported time is the median of the round medians.  Ratio = wap / peer
# (below 1: wap is faster).
set -eu
BUSY=${BUSY:-0}
while [ $# -gt 0 ]; do
	case $1 in
	--busy) BUSY=$2; shift 2 ;;
	--busy=*) BUSY=${1#--busy=}; shift ;;
	*) echo "usage: bench/search.sh [--busy N]" >&2; exit 2 ;;
	esac
done
case $BUSY in ''|*[!0-9]*) echo "bench: --busy takes a number" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
WAP=${WAP:-$here/wap}
CORPUS=${CORPUS:-/work/corpus/linux-source-6.1}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
JS=${JS:-2 1}
GIT=${GIT:-1}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wap-bench.XXXXXX")}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench: $1 is needed ($2)" >&2; exit 2; }; }
need hyperfine "apt-get install hyperfine"
need rg "apt-get install ripgrep"
need fdfind "apt-get install fd-find"
need python3 "apt-get install python3"
[ -x "$WAP" ] || { echo "bench: build wap first (make)" >&2; exit 2; }
# the floor under the newest-first order: a bare walk with one fstatat a file
${CC:-cc} -O2 -pthread -o "$OUT/statfloor" "$here/bench/statfloor.c"

if [ ! -d "$CORPUS" ]; then
	echo "bench: building the corpus in $CORPUS" >&2
	[ -f /usr/src/linux-source-6.1.tar.xz ] || apt-get install -y linux-source-6.1 >&2
	mkdir -p "$(dirname "$CORPUS")"
	tar xf /usr/src/linux-source-6.1.tar.xz -C "$(dirname "$CORPUS")"
fi
if [ -e "$CORPUS/.git" ]; then
	echo "bench: $CORPUS has a .git; the comparison assumes none" >&2
	exit 2
fi

# warm the page cache (the machines page out idle memory)
warm() {
	rg -uuu --no-config -c 'zzz_no_such_text_zzz' . >/dev/null 2>&1 || true
	rg -uuu --no-config -c 'zzz_no_such_text_zzz' . >/dev/null 2>&1 || true
}

# One query a line: NAME<TAB>wap command<TAB>peer<TAB>peer command...
# Words are split on spaces (hyperfine -N runs no shell), so no pattern here
# holds a space and none needs quoting.
queries() {
	w=$WAP j=$1
	tab=$(printf '\t')
	one() { # NAME WAPARGS PEER PEERCMD [PEER PEERCMD]
		n=$1 a=$2; shift 2
		line="$n$tab$w $a"
		while [ $# -ge 2 ]; do
			if [ "$j" = 1 ] && { [ "$1" = grep ] || [ "$1" = "grep -E" ] || [ "$1" = find ]; }; then
				shift 2; continue
			fi
			line="$line$tab$1$tab$2"
			shift 2
		done
		printf '%s\n' "$line"
	}
	u="--no-ignore --no-default-excludes -m0"
	r="-uu --no-config"
	one 'PM_RESUME' "grep -j$j $u PM_RESUME" rg "rg -j$j $r -n PM_RESUME" grep "grep -rn PM_RESUME ."
	one '-i pm_resume' "grep -j$j $u -i pm_resume" rg "rg -j$j $r -n -i pm_resume" grep "grep -rni pm_resume ."
	one '\w+_resume\b' "grep -j$j $u \\w+_resume\\b" rg "rg -j$j $r -n \\w+_resume\\b" "grep -E" "grep -rnE \\w+_resume\\b ."
	one 'PM_RESUME|PM_SUSPEND' "grep -j$j $u PM_RESUME|PM_SUSPEND" rg "rg -j$j $r -n PM_RESUME|PM_SUSPEND" "grep -E" "grep -rnE PM_RESUME|PM_SUSPEND ."
	one '-l PM_RESUME' "grep -j$j $u -l PM_RESUME" rg "rg -j$j $r -l PM_RESUME" grep "grep -rl PM_RESUME ."
	one '-c PM_RESUME' "grep -j$j $u -c PM_RESUME" rg "rg -j$j $r -c PM_RESUME"
	one '--jsonl PM_RESUME' "grep -j$j $u --jsonl PM_RESUME" "rg --json" "rg -j$j $r --json PM_RESUME"
	g="--no-ignore --no-default-excludes -m0"
	one 'glob **/*.c' "glob -j$j $g **/*.c" "fd -e c" "fdfind -j$j -HI -e c" find "find . -name *.c" \
		"floor: walk+stat" "$OUT/statfloor -s -e .c $j" \
		"fd -e c -l" "fdfind -j$j -HI -e c -l" "find -printf %T@" "find . -name *.c -printf %T@:%p\n"
	one 'glob **/*.c --sort path' "glob -j$j $g --sort path **/*.c" "fd -e c" "fdfind -j$j -HI -e c"
	one 'glob **/*.h' "glob -j$j $g **/*.h" "fd -g" "fdfind -j$j -HI -g **/*.h" find "find . -name *.h"
	one 'glob ** (all files)' "glob -j$j $g --type f **" "fd -t f" "fdfind -j$j -HI -t f" find "find . -type f" \
		"floor: walk+stat" "$OUT/statfloor -s $j" \
		"fd -t f -l" "fdfind -j$j -HI -t f -l" "find -printf %T@" "find . -type f -printf %T@:%p\n"
	one 'glob ** (all files) --sort path' "glob -j$j $g --type f --sort path **" "fd -t f" "fdfind -j$j -HI -t f"
}

gitqueries() {
	w=$WAP j=$1
	tab=$(printf '\t')
	printf '%s\n' "git: PM_RESUME$tab$w grep -j$j -m0 PM_RESUME${tab}rg${tab}rg -j$j --no-config -n PM_RESUME"
	printf '%s\n' "git: \\w+_resume\\b$tab$w grep -j$j -m0 \\w+_resume\\b${tab}rg${tab}rg -j$j --no-config -n \\w+_resume\\b"
	printf '%s\n' "git: glob **/*.c$tab$w glob -j$j -m0 **/*.c${tab}fd -e c${tab}fdfind -j$j -e c"
	printf '%s\n' "git: glob **/*.c --sort path$tab$w glob -j$j -m0 --sort path **/*.c${tab}fd -e c${tab}fdfind -j$j -e c"
}

run_set() { # LABEL DIR GENERATOR J
	label=$1 dir=$2 gen=$3 j=$4
	cd "$dir"
	round=1
	while [ "$round" -le "$ROUNDS" ]; do
		warm
		"$gen" "$j" | while IFS= read -r line; do
			name=${line%%"$(printf '\t')"*}
			want=${ONLY:+no}
			oifs=$IFS; IFS=,; set -f
			for o in ${ONLY:-}; do
				case $name in *"$o"*) want= ;; esac
			done
			IFS=$oifs; set +f
			[ -z "$want" ] || continue
			python3 - "$label" "$line" "$OUT" "$round" "$RUNS" <<'PY'
import json, subprocess, sys
label, line, out, rnd, runs = sys.argv[1:6]
f = line.split("\t")
name = f[0]
cmds = [("wap", f[1])] + [(f[k], f[k + 1]) for k in range(2, len(f) - 1, 2)]
args = ["hyperfine", "-N", "--output=pipe", "-i", "--warmup", "1", "--runs", runs,
        "--export-json", f"{out}/h.json"]
for lab, c in cmds:
    args += ["-n", lab, c]
if rnd == "1":
    # the same output as the first peer: lines sorted ("./" dropped), or
    # for JSON messages the (path, line) of every match
    def lines(c):
        o = subprocess.run(c.split(" "), capture_output=True, stdin=subprocess.DEVNULL).stdout.decode("utf-8", "replace")
        if {"--json", "--jsonl"} & set(c.split(" ")):
            ms = set()
            for l in o.splitlines():
                m = json.loads(l)
                if m["type"] == "match":
                    d = m["data"]
                    ms.add((d["path"].get("text", "").removeprefix("./"), d["line_number"]))
            return sorted(ms)
        return sorted(l.removeprefix("./") for l in o.splitlines())
    same = lines(cmds[0][1]) == lines(cmds[1][1])
    with open(f"{out}/same.tsv", "a") as fh:
        fh.write(f"{label}\t{name}\t{cmds[1][0]}\t{'same' if same else 'DIFFERENT'}\n")
load0 = float(open("/proc/loadavg").read().split()[0])
subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
load = (load0 + float(open("/proc/loadavg").read().split()[0])) / 2
res = json.load(open(f"{out}/h.json"))["results"]
with open(f"{out}/results.tsv", "a") as fh:
    for r in res:
        fh.write(f"{label}\t{name}\t{r['command']}\t{rnd}\t{r['median']}\t{load:.2f}\t"
                 f"{r['user'] + r['system']}\n")
PY
		done
		round=$((round + 1))
	done
}

: > "$OUT/results.tsv"
# --busy N: N processes burning CPU for as long as the timings run (each a
# shell spinning on a builtin: no I/O, no memory), stopped by their pids
busy_pids=
stop_busy() {
	for p in $busy_pids; do kill "$p" 2>/dev/null || true; done
	busy_pids=
}
trap stop_busy EXIT INT TERM
k=0
while [ "$k" -lt "$BUSY" ]; do
	sh -c 'while :; do :; done' &
	busy_pids="$busy_pids $!"
	k=$((k + 1))
done
sfx=
[ "$BUSY" -gt 0 ] && sfx=" busy$BUSY"
for j in $JS; do
	run_set "-j$j$sfx" "$CORPUS" queries "$j"
done
if [ "$GIT" = 1 ]; then
	GT=$(dirname "$CORPUS")/linux-git
	if [ ! -d "$GT/.git" ]; then
		echo "bench: making the git work tree $GT (hard links)" >&2
		rm -rf "$GT"
		cp -al "$CORPUS" "$GT"
		rm -f "$GT/.gitignore"	# Debian's ends in "/*": it would ignore everything
		git -C "$GT" init -q .
	fi
	for j in $JS; do
		run_set "-j$j$sfx" "$GT" gitqueries "$j"
	done
fi
stop_busy

python3 - "$OUT/results.tsv" <<'PY'
import statistics, sys
from collections import OrderedDict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
data = OrderedDict()
loads, cpus = {}, {}
for label, name, tool, rnd, med, load, cpu in rows:
    data.setdefault((label, name), OrderedDict()).setdefault(tool, []).append(float(med))
    cpus.setdefault((label, name), OrderedDict()).setdefault(tool, []).append(float(cpu))
    loads.setdefault((label, name), []).append(float(load))
# the load average (1 min) while the row was timed: median over its rounds;
# CPU: user + system time (mean of a round, median of the rounds), which a
# busy machine disturbs less than the wall-clock time
print("| threads | query | wap | peer | peer time | wap/peer | wap/peer CPU | load |")
print("|---|---|---|---|---|---|---|---|")
for (label, name), tools in data.items():
    if "wap" not in tools:
        continue
    w = statistics.median(tools["wap"])
    wc = statistics.median(cpus[(label, name)]["wap"])
    ld = statistics.median(loads[(label, name)])
    peers = [(t, statistics.median(v), statistics.median(cpus[(label, name)][t]))
             for t, v in tools.items() if t != "wap"]
    for k, (t, m, c) in enumerate(peers):
        q = name.replace("|", "\\|")
        cr = f"{wc/c:.2f}x" if c > 0 else ""
        if k == 0:
            print(f"| {label} | `{q}` | {w*1000:.0f} ms | {t} | {m*1000:.0f} ms | {w/m:.2f}x | {cr} | {ld:.1f} |")
        else:
            print(f"| | | | {t} | {m*1000:.0f} ms | {w/m:.2f}x | {cr} | |")
PY
if [ -s "$OUT/same.tsv" ]; then
	echo
	echo "Output of wap against the first peer (sorted lines; JSON: the matches):"
	sort -u "$OUT/same.tsv" | awk -F'\t' '{ printf "- %s `%s` vs %s: %s\n", $1, $2, $3, $4 }'
fi
echo "(raw data: $OUT/results.tsv)" >&2
