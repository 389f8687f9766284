#!/bin/sh
# bench/search.sh - wap grep / wap glob against ripgrep, GNU grep, fd and
# find on the Linux 6.1 source tree (Debian's linux-source-6.1), same
# queries, same run, with hyperfine.
#
#   bench/search.sh                 every query, 2 threads and -j1
#   ROUNDS=7 bench/search.sh        more rounds
#   ONLY=PM_RESUME bench/search.sh  queries whose name contains the word
#
# The corpus has no .git, so ignore files do not apply to rg and fd; wap is
# run with --no-ignore --no-default-excludes and rg with -uu (hidden files,
# no ignore files), fd with -HI, so all walk the same files.  Output goes to
# a pipe (hyperfine --output=pipe): no tool can special-case /dev/null.
# Commands alternate: each round runs every query once more for every tool
# (hyperfine --runs RUNS), and the reported time is the median of the
# round medians.  Ratio = wap / peer (below 1: wap is faster).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
WAP=${WAP:-$here/wap}
CORPUS=${CORPUS:-/work/corpus/linux-source-6.1}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-3}
J=${J:-2}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wap-bench.XXXXXX")}

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench: $1 is needed ($2)" >&2; exit 2; }; }
need hyperfine "apt-get install hyperfine"
need rg "apt-get install ripgrep"
need fdfind "apt-get install fd-find"
need python3 "apt-get install python3"
[ -x "$WAP" ] || { echo "bench: build wap first (make)" >&2; exit 2; }

if [ ! -d "$CORPUS" ]; then
	echo "bench: building the corpus in $CORPUS" >&2
	if [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then
		apt-get install -y linux-source-6.1 >&2
	fi
	mkdir -p "$(dirname "$CORPUS")"
	tar xf /usr/src/linux-source-6.1.tar.xz -C "$(dirname "$CORPUS")"
fi
cd "$CORPUS"
if [ -e .git ]; then
	echo "bench: $CORPUS has a .git; the comparison assumes none" >&2
	exit 2
fi

# warm the page cache (the machines page out idle memory)
warm() {
	rg -uuu --no-config -c 'zzz_no_such_text_zzz' . >/dev/null 2>&1 || true
	rg -uuu --no-config -c 'zzz_no_such_text_zzz' . >/dev/null 2>&1 || true
}

# name|wap command|peer name|peer command[|peer name|peer command...]
queries() {
	w="$WAP"
	cat <<EOF
PM_RESUME|$w grep -j$J --no-ignore --no-default-excludes -m0 PM_RESUME|rg|rg -j$J -uu --no-config PM_RESUME|grep|grep -r PM_RESUME .
-i pm_resume|$w grep -j$J --no-ignore --no-default-excludes -m0 -i pm_resume|rg|rg -j$J -uu --no-config -i pm_resume|grep|grep -ri pm_resume .
\\w+_resume\\b|$w grep -j$J --no-ignore --no-default-excludes -m0 \\w+_resume\\b|rg|rg -j$J -uu --no-config \\w+_resume\\b|grep -E|grep -rE \\w+_resume\\b .
PM_RESUME|PM_SUSPEND|$w grep -j$J --no-ignore --no-default-excludes -m0 PM_RESUME|PM_SUSPEND|rg|rg -j$J -uu --no-config PM_RESUME|PM_SUSPEND|grep -E|grep -rE PM_RESUME|PM_SUSPEND .
-l PM_RESUME|$w grep -j$J --no-ignore --no-default-excludes -m0 -l PM_RESUME|rg|rg -j$J -uu --no-config -l PM_RESUME|grep|grep -rl PM_RESUME .
-c PM_RESUME|$w grep -j$J --no-ignore --no-default-excludes -m0 -c PM_RESUME|rg|rg -j$J -uu --no-config -c PM_RESUME
--jsonl PM_RESUME|$w grep -j$J --no-ignore --no-default-excludes -m0 --jsonl PM_RESUME|rg --json|rg -j$J -uu --no-config --json PM_RESUME
glob **/*.c|$w glob -j$J --no-ignore --no-default-excludes -m0 **/*.c|fd -e c|fdfind -j$J -HI -e c|find|find . -name *.c
glob **/*.h|$w glob -j$J --no-ignore --no-default-excludes -m0 **/*.h|fd -g|fdfind -j$J -HI -g **/*.h|find|find . -name *.h
glob ** (all files)|$w glob -j$J --no-ignore --no-default-excludes -m0 --type f **|fd -t f|fdfind -j$J -HI -t f|find|find . -type f
EOF
}

# hyperfine with -N cannot take quoted words: the '|' separates fields, and
# a field's words are split on spaces, so no pattern here has a space.
printf '' > "$OUT/results.tsv"
round=1
while [ "$round" -le "$ROUNDS" ]; do
	warm
	queries | while IFS= read -r line; do
		name=${line%%|*}
		case $name in
		'PM_RESUME|PM_SUSPEND') rest=${line#PM_RESUME|PM_SUSPEND|} ;;
		*) rest=${line#*|} ;;
		esac
		case $name in *"${ONLY:-}"*) ;; *) continue ;; esac
		# split the rest into wap command and peers; alternation patterns
		# hold a '|', so they are passed through python for the split
		python3 - "$name" "$rest" "$OUT" "$round" "$RUNS" <<'PY'
import json, subprocess, sys
name, rest, out, rnd, runs = sys.argv[1:6]
parts = rest.split("|")
# re-join the alternation inside commands
fixed = []
i = 0
while i < len(parts):
    p = parts[i]
    if p.endswith("PM_RESUME") and i + 1 < len(parts) and parts[i + 1].startswith("PM_SUSPEND"):
        p = p + "|" + parts[i + 1]
        i += 1
    fixed.append(p)
    i += 1
cmds = [("wap", fixed[0])] + [(fixed[k], fixed[k + 1]) for k in range(1, len(fixed) - 1, 2)]
args = ["hyperfine", "-N", "--output=pipe", "-i", "--warmup", "1", "--runs", runs,
        "--export-json", f"{out}/h.json"]
for label, c in cmds:
    args += ["-n", label, c]
subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
res = json.load(open(f"{out}/h.json"))["results"]
with open(f"{out}/results.tsv", "a") as fh:
    for r in res:
        fh.write(f"{name}\t{r['command']}\t{rnd}\t{r['median']}\n")
PY
	done
	round=$((round + 1))
done

python3 - "$OUT/results.tsv" "$J" <<'PY'
import statistics, sys
from collections import OrderedDict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
data = OrderedDict()
for name, tool, rnd, med in rows:
    data.setdefault(name, OrderedDict()).setdefault(tool, []).append(float(med))
print(f"| query (-j{sys.argv[2]}) | wap | peer | peer time | wap/peer |")
print("|---|---|---|---|---|")
for name, tools in data.items():
    w = statistics.median(tools["wap"])
    peers = [(t, statistics.median(v)) for t, v in tools.items() if t != "wap"]
    for k, (t, m) in enumerate(peers):
        print(f"| `{name}` | {w*1000:.0f} ms | {t} | {m*1000:.0f} ms | {w/m:.2f}x |" if k == 0 else
              f"| | | {t} | {m*1000:.0f} ms | {w/m:.2f}x |")
PY
echo "(raw data: $OUT/results.tsv)" >&2
