# microvm: scripts/microvm-parity, the calls of scripts/parity.calls with
# the static binary (build/static/wap, make static) on the host and inside
# a KVM microVM (QEMU's microvm machine, what Firecracker is), compared
# answer by answer.  Skipped, with the reason, without /dev/kvm, qemu, a
# kernel, a static busybox or the static binary, under ASan, and where this
# /dev/kvm cannot run the kernel (e.g. kvm_pvm, a nested hypervisor that
# runs only PVM guest kernels: the kernel never reaches /init).
. tests/lib.sh
skip() { ok "microvm parity # SKIP $1"; exit 0; }
[ "${ASAN:-}" = 1 ] && skip "an ASan build: the guest runs the static build (make static)"
[ -w /dev/kvm ] || skip "no usable /dev/kvm"
command -v qemu-system-x86_64 >/dev/null 2>&1 || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
busybox=$(command -v busybox)
[ -n "$busybox" ] && file -L "$busybox" | grep -q 'statically linked' ||
	skip "no static busybox (apt-get install busybox-static)"
kernel=${VMLINUZ:-$(ls -v /boot/vmlinuz-* 2>/dev/null | tail -n 1)}
[ -r "$kernel" ] || skip "no kernel in /boot (apt-get install linux-image-amd64)"
static=$(dirname "$WAP")/build/static/wap
[ -x "$static" ] || skip "no $static (make static)"
if [ -d /sys/module/kvm_pvm ] && [ ! -d /sys/module/kvm_intel ] && [ ! -d /sys/module/kvm_amd ]; then
	skip "/dev/kvm is kvm_pvm (a nested PVM hypervisor: it runs only PVM guest kernels, not $(basename "$kernel"))"
fi
MICROVM_TIMEOUT=45 scripts/microvm-parity "$static" "$kernel" > "$T/mv" 2> "$T/mv.err"
rc=$?
[ "$rc" = 3 ] && skip "$(cat "$T/mv.err")"
calls=$(grep -c '^microvm: ' "$T/mv")
if [ "$rc" = 2 ] || [ "$calls" = 0 ]; then
	fail "microvm parity: the guest did not answer: $(head -c 600 "$T/mv.err")"
	exit 0
fi
same "microvm parity: every call answers in a KVM microVM as on the host ($(tail -n 1 "$T/mv" | cut -c10-))" \
	"$(grep -c 'microvm=DIFFERENT' "$T/mv")" 0
[ "$rc" = 0 ] || sed 's/^/# /' "$T/mv" | head -n 40
