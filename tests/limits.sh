# limits: nothing escapes a timeout or a cancel, and no pattern runs away.
# Killing the processes wap supervises the command with (its reaper chain)
# still leaves the whole tree killed at the deadline with a result; the
# configured maximum execution time caps what a caller asks; regex match,
# depth and heap limits and a time bound name the file and line; a cancel,
# stdin EOF or a closed connection stops a running grep or exec at once.
. tests/lib.sh
SRC=$PWD
cd "$W"
# rss_of CMD...: the peak RSS of CMD, in MB
rss_of() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$@"; }

alive() { kill -0 "$1" 2>/dev/null; }
# wait_gone PID: up to 10 s
wait_gone() { for i in $(seq 100); do alive "$1" || return 0; sleep 0.1; done; return 1; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# ---- 14.5: a timeout cannot be escaped ----
# the command kills its parent (the reaper, or whatever wap put there)
start=$(date +%s%N)
expect "kill -9 \$PPID: still timed out (124)" 124 wap exec --timeout 1500 --kill-after 300 -c 'kill -9 $PPID; exec sleep 100.25'
ms=$(ms_since $start)
has "kill -9 \$PPID: timeout reported" "$ERR" "timed out after 1500 ms"
if [ "$ms" -ge 1400 ] && [ "$ms" -lt 5000 ]; then ok "kill -9 \$PPID: ended at the deadline (${ms} ms)"; else fail "kill -9 \$PPID: ended after ${ms} ms"; fi
# ($$ may be a pid of a namespace of its own: find the sleep by its argv)
gone() { # DESC PATTERN
	sleep 0.2
	p=$(pgrep -f "$2")
	if [ -z "$p" ]; then ok "$1: nothing left"; else fail "$1: left alive: $(pgrep -af "$2" | tr '\n' ' ')"; kill -9 $p; fi
}
gone "kill -9 \$PPID" '^sleep 100[.]25$'

# every wap process between the command and the caller killed (walk up the
# parents through /proc/self, the host's view, and kill each wap in turn)
cat > "$T/killup.sh" <<'SH'
p=$(sed 's/.*) . \([0-9]*\).*/\1/' /proc/self/stat)
while [ "$p" -gt 1 ] && [ "$p" != "$CALLER" ]; do
	c=$(cat /proc/$p/comm 2>/dev/null)
	n=$(sed 's/.*) . \([0-9]*\).*/\1/' /proc/$p/stat 2>/dev/null)
	[ "$c" = wap ] && kill -9 "$p" 2>/dev/null
	[ "$c" = wap ] && python3 -c 'import os,signal,sys
try:
	fd = os.open("/proc/%s" % sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
	signal.pidfd_send_signal(fd, signal.SIGKILL)
except OSError:
	pass' "$p"
	p=${n:-0}
done
exec sleep 99.5
SH
start=$(date +%s%N)
sh -c 'CALLER=$$ exec wap exec --timeout 1500 --kill-after 300 -- sh "$0"' "$T/killup.sh" >"$T/out" 2>"$T/err"; st=$?
ms=$(ms_since $start)
same "every wap in the chain killed: exit 124" "$st" 124
if [ "$ms" -ge 1400 ] && [ "$ms" -lt 5000 ]; then ok "chain killed: returned at the deadline (${ms} ms)"; else fail "chain killed: ${ms} ms"; fi
gone "chain killed" '^sleep 99[.]5$'

# a daemon leaving the session and the group, with the reaper killed too
start=$(date +%s%N)
expect "setsid daemon + reaper killed: 124" 124 wap exec --timeout 1200 --kill-after 300 -c '(setsid sh -c "trap \"\" TERM; exec sleep 98.5" </dev/null >/dev/null 2>&1 &); kill -9 $PPID; exec sleep 97.5'
gone "setsid daemon + reaper killed" '^sleep 9[78][.]5$'

# signals to the supervisor (pid 1 of the command's namespace) from inside
# neither kill it nor cancel the call (only in a namespace: pid 1 is the
# machine's init otherwise)
expect "signals to pid 1 from inside change nothing" 0 wap exec --json --timeout 5000 -c '[ $$ = 2 ] || exit 99; kill -9 1; kill -STOP 1; kill -TERM 1; kill -INT 1; kill -HUP 1; sleep 0.3; echo survived'
jcheck "the command went on, the call was not cancelled" "$OUT" 'j["stdout"]=="survived\n" and j["exit_code"]==0 and not j["cancelled"] and not j["timed_out"]'
# (only where the shell is pid 2 of a namespace: elsewhere, as root, kill -1
# would reach every process of the machine)
expect "kill -9 -1 from inside reaches only the command's own tree" 0 wap exec --json --timeout 5000 -c '[ $$ = 2 ] || exit 99; sleep 91.5 & sleep 0.1; kill -9 -1; echo after'
jcheck "kill -9 -1: the caller is still there to answer" "$OUT" 'j["stdout"]=="after\n" and j["exit_code"]==0'
gone "kill -9 -1" '^sleep 91[.]5$'

# the same through wap serve (MCP exec)
start=$(date +%s%N)
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"kill -9 $PPID; exec sleep 96.5","timeout_ms":1000,"kill_after":300}}}'; sleep 2.5; } | timeout 20 wap serve)
ms=$(ms_since $start)
jcheck "MCP exec: kill -9 \$PPID still times out" "$out" 'j["result"]["structuredContent"]["timed_out"] is True'
gone "MCP exec" '^sleep 96[.]5$'

