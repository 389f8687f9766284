# tests/lib.sh - sourced by every shell test.  Gives:
#   a fresh scratch dir $T (removed at exit) holding the workspace $W,
#   wap-APPLET links in $T/bin (first on PATH), as a user would have them,
#   ok/fail/check/expect helpers that print TAP-style "ok"/"not ok" lines,
#   jget FILE|- EXPR: evaluate a Python expression on parsed JSON (j).
set -u
: "${WAP:?WAP must name the wap binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/wap-test.XXXXXX")
W=$T/ws
mkdir -p "$W" "$T/bin"
trap 'rm -rf "$T"' EXIT
ln -s "$WAP" "$T/bin/wap"
for a in $("$WAP" --list); do ln -s "$WAP" "$T/bin/wap-$a"; done
PATH=$T/bin:$PATH
export WAP_ROOT=$W
# the Python helpers (tests/py: wapstdio)
export PYTHONPATH="$(pwd)/tests/py${PYTHONPATH:+:$PYTHONPATH}"
unset WAP_CONFIG
# the default config is the invoker's ($XDG_CONFIG_HOME/wap/config.json):
# one that is not there, so no personal config changes what tests see
export XDG_CONFIG_HOME=$T/xdg-config
_n=0
ok() { _n=$((_n+1)); echo "ok $_n - $*"; }
# wait_for SECONDS CMD...: until CMD succeeds (a file, a socket, a line
# that a process started beside makes), tried every 0.1 s; 1 if it never
# did.  Long caps cost nothing when the machine is quick, and a loaded one
# (the suites run side by side, under ASan) can take seconds to start python.
wait_for() { _t=$(( $1 * 10 )); shift; while [ $_t -gt 0 ]; do "$@" && return 0; sleep 0.1; _t=$((_t - 1)); done; return 1; }
fail() { _n=$((_n+1)); echo "not ok $_n - $*"; }
# check DESC CMD...: pass if CMD exits 0
check() { d=$1; shift; if "$@" >/dev/null 2>&1; then ok "$d"; else fail "$d"; fi; }
# expect DESC STATUS CMD...: pass if CMD exits with STATUS; output in $OUT/$ERR
expect() {
	d=$1 want=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"; got=$?
	OUT=$(cat "$T/out"); ERR=$(cat "$T/err")
	if [ "$got" = "$want" ]; then ok "$d"; else fail "$d (exit $got, wanted $want; stderr: $(head -c 300 "$T/err"))"; fi
}
# same DESC A B: string equality
same() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got [$(printf %s "$2" | head -c 400)] wanted [$(printf %s "$3" | head -c 400)]"; fi; }
# has DESC HAYSTACK NEEDLE
has() { case $2 in *"$3"*) ok "$1";; *) fail "$1: [$(printf %s "$2" | head -c 400)] lacks [$3]";; esac; }
lacks() { case $2 in *"$3"*) fail "$1: contains [$3]";; *) ok "$1";; esac; }
# jget JSON EXPR: print python3's value of EXPR with j = the parsed JSON
jget() { printf '%s' "$1" | python3 -c 'import json,sys; j=json.load(sys.stdin); v=eval(sys.argv[1]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$2"; }
# jcheck DESC JSON EXPR: pass if the Python expression is true
# tap_in PREFIX FILE: a helper's "ok - X" / "not ok - X" lines as this
# suite's, each X after PREFIX; any other line fails
# tap_in PREFIX FILE: FILE's TAP lines (numbered or not) as our own, each
# description after PREFIX; a comment is passed over, any other line fails
tap_in() {
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$1${line#ok - }" ;;
		"ok "[0-9]*) ok "$1${line#ok * - }" ;;
		"not ok - "*) fail "$1${line#not ok - }" ;;
		"not ok "[0-9]*) fail "$1${line#not ok * - }" ;;
		"#"*) ;;
		*) fail "$1$line" ;;
		esac
	done < "$2"
}
jcheck() { if printf '%s' "$2" | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$3" 2>"$T/jerr"; then ok "$1"; else fail "$1: $3 on $(printf %s "$2" | head -c 300) $(cat "$T/jerr")"; fi; }
