# container: the OCI image of `make image` (scripts/image) under podman:
# read-only and non-root, /health, an MCP read of a mounted workspace, git
# and an archive search inside the image, two replicas on one volume doing
# read-modify-write appends with expected_version (no line lost), SIGTERM,
# the static binary alone in an image, and the kustomize manifests under
# `podman kube play`.  Skipped, with the reason, where podman is missing or
# cannot run a container.  The image is rebuilt only when what goes into it
# changed (scripts/image labels it with a hash).
#
# Where runc cannot set the rlimits podman asks for ("error setting rlimit
# type 7: operation not permitted", as in some nested sandboxes), the
# containers.conf in deploy/image (default_ulimits = []) and --ulimit host
# are what make it run; this test uses both unless CONTAINERS_CONF is set.
. tests/lib.sh
skip_rest() { ok "container tests # SKIP $1"; exit 0; }
[ "${ASAN:-}" = 1 ] && skip_rest "an ASan build: the image holds the normal build (make image)"
command -v podman >/dev/null 2>&1 && command -v buildah >/dev/null 2>&1 ||
	skip_rest "no podman/buildah here (scripts/container-deps installs them)"
command -v curl >/dev/null 2>&1 || skip_rest "no curl"
lazyh=$(dirname "$WAP")/build/norm/lazy.h
[ -f "$lazyh" ] || skip_rest "no $lazyh next to $WAP (build with make)"
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/deploy/image/containers.conf}
IMG=${WAP_IMAGE:-localhost/wap:latest}
SIMG=localhost/wap-static-test:latest
TAG=wap-test-$$
CTRS=
cleanup() {
	for c in $CTRS; do podman rm -f -t 0 "$c" >/dev/null 2>&1; done
	[ -f "$T/kube.yaml" ] && podman kube down "$T/kube.yaml" >/dev/null 2>&1
	podman volume rm -f "ws-$TAG" >/dev/null 2>&1
	podman rmi -f "$SIMG" "$SIMG-installed" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
SEC="--ulimit host --read-only --cap-drop ALL --security-opt no-new-privileges"
run() { podman run --rm $SEC "$@"; }

# ---- the image ----
t0=$(date +%s)
if ! scripts/image "$WAP" "$lazyh" "$IMG" > "$T/build.log" 2>&1; then
	fail "image builds: $(tail -3 "$T/build.log")"
	exit 0
fi
size=$(podman image inspect --format '{{.Size}}' "$IMG")
ok "image $IMG: $((size / 1024 / 1024)) MiB, built or found up to date in $(($(date +%s) - t0)) s ($(tail -1 "$T/build.log" | sed 's/^image: //'))"
# can this machine run a container at all?
if ! podman run --rm --ulimit host "$IMG" --version > "$T/v" 2>&1; then
	skip_rest "podman cannot run a container here: $(head -c 200 "$T/v")"
fi
same "wap --version in the image" "$(cat "$T/v")" "$("$WAP" --version)"
[ "$size" -lt $((40 * 1024 * 1024)) ] && ok "image under 40 MiB" || fail "image is $size bytes"
icu=$(run "$IMG" stat --root /lib/x86_64-linux-gnu --json libicudata.so.72 2>/dev/null)
if [ -n "$icu" ]; then
	jcheck "libicudata is the stub, not 31 MB of data" "$icu" 'j["size"] < 65536'
else
	ok "libicudata is the stub # SKIP no libicudata.so.72 in this image"
fi

# ---- read-only, non-root ----
J=$(run "$IMG" stat --root /proc --json 1)
jcheck "runs as uid 65532 (pid 1 is wap)" "$J" 'j["uid"] == 65532 and j["gid"] == 65532'
expect "root filesystem is read-only (even for uid 0)" 6 \
	podman run --rm $SEC --user 0 "$IMG" write --root /etc probe --content x
expect "... and writable without --read-only (so the refusal above is the read-only mount)" 0 \
	podman run --rm --ulimit host --user 0 "$IMG" write --root /etc probe --content x

# ---- git and an archive search inside the image ----
mkdir -p "$T/g" && chown 65532:65532 "$T/g" 2>/dev/null || chmod 777 "$T/g"
echo "needle in a tarball" > "$T/inner.txt" && tar czf "$T/g/pack.tgz" -C "$T" inner.txt
V="-v $T/g:/workspace"
expect "git init in the image" 0 run $V "$IMG" git init
expect "write in the image" 0 run $V "$IMG" write notes.md --content 'first'
expect "git commit in the image (author from the image's environment)" 0 \
	run $V "$IMG" git commit -m "from the container" notes.md
J=$(run $V "$IMG" git log --json)
jcheck "git log: the commit, by wap" "$J" 'j["entries"][0]["message"].startswith("from the container") and j["entries"][0]["author"] == "wap"'
expect "grep -z searches inside the archive" 0 run $V "$IMG" grep -z needle
has "the member found" "$OUT" "pack.tgz//inner.txt:1:needle in a tarball"

# ---- two replicas on one volume ----
TOKEN=container-test-$$
export TOKEN
chown 65532:65532 "$W" 2>/dev/null || chmod 777 "$W"
echo hello > "$W/a.txt" && chmod 666 "$W/a.txt"
for r in a b; do
	podman run -d --name "$TAG-$r" $SEC -v "$W:/workspace" -p 127.0.0.1::8080 \
		-e WAP_TOKEN="$TOKEN" "$IMG" > /dev/null &&
		CTRS="$CTRS $TAG-$r"
done
ports=
for r in a b; do
	p=$(podman port "$TAG-$r" 8080 2>/dev/null | sed 's/.*://' | head -1)
	for _ in $(seq 1 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/health")" = 200 ] && break
		sleep 0.1
	done
	ports="$ports $p"
done
set -- $ports
PA=${1:-0} PB=${2:-0}
B=$(curl -s "http://127.0.0.1:$PA/health")
jcheck "/health answers (replica a)" "$B" 'j["status"] == "ok" and j["service"] == "wap"'
same "/health answers (replica b)" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PB/health")" 200
has "default command serves on 0.0.0.0:\$PORT" "$(podman logs "$TAG-a" 2>&1)" "MCP at http://0.0.0.0:8080/mcp"
cat > "$T/mcp.py" <<'EOF'
# mcp.py PORT read PATH | PORT append PATH TAG N | PORT call TOOL JSON:
# a minimal MCP client (the bearer token from $TOKEN)
import json, os, sys, urllib.request
port, what = sys.argv[1], sys.argv[2]
url = "http://127.0.0.1:%s/mcp" % port
sid = None
def rpc(method, params, id=1):
    global sid
    h = {"content-type": "application/json", "accept": "application/json, text/event-stream",
         "host": "localhost", "authorization": "Bearer " + os.environ["TOKEN"]}
    if sid:
        h["mcp-session-id"] = sid
    body = json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()
    with urllib.request.urlopen(urllib.request.Request(url, body, h), timeout=20) as r:
        sid = sid or r.headers.get("mcp-session-id")
        t = r.read().decode()
    if t.startswith("event:") or t.startswith("data:"):
        t = [l[5:] for l in t.splitlines() if l.startswith("data:")][-1]
    return json.loads(t)
def call(name, args):
    r = rpc("tools/call", {"name": name, "arguments": args}, 2)["result"]
    return r.get("isError", False), r.get("structuredContent") or r["content"][0]["text"]
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}})
if what == "call":
    err, sc = call(sys.argv[3], json.loads(sys.argv[4]))
    print(json.dumps({"isError": err, "result": sc}))