# limits.maxExecutionTime is a maximum, not just the default
echo '{"limits": {"maxExecutionTime": 400}}' > "$T/cfg.json"
export WAP_CONFIG="$T/cfg.json"
start=$(date +%s%N)
expect "maxExecutionTime caps --timeout" 124 wap exec --timeout 100000 -- sleep 30
ms=$(ms_since $start)
if [ "$ms" -lt 3000 ]; then ok "maxExecutionTime: ended in ${ms} ms"; else fail "maxExecutionTime: ${ms} ms"; fi
out=$( { printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 30","timeout_ms":100000}}}'; sleep 1.5; } | timeout 20 wap serve)
jcheck "maxExecutionTime caps MCP timeout_ms" "$out" 'j["result"]["structuredContent"]["timed_out"] is True and j["result"]["structuredContent"]["timeout_ms"]==400'
expect "a shorter timeout is kept" 124 wap exec --timeout 200 -- sleep 30
has "the shorter one" "$ERR" "timed out after 200 ms"
echo '{"limits": {"maxExecutionTime": 400, "maxExecutionTimeCap": 900}}' > "$T/cfg.json"
expect "maxExecutionTimeCap given: the caller may ask up to it" 124 wap exec --timeout 100000 -- sleep 30
has "up to the cap" "$ERR" "timed out after 900 ms"
unset WAP_CONFIG

# as a user other than root: a user namespace holds the PID namespace
U=$(mktemp -d /tmp/wap-lim-user.XXXXXX); chmod 755 "$U"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	XDG_CONFIG_HOME="$U/.config" setpriv --reuid 65534 --regid 65534 --clear-groups "$WAP" exec --root "$U" --timeout 1000 --kill-after 300 -c 'kill -9 $PPID; exec sleep 95.5' >"$T/out" 2>"$T/err"; st=$?
	same "non-root: kill -9 \$PPID still times out" "$st" 124
	gone "non-root" '^sleep 95[.]5$'
else
	ok "# SKIP non-root: needs root and setpriv to switch users"
fi
rm -rf "$U"

# no PID namespace to be had (the limit of a user namespace set to 0): the
# subreaper; a command killing it takes its group down with it
if unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_pid_namespaces' 2>/dev/null; then
	unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_pid_namespaces; exec "$0" exec --timeout 1000 -c "kill -9 \$PPID; exec sleep 94.5"' "$WAP" >"$T/out" 2>"$T/err"; st=$?
	same "no PID namespace: the supervisor killed is an error" "$st" 125
	has "no PID namespace: it says so" "$(cat "$T/err")" "supervisor ended unexpectedly; the command was killed"
	gone "no PID namespace" '^sleep 94[.]5$'
	unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_pid_namespaces; exec "$0" exec --timeout 300 --kill-after 200 -c "(setsid sleep 93.5 &); sleep 92.5"' "$WAP" >"$T/out" 2>"$T/err"; st=$?
	same "no PID namespace: timeout" "$st" 124
	gone "no PID namespace: the subreaper kills a setsid daemon" '^sleep 9[23][.]5$'
else
	ok "# SKIP no user namespaces to test the fallback in"
fi

# neither a PID namespace nor a subreaper (gVisor may give neither; the
# test switch WAP_EXEC_SUPERVISOR only ever weakens): the supervisor sweeps
# the command's session through /proc until nothing of it is left
expect "info names the supervisor exec uses" 0 wap info --json
jcheck "info: execSupervisor is one of the mechanisms" "$OUT" 'j["execSupervisor"] in ("pid-namespace", "subreaper", "session-sweep")'
expect "session sweep: info says so" 0 env WAP_EXEC_SUPERVISOR=session-sweep wap info --json
jcheck "session sweep: execSupervisor" "$OUT" 'j["execSupervisor"]=="session-sweep"'
expect "session sweep: no namespace (\$\$ is a host pid), no subreaper (an orphan is not the supervisor's)" 0 env WAP_EXEC_SUPERVISOR=session-sweep wap exec --timeout 5000 -c '[ $$ != 2 ] || exit 98; sup=$PPID; (sleep 0.5 & echo $! > orphan); sleep 0.2; p=$(sed "s/.*) . \([0-9]*\).*/\1/" /proc/$(cat orphan)/stat); [ "$p" != "$sup" ] || exit 97; echo swept'
same "session sweep: the command ran" "$OUT" swept
start=$(date +%s%N)
expect "session sweep: timeout (124)" 124 env WAP_EXEC_SUPERVISOR=session-sweep wap exec --timeout 400 --kill-after 300 -c '(sleep 89.5 &); (sh -c "trap \"\" TERM; (sleep 88.5 &); exec sleep 87.5" &); sleep 86.5'
ms=$(ms_since $start)
if [ "$ms" -lt 3000 ]; then ok "session sweep: ended in ${ms} ms"; else fail "session sweep: took ${ms} ms"; fi
gone "session sweep: double-forked children, one ignoring SIGTERM" '^sleep 8[6-9][.]5$'
expect "session sweep: leftovers after the command's exit go too" 0 env WAP_EXEC_SUPERVISOR=session-sweep wap exec --timeout 5000 --kill-after 300 -c '(sleep 85.5 &); echo done'
gone "session sweep: leftovers" '^sleep 85[.]5$'
expect "session sweep: the supervisor killed is an error" 125 env WAP_EXEC_SUPERVISOR=session-sweep wap exec --timeout 3000 -c '(sleep 84.25 &); kill -9 $PPID; exec sleep 83.25'
has "session sweep: it says so" "$ERR" "supervisor ended unexpectedly; the command was killed"
gone "session sweep: supervisor killed" '^sleep 8[34][.]25$'
# none of the three: nothing runs at all
expect "no way to kill the tree: exec refuses (FEATURE_DISABLED)" 15 env WAP_EXEC_SUPERVISOR=none wap exec --json -- sh -c 'echo ran > ran.txt'
jcheck "no supervisor: the error says why" "$OUT" 'j["code"]=="FEATURE_DISABLED" and "no PID namespace, subreaper or /proc" in j["error"]'
[ -e ran.txt ] && fail "no supervisor: the command ran" || ok "no supervisor: the command did not run"
expect "the test switch never strengthens" 0 env WAP_EXEC_SUPERVISOR=bogus wap info --json
jcheck "an unknown name is ignored" "$OUT" 'j["execSupervisor"] in ("pid-namespace", "subreaper", "session-sweep")'

# under gVisor (runsc do: the host's root as the sandbox's, no network):
# as root, and as a user without capabilities, whose user namespace gVisor
# maps without a setgroups file
RUNSC=""
if ! command -v runsc >/dev/null; then
	ok "# SKIP gVisor: runsc is not installed"
else
	for r in "runsc --network=none" "runsc --rootless --network=none"; do
		if timeout 20 $r do true >/dev/null 2>&1; then RUNSC=$r; break; fi
	done
	[ -n "$RUNSC" ] || ok "# SKIP gVisor: runsc cannot start a trivial true here ($(timeout 20 runsc --network=none do true 2>&1 | tail -1))"
fi
if [ -n "$RUNSC" ]; then
	G=$(mktemp -d /tmp/wap-lim-gvisor.XXXXXX); chmod 755 "$G"
	cp "$WAP" "$G/wap"; chmod 755 "$G/wap"
	cat > "$G/run.sh" <<'SH'
# inside gVisor (writes stay in its overlay: all is said on stdout): info,
# echo, a timeout killing a double-forked sleep
cd "$G"
"$G/wap" info --root "$G" --json
"$G/wap" exec --root "$G" -- echo hi; echo "rc=$?"
"$G/wap" exec --root "$G" --timeout 300 --kill-after 200 -c '(sleep 79.5 &); exec sleep 78.5'; echo "rc=$?"
sleep 0.2
if ps -eo args | grep -q '^sleep 7[89][.]5$'; then echo left; else echo none left; fi
SH
	for who in root user sweep; do
		case $who in
		root) pre="";;
		user) pre="setpriv --reuid 65534 --regid 65534 --clear-groups --bounding-set=-all --inh-caps=-all";;
		sweep) pre="env WAP_EXEC_SUPERVISOR=session-sweep";;
		esac
		timeout 30 $RUNSC do env G="$G" XDG_CONFIG_HOME="$G/.config" $pre sh "$G/run.sh" $who </dev/null >"$T/out" 2>"$T/err"
		same "gVisor ($who): exec echo, a timeout's 124, nothing left" "$(tail -n +2 "$T/out")" "hi
