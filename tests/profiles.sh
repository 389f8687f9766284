# profiles: each profile is its document (tests/serve/profiles.py): whole
# reads where the document reads whole files, ACP's result objects and
# absolute paths, each profile's own limits.
. tests/lib.sh
python3 tests/serve/profiles.py "$WAP" "$W" > "$T/profiles" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) fail "${line#not ok * - }" ;;
	*) fail "profiles: $line" ;;
	esac
done < "$T/profiles"