elif what == "read":
    err, sc = call("read", {"path": sys.argv[3]})
    print(sc["content"] if not err else "ERROR %s" % sc, end="")
else:
    path, tag, n = sys.argv[3], sys.argv[4], int(sys.argv[5])
    conflicts = 0
    for i in range(n):
        while True:
            err, sc = call("read", {"path": path})
            assert not err, sc
            err, r = call("write", {"path": path, "content": sc["content"] + "%s %d\n" % (tag, i),
                                    "expected_version": sc["version"]})
            if not err:
                break
            assert "CONFLICT" in json.dumps(r), r
            conflicts += 1
    print(conflicts)
EOF
same "MCP read of the mounted workspace" "$(python3 "$T/mcp.py" "$PA" read a.txt 2>&1)" "hello"
: > "$W/log.txt" && chmod 666 "$W/log.txt"
n=25
python3 "$T/mcp.py" "$PA" append log.txt a $n > "$T/ca" 2>&1 &
pa=$!
python3 "$T/mcp.py" "$PB" append log.txt b $n > "$T/cb" 2>&1
wait "$pa"
same "two replicas, $n read-modify-write appends each: every line kept ($(cat "$T/ca") + $(cat "$T/cb") conflicts retried)" \
	"$(sort "$W/log.txt" | tr '\n' ' ')" "$(for r in a b; do for i in $(seq 0 $((n - 1))); do echo "$r $i"; done; done | sort | tr '\n' ' ')"