rc=0
rc=124
none left"
		has "gVisor ($who): the timeout is said" "$(cat "$T/err")" "timed out after 300 ms"
		jcheck "gVisor ($who): info names the supervisor" "$(head -1 "$T/out")" 'j["execSupervisor"] in ("pid-namespace", "subreaper", "session-sweep")'
		[ $who = sweep ] && jcheck "gVisor (sweep): the switch holds there too" "$(head -1 "$T/out")" 'j["execSupervisor"]=="session-sweep"'
	done
	rm -rf "$G"
fi

# ---- 14.6: regex limits ----
{ echo one; echo two; python3 -c "print('a' * 30000 + 'xc')"; echo four; } > rx.txt
for opt in "" -U -o -c -l; do
	start=$(date +%s%N)
	expect "grep $opt: a catastrophic pattern is an error" 2 timeout 30 wap grep $opt '(a|aa)*[bc]' rx.txt
	ms=$(ms_since $start)
	has "grep $opt: the error names the file and line" "$ERR" "rx.txt:3"
	has "grep $opt: and says what to do" "$ERR" "simplify the pattern"
	if [ "$ms" -lt 10000 ]; then ok "grep $opt: in ${ms} ms"; else fail "grep $opt: took ${ms} ms"; fi
done
# in a file over one read (256 KiB: searched in pieces), the line in a
# later piece, whether line numbers are shown (-c, -l: not counted as the
# pieces go) or not
{ python3 -c "print('line\n' * 70000, end='')"; python3 -c "print('a' * 30000 + 'xc')"; echo four; } > rxbig.txt
for opt in "" -c -l; do
	expect "grep $opt: a catastrophic pattern in a big file" 2 timeout 30 wap grep $opt '(a|aa)*[bc]' rxbig.txt
	has "grep $opt: the error names the line of a later piece" "$ERR" "rxbig.txt:70001;"
