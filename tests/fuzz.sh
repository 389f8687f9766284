# fuzz: the libFuzzer targets in tests/fuzz/ run without libFuzzer
# (tests/fuzz/replay.c): their seeds, then a fixed sequence of mutants of
# them; under `make check ASAN=1` with ASan+UBSan.  Nothing may crash.
. tests/lib.sh
if [ -z "${FUZZ_DIR:-}" ] || [ ! -d "$FUZZ_DIR" ]; then
	ok "fuzz targets # SKIP no FUZZ_DIR (run through make check)"
	exit 0
fi
n=${FUZZ_ITERS:-100000}
run() { # TARGET SEED...
	t=$1; shift
	if out=$(cd "$T" && "$FUZZ_DIR/fuzz_$t" "$n" "$@" 2>&1); then
		ok "fuzz_$t: $out, no crash"
	else
		fail "fuzz_$t crashed (rerun with REPLAY_TRACE=1 for the input): $(printf %s "$out" | tail -n 8 | tr '\n' ' ')"
	fi
}
R=$(pwd)
run glob "$R"/tests/fuzz/seeds-glob/*
run json "$R"/tests/fuzz/seeds-json/* "$R"/tests/fuzz/seeds-jsonrpc/*
run jsonrpc "$R"/tests/fuzz/seeds-jsonrpc/*
run patch "$R"/tests/patches/*/patch
run ignore "$R"/tests/fuzz/seeds-ignore/*
run lsp "$R"/tests/fuzz/seeds-lsp/*
run config "$R"/tests/fuzz/seeds-config/*
run archive "$R"/tests/fuzz/seeds-archive/*