same "no token, no MCP (401)" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PA/mcp" \
	-H 'host: localhost' -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
	--data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')" 401
# SIGTERM while a 3 s call runs: the call is answered, then wap exits 0
python3 "$T/mcp.py" "$PA" call exec '{"timeout_ms": 3000, "argv": ["wap", "serve", "--http", "127.0.0.1:0", "--no-auth"]}' \
	> "$T/drain" 2>&1 &
dp=$!
sleep 1
t0=$(date +%s)
podman stop -t 20 "$TAG-a" > /dev/null 2>&1
took=$(($(date +%s) - t0))
wait "$dp"
jcheck "SIGTERM drains: the call under way gets its result" "$(cat "$T/drain")" \
	'j["isError"] is False and j["result"]["timed_out"] is True'
same "SIGTERM: exits 0, within the 10 s drain (took ${took} s)" \
	"$(podman inspect --format '{{.State.ExitCode}}' "$TAG-a") $([ "$took" -lt 10 ] && echo fast)" "0 fast"

# ---- parity: the same CLI calls on the host and in the image ----
# under gVisor where runsc is installed (else under runc, the runtime of
# everything above); scripts/parity WAP IMAGE runc runsc runs both
rt=runc
if command -v runsc >/dev/null 2>&1; then
	if podman --runtime "$(command -v runsc)" --runtime-flag network=none run --rm --network none \
			--ulimit host "$IMG" --version > "$T/rv" 2>&1; then
		rt=runsc
	else
		ok "parity under gVisor # SKIP runsc cannot start a sandbox here: $(tail -1 "$T/rv" | head -c 200)"
	fi
else
	ok "parity under gVisor # SKIP no runsc (apt-get install runsc); parity under runc instead"
fi
scripts/parity "$WAP" "$IMG" "$rt" > "$T/parity" 2>&1
calls=$(grep -c "$rt=" "$T/parity")
if [ "$calls" -lt 10 ]; then
	fail "parity: only $calls calls ran: $(tail -3 "$T/parity")"
elif [ "$rt" = runsc ]; then
	same "parity: all $calls calls, exec included, answer under gVisor (runsc) as on the host" \
		"$(grep -c 'runsc=DIFFERENT' "$T/parity")" 0
else
	same "parity: $calls CLI calls answer in the image (runc) as on the host" \
		"$(grep -c 'runc=DIFFERENT' "$T/parity")" 0
fi
grep -v '^exec ' "$T/parity" | grep -q "$rt=DIFFERENT" && sed 's/^/# /' "$T/parity" | head -40

# ---- the static binary, alone in an image ----
if [ -x build/static/wap ] && [ "$(dirname "$WAP")" = "$PWD" ]; then
	if scripts/image --static build/static/wap build/static/lazy.h "$SIMG" > "$T/sbuild.log" 2>&1; then
		ok "static image: $(tail -1 "$T/sbuild.log" | sed 's/^image: //')"
		same "static: --version" "$(podman run --rm --ulimit host "$SIMG" --version 2>&1)" "$("$WAP" --version)"
		podman rm -f "$TAG-inst" >/dev/null 2>&1
		expect "static: --install -s /bin" 0 podman run --name "$TAG-inst" --ulimit host "$SIMG" --install -s /bin
		podman commit -q "$TAG-inst" "$SIMG-installed" >/dev/null 2>&1
		podman rm -f "$TAG-inst" >/dev/null 2>&1
		SV="-v $T/g:/w"
		expect "static: wap-read through its link" 0 \
			podman run --rm --ulimit host $SV --entrypoint /bin/wap-read "$SIMG-installed" --root /w notes.md
		same "static: read's text" "$OUT" "1: first"
		expect "static: wap-grep -z through its link" 0 \
			podman run --rm --ulimit host $SV --entrypoint /bin/wap-grep "$SIMG-installed" --root /w -z needle
		has "static: the member found" "$OUT" "pack.tgz//inner.txt:1:needle"
	else
		fail "static image builds: $(tail -3 "$T/sbuild.log")"
	fi