done
rm -f rxbig.txt
expect "grep --json: the limit's error code" 2 wap grep --json '(a|aa)*[bc]' rx.txt
jcheck "grep --json: SIZE_LIMIT_EXCEEDED" "$OUT" 'j["code"]=="SIZE_LIMIT_EXCEEDED" and "rx.txt:3" in j["error"]'
expect "grep: a sane pattern on the same file" 0 wap grep -c 'a+xc' rx.txt
has "grep: it matches" "$OUT" 1
expect "grep -v: the limit is an error too" 2 wap grep -v '(a|aa)*[bc]' rx.txt
start=$(date +%s%N)
echo '[{"type":"regexReplace","pattern":"(a|aa)*[bc]","replacement":"X"}]' > ops.json
expect "edit regexReplace: the limit is an error" 7 wap edit rx.txt --ops ops.json
ms=$(ms_since $start)
has "edit regexReplace: names the file" "$ERR" "rx.txt"
if [ "$ms" -lt 10000 ]; then ok "edit regexReplace: in ${ms} ms"; else fail "edit regexReplace: took ${ms} ms"; fi
# globs: many stars over a long name backtracked polynomially to PCRE2's
# match limit (an error, and a restrictedPaths glob denied what it did not
# match); the DFA matcher decides them
mkdir -p gl && touch "gl/$(python3 -c "print('a' * 250)")"
start=$(date +%s%N)
expect "glob: many stars over a long name are decided" 1 wap glob --json '*a*a*a*a*a*a*a*a*a*a*[bc]' gl
ms=$(ms_since $start)
jcheck "glob: no match, no limit" "$OUT" 'j["totalFound"]==0'
if [ "$ms" -lt 10000 ]; then ok "glob: in ${ms} ms"; else fail "glob: took ${ms} ms"; fi
expect "glob: and found where they match" 0 wap glob --json '*a*a*a*a*a*a*a*a*a*a*[ab]' gl
expect "restricted path: a glob of many stars that does not match lets the file be read" 0 wap read --restrict '*a*a*a*a*a*a*a*a*a*a*[bc]' "gl/$(python3 -c "print('a' * 250)")"
expect "restricted path: one that matches denies it" 5 wap read --restrict '*a*a*a*a*a*a*a*a*a*a*[ab]' "gl/$(python3 -c "print('a' * 250)")"
# the call's time limit: grep's bound is a file's (20 s), so bait files
# each under it added up (8 files of ~3 s: 24 s of a worker, then "no
# match"); a call of an op on files alone ends at WAP_CALL_TIME_MAX
mkdir -p bait && python3 -c "
for i in range(8): open('bait/b%d.txt' % i, 'w').write(('x' * 20 + 'z') * 100 + 'y\n')"
start=$(date +%s%N)
expect "grep: many bait files end at the call's time limit" 2 env WAP_CALL_TIME_MAX=2 timeout 60 wap grep -j1 --json '(x+x+)+y' bait
ms=$(ms_since $start)
jcheck "grep: SIZE_LIMIT_EXCEEDED naming the call's limit" "$OUT" 'j["code"]=="SIZE_LIMIT_EXCEEDED" and "time limit" in j["error"] and "WAP_CALL_TIME_MAX" in j["error"]'
if [ "$ms" -lt 12000 ]; then ok "grep: the call ended in ${ms} ms"; else fail "grep: the call took ${ms} ms"; fi
expect "grep: a quick call under the same limit" 0 env WAP_CALL_TIME_MAX=2 wap grep -c y bait/b0.txt
python3 "$SRC/tests/serve/calltime.py" "$WAP" "$W" > "$T/calltime" 2>&1
tap_in "calltime: " "$T/calltime"
rm -rf bait

# ---- 14.6: a cancel, stdin EOF or a closed connection stops the work ----
yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 200M > big.txt
mkdir -p many && for i in $(seq 200); do head -c 1M big.txt > many/f$i.txt; done
echo needle > small.txt
python3 "$SRC/tests/serve/cancel.py" "$WAP" "$W" > "$T/cancel" 2>&1
tap_in "cancel: " "$T/cancel"
rm -rf big.txt many

