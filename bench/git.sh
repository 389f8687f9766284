#!/bin/sh
# bench/git.sh - wap git against the git CLI, same repositories, same run,
# with hyperfine: status and diff on the Linux 6.1 tree as a git repository
# (one file changed), log, show and diff HEAD~50 on jq's history.
#
#   bench/git.sh                 every command, 3 rounds
#   ROUNDS=7 RUNS=5 bench/git.sh more rounds, more runs a round
#   ONLY=status bench/git.sh     commands whose name contains the word
#
# The repositories (made when missing; LINUX and JQ name others):
# - LINUX (/work/corpus/linux-git): Debian's linux-source-6.1 tree, a
#   hard-linked copy (cp -al) with Debian's top-level .gitignore (which ends
#   in "/*") removed, `git init`, `git add -A`, one commit, then one line of
#   kernel/sched/core.c changed (a new file: the hard link is broken).
# - UNTR (${TMPDIR:-/tmp}/wap-bench-linux-untracked): a copy of LINUX
#   (cp -a: LINUX is not touched, not even the ctimes a hard link would
#   change), its index refreshed (the copy's inodes are new), then one
#   untracked file in a tracked directory and one untracked directory
#   (git and wap both show "?? dir/"): what a workspace usually holds.
# - JQ (/work/corpus/jq): a clone of jq's history (JQ_URL names where to
#   clone it from when it is missing).
#
# Every pair must print the same bytes: before timing, each command's text
# output is compared with git's (wap's text output is git's for these), and
# a pair that differs is reported and not timed.  Output goes to a pipe
# (hyperfine --output=pipe).  Commands alternate: each round runs wap and
# git again (hyperfine --warmup 1 --runs RUNS) after warming the cache; the
# time reported is the median of the round medians, the ratio wap / git
# (below 1: wap is faster), with the load average before and after.  The
# CPU columns (user + system of every thread: the mean of a round, the median of the
# rounds)
# say what each costs when the machine is busy and wall times mostly
# measure the wait for a core.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
WAP=${WAP:-$here/wap}
LINUX=${LINUX:-/work/corpus/linux-git}
SRC=${SRC:-/work/corpus/linux-source-6.1}
JQ=${JQ:-/work/corpus/jq}
UNTR=${UNTR:-${TMPDIR:-/tmp}/wap-bench-linux-untracked}
JQ_URL=${JQ_URL:-}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wap-bench.XXXXXX")}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench: $1 is needed ($2)" >&2; exit 2; }; }
need hyperfine "apt-get install hyperfine"
need git "apt-get install git"
need python3 "apt-get install python3"
[ -x "$WAP" ] || { echo "bench: build wap first (make)" >&2; exit 2; }

if [ ! -d "$LINUX/.git" ]; then
	[ -d "$SRC" ] || { echo "bench: no $SRC (see bench/search.sh for how it is made)" >&2; exit 2; }
	echo "bench: making $LINUX (hard links, one commit; a few minutes)" >&2
	rm -rf "$LINUX"
	cp -al "$SRC" "$LINUX"
	rm -f "$LINUX/.gitignore"	# Debian's ends in "/*": it would ignore everything
	git -C "$LINUX" init -q -b main
	git -C "$LINUX" add -A
	git -C "$LINUX" -c user.name=bench -c user.email=bench@example.com commit -qm "linux 6.1"
	sed -i '100s/$/ \/* bench change *\//' "$LINUX/kernel/sched/core.c"	# sed -i writes a new file
fi
case "status (Linux, one change, untracked file and dir)" in *"${ONLY:-}"*) untr=yes ;; *) untr=no ;; esac
if [ "$untr" = yes ] && [ ! -d "$UNTR/.git" ]; then
	echo "bench: copying $LINUX to $UNTR (a minute)" >&2
	rm -rf "$UNTR"
	cp -a "$LINUX" "$UNTR"
	git -C "$UNTR" update-index -q --refresh >/dev/null || true
	echo "bench untracked file" > "$UNTR/kernel/sched/bench-new.c"
	mkdir -p "$UNTR/bench-new-dir/sub" && echo x > "$UNTR/bench-new-dir/sub/file"