else
	ok "static binary alone in an image # SKIP no build/static/wap (make static)"
fi

# ---- the kustomize manifests under podman kube play ----
if ! kubectl kustomize deploy/kubernetes > "$T/rendered.yaml" 2> "$T/k.err"; then
	ok "kube play of deploy/kubernetes # SKIP cannot render it: $(command -v kubectl >/dev/null || echo 'no kubectl; ')$(head -c 200 "$T/k.err")"
else
	ok "kubectl kustomize deploy/kubernetes renders"
	# podman knows no downward API (metadata.namespace), publishes every
	# containerPort on the host, runs every replica and probes with curl:
	# adapt a copy
	python3 - "$T/rendered.yaml" "$T/kube.yaml" "$IMG" "$TAG" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    d["metadata"]["name"] = sys.argv[4] if d["kind"] == "Deployment" else d["metadata"]["name"]
    if d["kind"] == "PersistentVolumeClaim":
        d["metadata"]["name"] = "ws-" + sys.argv[4]
    if d["kind"] != "Deployment":
        continue
    d["spec"]["replicas"] = 1
    s = d["spec"]["template"]["spec"]
    for v in s["volumes"]:
        if "persistentVolumeClaim" in v:
            v["persistentVolumeClaim"]["claimName"] = "ws-" + sys.argv[4]
    for c in s["containers"]:
        c["image"] = sys.argv[3]
        c.pop("ports", None)
        # podman 4 turns an httpGet probe into `sh -c curl ...` run inside
        # the container, which has neither; the test asks /health itself
        for p in ("readinessProbe", "livenessProbe"):
            c.pop(p, None)
        for e in c["env"]:
            if e["name"] == "POD_NAMESPACE":
                e.pop("valueFrom"); e["value"] = "default"
            if e["name"] == "WAP_TOKEN":   # the Secret wap-token
                e.pop("valueFrom"); e["value"] = "kube-play-token"
yaml.safe_dump_all([d for d in docs if d["kind"] != "Service"], open(sys.argv[2], "w"))
EOF
	(cd "$T" && podman kube play kube.yaml) > "$T/kp.log" 2>&1
	pod=$TAG-pod-0
	ip=$(podman pod inspect "$pod" --format '{{.InfraContainerID}}' 2>/dev/null | xargs -r podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' 2>/dev/null)
	code=000
	for _ in $(seq 1 50); do
		code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://$ip:8080/health")
		[ "$code" = 200 ] && break
		sleep 0.1
	done
	same "kube play: /health answers on the pod (${ip:-no ip})" "$code" 200
	same "kube play: the Deployment's securityContext (read-only root, uid 65532, no caps)" \
		"$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}} {{len .EffectiveCaps}}' "$pod-wap" 2>&1)" \
		"true 65532:65532 0"
	podman logs "$pod-wap" > "$T/kl" 2>&1
	has "kube play: the langop profile from the Deployment's env" "$(cat "$T/kl")" "(profile langop)"
	lacks "kube play: the token is the Secret's, not a generated one" "$(cat "$T/kl")" "bearer token in"
	same "kube play: /mcp wants that token" \
		"$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://$ip:8080/mcp" -H 'host: localhost' \
			-H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
			-H 'authorization: Bearer kube-play-token' \
			--data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}') \
$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://$ip:8080/mcp" -H 'host: localhost' \
			-H 'content-type: application/json' --data-binary '{}')" "200 401"
fi