# a quick call (read) that must unpack an archive is handed to a worker:
# the door goes on reading, answering and cancelling meanwhile
python3 "$SRC/tests/serve/quick.py" "$WAP" "$W" > "$T/quick" 2>&1
tap_in "quick: " "$T/quick"
rm -f small.txt

# a closed WebSocket (ACP) stops the search it was running
WSDIR=$SRC/tests/ws
if [ -d "$WSDIR/node_modules/ws" ] && command -v node >/dev/null; then
	yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 200M > big.txt
	wap serve --ws 127.0.0.1:0 --token-file "$T/ws.token" --root "$W" 2>"$T/ws.log" & SPID=$!
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*on ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/ws.log")
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	node "$WSDIR/cancel-test.js" "$PORT" "$(cat "$T/ws.token")" "$SPID" > "$T/wscancel" 2>&1
	tap_in "ws close: " "$T/wscancel"
	rm -f big.txt
	# ... and a tree's copy and removal, which stall the server while they run
	python3 -c "
import os
for d in range(200):
    os.makedirs('big/d%d' % d)
    for i in range(500):
        open('big/d%d/f%d' % (d, i), 'w').close()
"
	node "$WSDIR/close-tree-test.js" "$PORT" "$(cat "$T/ws.token")" "$W" > "$T/wsclosetree" 2>&1
	tap_in "ws close: " "$T/wsclosetree"
	kill $SPID; wait $SPID 2>/dev/null
	rm -rf big big2
else
	ok "# SKIP ws close: no node or tests/ws/node_modules (npm ci in tests/ws)"
fi

# ---- archives are unpacked to WAP_ARCHIVE_MAX (256 MiB) a call at most:
# bzip2 streams of 45 MiB each in 50 bytes, one after another, as a plain
# compressed file and as a tar whose members are far apart ----
python3 - "$W" <<'PY'
import bz2, sys
d = sys.argv[1]
one = bz2.compress(b"A" * (45 << 20))
open(d + "/bomb.bz2", "wb").write(one * 25)		# 1.1 GiB of A, no newline
def hdr(name, size):
    h = name.encode().ljust(100, b"\0") + b"0000644\0" + b"0000000\0" * 2 + b"%011o\0" % size + b"00000000000\0"
    h += b"        0" + b"\0" * 100 + b"ustar\x0000" + b"\0" * 247
    s = sum(h) & 0o777777
    return h[:148] + b"%06o\0 " % s + h[156:]
out = open(d + "/bomb.tar.bz2", "wb")
for i in range(6):		# 6 members of 225 MiB: 1.3 GiB
    out.write(bz2.compress(hdr("m%d" % i, 225 << 20)))
    out.write(one * 5)
out.write(bz2.compress(hdr("last.txt", 6)[:512] + b"found\n".ljust(512, b"\0") + b"\0" * 1024))
PY
ls -la bomb.bz2 bomb.tar.bz2 >/dev/null
start=$(date +%s%N)
expect "read of a member's one long line: the window, its length not counted on" 0 wap read bomb.bz2 --member data
has "cut" "$OUT" "line cut: 2000 of more than"
expect "with --tail, the member is counted to its end: past 256 MiB, exit 7" 7 wap read bomb.bz2 --member data --tail 2
has "says why" "$ERR" "Archive too large: unpacking bomb.bz2 took the call past 256 MiB"
expect "a tar's member past 256 MiB of members skipped: exit 7" 7 wap read bomb.tar.bz2 --member last.txt
expect "the tar's listing: exit 7" 7 wap read bomb.tar.bz2
ms=$(ms_since $start)
if [ "$ms" -lt 40000 ]; then ok "four reads held to the budget (${ms} ms)"; else fail "four reads took ${ms} ms"; fi
expect "grep -z: the members within the budget are searched" 1 wap grep -z BBB bomb.tar.bz2
has "the rest said on stderr" "$ERR" "bomb.tar.bz2: not searched to its end: Archive too large"
expect "grep -z --json: archivesCut" 1 wap grep -z BBB bomb.tar.bz2 bomb.bz2 --json
jcheck "each archive cut, with why" "$OUT" 'sorted(c["path"] for c in j["archivesCut"]) == ["bomb.bz2", "bomb.tar.bz2"] and all("256 MiB" in c["reason"] for c in j["archivesCut"])'
expect "grep -z on the 1.1 GiB member alone" 1 wap grep -z BBB bomb.bz2 --json
jcheck "held to 256 MiB, said so" "$OUT" '"256 MiB" in j["archivesCut"][0]["reason"]'
# a first megabyte of noise (the ratio the reader sees stays low), then
# repeated streams: a member skipped through the bzip2 filter is counted
python3 - <<'PY'
import bz2, os
hdr = b"big".ljust(100, b"\0") + b"0000644\0" + b"0000000\0" * 2 + b"%011o\0" % (8 * 10**9) + b"00000000000\0"
hdr += b"        0" + b"\0" * 100 + b"ustar\x0000" + b"\0" * 247
hdr = hdr[:148] + b"%06o\0 " % (sum(hdr) & 0o777777) + hdr[156:]
open("dilute.tar.bz2", "wb").write(bz2.compress(hdr + os.urandom(1 << 20)) + bz2.compress(b"\0" * (45 << 20)) * 4000)
PY
expect "a tar.bz2 whose bomb follows a megabyte of noise: the listing stops" 7 wap read dilute.tar.bz2
expect "... a member looked for past it" 7 wap read dilute.tar.bz2 --member nothere
rm -f dilute.tar.bz2

