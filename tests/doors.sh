# doors: one road from every door.  The same ops through the CLI, MCP over
# stdio and HTTP, the Agent Client Protocol (stdio) and the Agent Control
# Protocol (WebSocket) give the same workspace, the same audit lines and
# the same contents; a policy (read-only, restrictedPaths, requireApproval
# with a refusing approver) refuses the same op identically on all five.
. "$(dirname "$0")/lib.sh"
WSDIR=$(cd "$(dirname "$0")/ws" && pwd)
if [ ! -d "$WSDIR/node_modules/ws" ]; then
	(cd "$WSDIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) || { fail "npm ci in tests/ws"; exit 1; }
fi
python3 "$(dirname "$0")/serve/fivedoors.py" "$WAP" "$T" "$WSDIR" > "$T/doors.tap" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) fail "${line#not ok * - }" ;;
	"#"*) echo "$line" ;;
	*) echo "# $line" ;;
	esac
done < "$T/doors.tap"
grep -q '^ok ' "$T/doors.tap" || fail "the five-door test ran no check"
