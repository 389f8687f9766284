# durability: a write killed midway leaves the old content; concurrent
# writers with one expected version: exactly one wins, the others CONFLICT.
. tests/lib.sh

printf 'OLD CONTENT\n' > "$W/f.txt"
OLDSUM=$(md5sum < "$W/f.txt")

# 1. killed while the content is still arriving on a slow stdin
mkfifo "$T/pipe"
python3 -c '
import sys, time
with open(sys.argv[1], "w") as p:
    p.write("NEW PARTIAL " * 1000); p.flush(); time.sleep(20); p.write("never")' "$T/pipe" &
producer=$!
wap write f.txt < "$T/pipe" &
writer=$!
sleep 0.5
check "the writer is still running, midway" kill -0 "$writer"
kill -9 "$writer"; wait "$writer" 2>/dev/null
kill "$producer" 2>/dev/null; wait "$producer" 2>/dev/null
same "old content intact after SIGKILL" "$(md5sum < "$W/f.txt")" "$OLDSUM"
check "no temp file left" test -z "$(find "$W" -name '.wap-*')"

# 2. killed at random points of a large write (while writing, fsyncing,
#    renaming): always the old bytes or the new ones, never a mix
head -c 48000000 /dev/zero | tr '\0' 'n' > "$T/new.src"
printf '{"limits": {"maxFileSize": 64000000}}' > "$T/big.json"
NEWSUM=$(md5sum < "$T/new.src")
mixed=0 old=0 new=0
for d in 0.02 0.05 0.08 0.12 0.16 0.2 0.3 0.45; do
	cp "$W/f.txt" "$T/before"
	wap write --config "$T/big.json" f.txt < "$T/new.src" & w=$!
	sleep "$d"; kill -9 "$w" 2>/dev/null; wait "$w" 2>/dev/null
	s=$(md5sum < "$W/f.txt")
	if [ "$s" = "$OLDSUM" ]; then old=$((old+1))
	elif [ "$s" = "$NEWSUM" ]; then new=$((new+1)); printf 'OLD CONTENT\n' > "$W/f.txt"
	else mixed=$((mixed+1)); fi
done
same "never a partial file (old $old, new $new)" "$mixed" 0
echo "# killed writers left: old $old times, new $new times"
check "no temp file left by killed writers" test -z "$(find "$W" -name '.wap-*')"

# 3. racing writers holding the same version
for round in 1 2 3 4 5; do
	printf 'base %s\n' "$round" > "$W/r.txt"
	V=$(git hash-object "$W/r.txt")
	for i in 1 2 3 4; do
		(wap write r.txt --expected-version "$V" --content "writer $i" >/dev/null 2>"$T/e$i"
		 echo $? > "$T/s$i") &
	done
	wait
	wins=0 conflicts=0 winner=
	for i in 1 2 3 4; do
		case $(cat "$T/s$i") in
		0) wins=$((wins+1)); winner=$i;;
		13) conflicts=$((conflicts+1)); grep -q "^wap write: Conflict: r.txt changed since version $V" "$T/e$i" || conflicts=99;;
		esac
	done
	same "round $round: exactly one writer wins" "$wins" 1
	same "round $round: the others get CONFLICT (exit 13)" "$conflicts" 3
	same "round $round: the file holds the winner's bytes" "$(cat "$W/r.txt")" "writer $winner"
done

# writers without a version, 30 rounds of 4: a file renamed over while a
# writer names it must not leave a file called "r.txt (deleted)"
for round in $(seq 30); do
	for i in 1 2 3 4; do wap write r.txt --content "plain $i" >/dev/null 2>&1 & done
	wait
done
check "racing plain writes: no stray file" test "$(ls "$W" | grep -c deleted)" = 0
case $(cat "$W/r.txt") in "plain "[1-4]) ok "racing plain writes: one writer's bytes";; *) fail "racing plain writes: $(cat "$W/r.txt")";; esac

# two writers through both doors
printf 'start\n' > "$W/two.txt"
V=$(git hash-object "$W/two.txt")
(wap-write two.txt --expected-version "$V" --content A >/dev/null 2>&1; echo $? > "$T/a") &
(wap write two.txt --expected-version "$V" --content B --json > "$T/bout" 2>&1; echo $? > "$T/b") &
wait
same "one of two wins" "$(cat "$T/a" "$T/b" | sort | tr '\n' ' ')" "0 13 "
if [ "$(cat "$T/b")" = 13 ]; then
	jcheck "the loser's JSON error" "$(cat "$T/bout")" 'j["code"] == "CONFLICT"'
else
	jcheck "the winner's JSON result" "$(cat "$T/bout")" 'j["success"] is True'
fi

# concurrent appends are serialised: none is lost
: > "$W/log.txt"
for i in 1 2 3 4 5 6; do wap write log.txt --mode append --content "entry $i
" >/dev/null & done
wait
same "every append kept" "$(sort "$W/log.txt" | tr '\n' ' ')" "entry 1 entry 2 entry 3 entry 4 entry 5 entry 6 "