# the budget is the call's: seven compressed files of 180 MiB each
mkdir -p bombs && python3 - bombs <<'PY'
import bz2, sys
one = bz2.compress(b"A" * (45 << 20))
for i in range(7):
    open("%s/b%d.bz2" % (sys.argv[1], i), "wb").write(one * 4)
PY
expect "grep -z over seven archives of 180 MiB" 1 wap grep -z BBB bombs --json
jcheck "the archives past 256 MiB in all are named, and why" "$OUT" \
	'5 <= len(j["archivesCut"]) <= 6 and all("256 MiB" in c["reason"] for c in j["archivesCut"])'
# the budget is shared as the archives unpack, in every worker: four
# members of 225 MiB read side by side were each held whole (fifth review)
mkdir -p bombs && python3 - bombs <<'PY'
import bz2, sys
one = bz2.compress(b"A" * (45 << 20))
for i in range(4):
    open("%s/b%d.bz2" % (sys.argv[1], i), "wb").write(one * 5)
PY
expect "grep -z -j 4 over four archives of 225 MiB" 1 wap grep -z -j 4 BBB bombs --json
jcheck "at most the one budget unpacked: three or four cut" "$OUT" \
	'len(j["archivesCut"]) >= 3 and all("256 MiB" in c["reason"] for c in j["archivesCut"])'
if [ -z "${ASAN:-}" ]; then
	rss=$(rss_of "$WAP" --root "$PWD" grep -z -j 4 BBB bombs)
	if [ "$rss" -lt 500 ]; then ok "grep -z -j 4: memory within the one budget (${rss} MB)"; else fail "grep -z -j 4: ${rss} MB"; fi
fi
rm -rf bomb.bz2 bomb.tar.bz2 bombs

# ---- fifth review: what libarchive does before the reader counts ----
# 7z: the list of members, packed, unpacked whole in the first look for one
python3 - <<'PY'
import lzma, struct, zlib
def num(v):		# 7z's numbers
    for extra in range(9):
        if v < 1 << (7 * (extra + 1)) or extra == 8:
            hi = v >> (8 * extra) if extra < 8 else 0
            return bytes([(0xff00 >> extra) & 0xff | hi]) + (v & ((1 << 8 * extra) - 1)).to_bytes(extra, "little")
def sevenz(name, size):	# a list of members: one property of SIZE bytes
    head = b"\x01\x05" + num(1) + b"\x19" + num(size) + b"\0" * size + b"\0\0"
    f = [{"id": lzma.FILTER_LZMA1, "dict_size": 1 << 20}]
    packed = lzma.compress(head, format=lzma.FORMAT_RAW, filters=f)
    props = bytes([93]) + struct.pack("<I", 1 << 20)
    info = (b"\x17\x06" + num(0) + num(1) + b"\x09" + num(len(packed)) + b"\x00"
            b"\x07\x0b" + num(1) + b"\x00" + num(1) + b"\x23\x03\x01\x01" + num(5) + props +
            b"\x0c" + num(len(head)) + b"\x00\x00")
    start = struct.pack("<QQI", len(packed), len(info), zlib.crc32(info))
    open(name, "wb").write(b"7z\xbc\xaf\x27\x1c\x00\x04" + struct.pack("<I", zlib.crc32(start)) +
                           start + packed + info)
sevenz("list.7z", 80 << 20)
PY
expect "a 7z whose packed list unpacks to 80 MiB: refused" 7 wap read list.7z
has "says why" "$ERR" "the list of members of list.7z unpacks to 83886"
expect "... by grep -z, said" 1 wap grep -z --json x list.7z
jcheck "named in archivesCut" "$OUT" '"list of members" in j["archivesCut"][0]["reason"]'
if [ -z "${ASAN:-}" ]; then
	rss=$(rss_of "$WAP" --root "$PWD" read list.7z)
	if [ "$rss" -lt 64 ]; then ok "the 7z refused before it is unpacked (${rss} MB)"; else fail "the 7z: ${rss} MB"; fi
fi
rm -f list.7z
# a start header whose list of members lies past the file's end (here said
# to be 2^63 bytes in a file of 118): libarchive asked its reader for as
# much of the list at once as a field inside it said, and allocated that
# (1 GB for far.7z; vast.7z's 725 PB, past 1 TB, had ASan abort): found by
# tests/fuzz/fuzz_archive, its input kept in tests/fuzz/seeds-archive
echo N3q8ryccAASX18zYDAAAAAAAAABCAB2IedT/fwAAnTFoZWxsbwp3b3JsZAoBBAYAAQkMAAcLAQABAQAMDAAICgH/XcXEAAAFARENAGEALgB0AHgAdAAAAP////////8HFAoBANBGtweLgN0BFQYBACCApIEAAA== |
	base64 -d > vast.7z
