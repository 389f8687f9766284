#!/bin/sh
# bench/sym.sh - symbol overview of a 2,000-line C file: through `wap serve`
# with a warm clangd (MCP tools/call of sym over stdio, bench/jsonl-client.mjs,
# one call in flight: the first call starts clangd, so p50 is the warm figure),
# and on the command line beside universal-ctags (hyperfine, alternating):
# `ctags` itself, `wap sym overview --ctags`, and `wap sym overview` (a clangd
# started and stopped in each run).  Prints the load average with each figure.
#   bench/sym.sh [WAP]
set -eu
cd "$(dirname "$0")"
WAP=$(cd .. && pwd)/${1:-wap}
N=${N:-50}
D=$(mktemp -d /tmp/wap-bench-sym.XXXXXX)
trap 'rm -rf "$D"' EXIT
python3 - "$D" <<'PY'
import json, sys
d = sys.argv[1]
out = ["#include <stddef.h>", ""]
i = 0
while len(out) < 2000:
    out += ["struct s%d { int a%d; long b%d; };" % (i, i, i),
            "static int f%d(struct s%d *p, int k)" % (i, i), "{",
            "\tint r = p->a%d * k;" % i, "\tif (r > %d)" % i, "\t\tr -= (int)p->b%d;" % i,
            "\treturn r;", "}", ""]
    i += 1
open(d + "/big.c", "w").write("\n".join(out[:2000]) + "\n")
json.dump([{"directory": d, "file": "big.c", "arguments": ["cc", "-c", "big.c"]}], open(d + "/compile_commands.json", "w"))
PY
echo "file: $(wc -l < "$D/big.c") lines, $(wc -c < "$D/big.c") bytes"
[ -d node_modules ] || npm ci --no-audit --no-fund >/dev/null 2>&1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wap serve, warm clangd, $N calls of sym overview (the first starts clangd):"
node jsonl-client.mjs stdio "$N" 1 sym '{"action":"overview","path":"big.c"}' -- "$WAP" serve --root "$D"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$D"
hyperfine -N -w 2 -r 10 --style basic \
	"ctags --output-format=json --fields=+nKzZSe -f - big.c" \
	"$WAP sym overview --ctags big.c" \
	"$WAP sym overview big.c" 2>&1 | grep -v '^ *$'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