fi
if [ ! -d "$JQ/.git" ]; then
	[ -n "$JQ_URL" ] || { echo "bench: no $JQ: set JQ_URL to jq's repository to clone it" >&2; exit 2; }
	echo "bench: cloning $JQ_URL into $JQ" >&2
	git clone -q "$JQ_URL" "$JQ"
fi

warm() { # DIR: the work tree's inodes and the git dir back in the cache
	git -C "$1" status -s >/dev/null 2>&1 || true
	cat "$1/.git/index" "$1"/.git/objects/pack/*.pack >/dev/null 2>&1 || true
}

# NAME<TAB>DIR<TAB>wap arguments<TAB>git arguments (split on spaces)
cmds() {
	t=$(printf '\t')
	echo "status (Linux, one change)$t$LINUX${t}git status${t}status -sb"
	echo "diff (Linux, one change)$t$LINUX${t}git diff${t}diff"
	echo "status (Linux, one change, untracked file and dir)$t$UNTR${t}git status${t}status -sb"
	echo "log -n 2000 (jq)$t$JQ${t}git log -n 2000${t}log -n 2000"
	echo "show HEAD (jq)$t$JQ${t}git show HEAD${t}show HEAD"
	echo "diff HEAD~50 (jq)$t$JQ${t}git diff HEAD~50${t}diff HEAD~50"
}

: > "$OUT/results.tsv"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
cmds | while IFS="$(printf '\t')" read -r name dir wa ga; do
	case $name in *"${ONLY:-}"*) ;; *) continue ;; esac
	# same bytes, or no timing
	(cd "$dir" && $WAP $wa) > "$OUT/w.out" 2>&1 || true
	(cd "$dir" && git $ga) > "$OUT/g.out" 2>&1 || true
	if cmp -s "$OUT/w.out" "$OUT/g.out"; then
		same=yes
	else
		same=NO
		echo "bench: $name: wap's output differs from git's:" >&2
		diff "$OUT/g.out" "$OUT/w.out" | head -5 >&2 || true
	fi
	printf '%s\tbytes\t%s\t%s\n' "$name" "$same" "$(wc -c < "$OUT/g.out")" >> "$OUT/results.tsv"
	[ "$same" = yes ] || continue
	round=1
	while [ "$round" -le "$ROUNDS" ]; do
		warm "$dir"
		(cd "$dir" && hyperfine -N --output=pipe --warmup 1 --runs "$RUNS" \
			--export-json "$OUT/h.json" -n wap "$WAP $wa" -n git "git $ga" >/dev/null 2>&1) || true
		python3 - "$OUT/h.json" "$name" "$round" >> "$OUT/results.tsv" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    cpu = r["user"] + r["system"]	# hyperfine gives their means
    print(f"{sys.argv[2]}\t{r['command']}\t{sys.argv[3]}\t{r['median']}\t{cpu}")
PY
		round=$((round + 1))
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/results.tsv" "$load0" "$load1" <<'PY'
import statistics, sys
from collections import OrderedDict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
data, cpu, same = OrderedDict(), {}, {}
for row in rows:
    name, tool, a, b = row[:4]
    if tool == "bytes":
        same[name] = (a, b)
        data.setdefault(name, OrderedDict())
        continue
    data.setdefault(name, OrderedDict()).setdefault(tool, []).append(float(b))
    cpu.setdefault((name, tool), []).append(float(row[4]))
print(f"load average {sys.argv[2]} (before), {sys.argv[3]} (after)\n")
print("| command | wap | git | wap/git | CPU wap | CPU git | CPU wap/git | same bytes |")
print("|---|---|---|---|---|---|---|---|")
for name, tools in data.items():
    s, n = same.get(name, ("?", "?"))
    if "wap" not in tools or "git" not in tools:
        print(f"| `{name}` | | | | | | | {s} ({n} bytes) |")
        continue
    w, g = statistics.median(tools["wap"]), statistics.median(tools["git"])
    cw, cg = statistics.median(cpu[(name, "wap")]), statistics.median(cpu[(name, "git")])
    print(f"| `{name}` | {w*1000:.1f} ms | {g*1000:.1f} ms | {w/g:.2f}x | {cw*1000:.1f} ms | {cg*1000:.1f} ms | {cw/cg:.2f}x | {s} ({n} bytes) |")
PY
echo "(raw data: $OUT/results.tsv)" >&2