echo N3q8ryccAASX18zYDAAAAAAAAABCAB2IedT/fwAAnTFoZWxsbwp3b3JsZAoBBAYAAQkMAAcLAQABAQAMDAAICgH/XcXEAAAFARENAGEALgB0AHgAdAAAAP//AAAAQAAAAAABANBGtweLgN0BFQYBACCApIEAAA== |
	base64 -d > far.7z
for f in far.7z vast.7z; do
	expect "$f: a 7z whose list of members lies past its end is refused" 125 wap read $f
	has "$f: says why" "$ERR" "Cannot read archive $f: damaged 7-Zip header (its list of members"
	has "$f: with the sizes" "$ERR" "lies past the end of the file, $(wc -c < $f) bytes)"
	expect "$f: its member too" 125 wap read "$f//a.txt"
	# as any file that does not open as an archive: its own bytes, binary
	expect "$f: grep -z takes it as a file" 1 wap grep -z --json hello $f
	jcheck "$f: a binary file, skipped" "$OUT" 'j["binaryFilesSkipped"] == 1 and j["filesSearched"] == 1'
done
rm -f far.7z vast.7z
if command -v 7z >/dev/null; then
	mkdir -p 7in && echo "alpha one" > 7in/a.txt && echo "beta two" > 7in/b.txt
	for hc in on off; do
		(cd 7in && 7z a -bd -mhc=$hc ../h$hc.7z a.txt b.txt >/dev/null)
		expect "a 7z made by 7z, its list packed ($hc): listed" 0 wap read h$hc.7z
		has "... its members" "$OUT" "b.txt"
		expect "... a member read" 0 wap read h$hc.7z//b.txt
		has "... its text" "$OUT" "beta two"
		expect "... searched by grep -z" 0 wap grep -z -l two h$hc.7z
		same "... the member named" "$OUT" "h$hc.7z//b.txt"
	done
	rm -rf 7in hon.7z hoff.7z
else
	ok "# SKIP 7z archives made by 7z: no 7z (p7zip-full)"
fi
# the formats wap reads are tar, zip and 7z (DESIGN §7): a gzip'd cpio of
# 100,000 hard links (libarchive pairs them in quadratic time) is a
# compressed file, searched as one
python3 - <<'PY'
import gzip
out = []
for i in range(100000):
    name = b"f%d\0" % i
    h = b"070701" + b"".join(b"%08x" % v for v in (i + 1, 0o100644, 0, 0, 2, 0, 0, 0, 0, 0, 0, len(name), 0))
    out.append(h + name + b"\0" * (-(110 + len(name)) % 4))
name = b"TRAILER!!!\0"
out.append(b"070701" + b"%08x" % 0 * 11 + b"%08x" % len(name) + b"%08x" % 0 + name + b"\0" * (-(110 + len(name)) % 4))
open("links.cpio.gz", "wb").write(gzip.compress(b"".join(out)))
PY
expect "a cpio.gz: read as a compressed file" 0 wap read links.cpio.gz --json
jcheck "... one member, not 100,000" "$OUT" 'j.get("members") is None or len(j["members"]) == 1'
expect "grep -z -a -c in it: quick, one file" 0 timeout 20 wap grep -z -a -c TRAILER links.cpio.gz
same "... counted in the one file" "$OUT" "links.cpio.gz:1"
rm -f links.cpio.gz
# grep -c over many files is linear: a file past the cut still counted
# toward the next sort of all, every few hundred files (200,000 files, 17 s;
# 100,000 4.5 s, 25,000 0.3 s)
python3 - <<'PY'
import gzip
def member(i):	# a tar header of "d/fNNNNNN.txt", 2 bytes, and its block
    h = bytearray(512)
    name = b"d/f%06d.txt" % i
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[124:136] = b"%011o\0" % 2
    h[136:148] = b"%011o\0" % 0
    h[156:157] = b"0"
    h[257:265] = b"ustar\x0000"
    h[148:156] = b"        "
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h) + b"x\n".ljust(512, b"\0")
for n in (25000, 100000):
    open("m%d.tar.gz" % n, "wb").write(gzip.compress(b"".join(member(i) for i in range(n)) + b"\0" * 1024, 1))
PY
cpu_of() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$@"; }
expect "a tar.gz of 100,000 members: grep -z -c" 0 wap grep -z -c x m100000.tar.gz --json
jcheck "... every member counted, the first shown" "$OUT" 'j["totalMatches"] == 100000 and j["filesWithMatches"] == 100000 and j["isTruncated"]'
a=$(cpu_of "$WAP" --root "$PWD" grep -z -c x m25000.tar.gz)
b=$(cpu_of "$WAP" --root "$PWD" grep -z -c x m100000.tar.gz)
if python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(b > 8 * max(a, 0.05))' "$a" "$b"; then
	ok "grep -z -c: 4 times the members, $(python3 -c "print(round($b / max($a, 0.01), 1))") times the CPU (${a} s, ${b} s)"
else
	fail "grep -z -c: 25,000 members ${a} s of CPU, 100,000 ${b} s"
fi
rm -f m25000.tar.gz m100000.tar.gz
# no outside program unpacks anything: a gzip'd stream that starts as an
# lrzip, lzop or grzip one made libarchive look for those on PATH
mkdir -p "$T/fakebin"
for p in lrzip lzop grzip; do
	printf '#!/bin/sh\ntouch "%s/ran-%s"\n' "$T" "$p" > "$T/fakebin/$p" && chmod +x "$T/fakebin/$p"
done
printf 'LRZI\0\6xxxxxxxxxxxxxxxxxxxxxxxx' | gzip > lrz.gz
printf '\211LZO\0\r\n\032\nxxxxxxxxxxxxxxxxx' | gzip > lzo.gz
printf 'GRZipII\0\2\4:)xxxxxxxxxxxxxxxxxxxx' | gzip > grz.gz
for f in lrz.gz lzo.gz grz.gz; do
	PATH="$T/fakebin:$PATH" wap read "$f" >/dev/null 2>&1
	PATH="$T/fakebin:$PATH" wap grep -z x "$f" >/dev/null 2>&1
done
same "no outside decompressor was run" "$(ls "$T" | grep -c '^ran-')" 0
rm -f lrz.gz lzo.gz grz.gz

# ---- --replace makes of a line what is shown, and --write holds the file
# to maxFileSize: a 1 MB line of matches with a 1,000-byte replacement
# would be 1 GB ----
python3 -c 'import sys; sys.stdout.write("a" * (1 << 20) + "\n")' > oneline.txt
R=$(python3 -c 'print("X" * 1000)')
expect "--replace on a 1 MB line of matches" 0 wap grep a oneline.txt --replace "$R" --json
jcheck "the line shown cut, said to be longer" "$OUT" \
	'j["matches"][0]["matchText"].startswith("X" * 2000 + " [... line cut at 2000 characters; more than ")'
expect "the CLI's text, the same" 0 wap grep a oneline.txt --replace "$R"
has "cut" "$OUT" "[... line cut at 2000 characters; more than"
head -c 3000 oneline.txt > short.txt && echo >> short.txt
expect "a line replaced whole is still counted" 0 wap grep a short.txt --replace b --json
has "bytes in all" "$OUT" "line cut at 2000 characters; 3000 bytes in all"
if [ -z "${ASAN:-}" ]; then
	for a in --json -o; do
		rss=$(rss_of "$WAP" grep a oneline.txt --replace "$R" $a)
		if [ "$rss" -lt 64 ]; then ok "--replace $a: bounded memory (${rss} MB)"; else fail "--replace $a: ${rss} MB"; fi
	done
else
	ok "--replace: bounded memory # SKIP ASan's shadow memory"
fi
# a line is held whole up to 256 MiB, then searched in pieces that size:
# a sparse file of 20 GB with no newline grew grep until the kernel killed it
(echo hello; head -c 9000 /dev/zero | tr '\0' x) > sparse.txt && truncate -s 600M sparse.txt
expect "grep in a sparse file of 600 MB with no newline after its start" 0 wap grep -c hello sparse.txt
if [ -z "${ASAN:-}" ]; then
	rss=$(rss_of "$WAP" grep zzz sparse.txt)
	if [ "$rss" -lt 400 ]; then ok "a 600 MB line: bounded memory (${rss} MB)"; else fail "a 600 MB line: ${rss} MB"; fi
fi
expect "read of it: its long line cut, counted only so far" 0 wap read sparse.txt --json
jcheck "more than 64 MiB of characters, the total not known" "$OUT" \
	'"line cut: 2000 of more than " in j["content"] and j["totalLines"] is None'
rm -f sparse.txt
head -c 200000 oneline.txt > grow.txt && echo >> grow.txt && sum0=$(md5sum < grow.txt)
expect "--write that would grow a file past maxFileSize: exit 2" 2 wap grep a grow.txt --replace "$R" --write
has "says why" "$ERR" "File too large: grow.txt would grow past 1048576 bytes replaced (limits.maxFileSize); nothing was written"
same "the file is as it was" "$(md5sum < grow.txt)" "$sum0"
printf 'a\n%s\n' "$(head -c 1048000 oneline.txt)" > edge.txt
expect "-U --replace on the 1 MB line: made as far as shown" 0 wap grep -U a oneline.txt --replace '$0$0'
has "cut, said to be longer" "$OUT" "[... line cut at 2000 characters; more than 1048576 bytes in all]"
expect "a replacement with a newline, the same" 0 wap grep a oneline.txt --replace "$(printf '$0$0\nx')"
has "cut, said to be longer (newline)" "$OUT" "[... replaced text cut at 1048576 bytes; more in all]"
expect "--write: one that stays within it is written" 0 wap grep '^a$' edge.txt --replace bb --write
same "replaced" "$(head -n 1 edge.txt)" "bb"
rm -f oneline.txt short.txt grow.txt edge.txt
