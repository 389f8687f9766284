/* replay.c - run a libFuzzer target without libFuzzer: every seed file
 * given, then N inputs mutated from them by a fixed pseudo-random sequence
 * (byte flips, inserts of syntax characters, deletions, duplicated and
 * spliced chunks).  `make check` builds each tests/fuzz/fuzz_*.c with it
 * (and under ASan+UBSan with ASAN=1), so the parsers meet a few thousand
 * hostile inputs on every run; scripts/fuzz is for long runs with coverage.
 *
 *   replay N SEEDFILE...     a crash fails the test
 *
 * The sequence is fixed, so a crash comes back on every run; with
 * REPLAY_TRACE=1 each input is first written to replay-last.bin, which
 * then holds the one that crashed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int trace;

static void run(const unsigned char *in, size_t n)
{
	if (trace) {
		FILE *f = fopen("replay-last.bin", "wb");
		if (f) {
			fwrite(in, 1, n, f);
			fclose(f);
		}
	}
	LLVMFuzzerTestOneInput(in, n);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned char *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 4096) {
			unsigned char *nb = realloc(b, cap = cap * 2 + 4096);
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	*len = n;
	return b;
}

/* a mutant of A (with B for splices) in OUT (capacity CAP); its length */
static size_t mutate(const unsigned char *a, size_t an, const unsigned char *b, size_t bn,
		     unsigned char *out, size_t cap)
{
	static const char syntax[] = "*?[]{}!\\,/\n\r\t \"':{}[]-+@#$0\xff\x80\xc3\xe2";
	size_t n = an < cap ? an : cap;
	int edits = 1 + (int)(next() % 8);

	memcpy(out, a, n);
	while (edits--) {
		size_t at = n ? next() % (n + 1) : 0, k;
		switch (next() % 6) {
		case 0:	/* flip a byte */
			if (at < n)
				out[at] ^= (unsigned char)(1u << (next() % 8));
			break;
		case 1:	/* insert a syntax character */
			if (n < cap) {
				memmove(out + at + 1, out + at, n - at);
				out[at] = (unsigned char)syntax[next() % (sizeof(syntax) - 1)];
				n++;
			}
			break;
		case 2:	/* delete a range */
			k = next() % 16;
			if (at + k > n)
				k = n - at;
			memmove(out + at, out + at + k, n - at - k);
			n -= k;
			break;
		case 3:	/* duplicate a chunk */
			k = next() % 64;
			if (at + k > n)
				k = n - at;
			if (n + k <= cap) {
				memmove(out + at + k, out + at, n - at);
				n += k;
			}
			break;
		case 4:	/* splice in a piece of another seed */
			if (bn) {
				size_t from = next() % bn;
				k = next() % 128;
				if (from + k > bn)
					k = bn - from;
				if (n + k <= cap) {
					memmove(out + at + k, out + at, n - at);
					memcpy(out + at, b + from, k);
					n += k;
				}
			}
			break;
		default:	/* cut the end */
			n = at;
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned char **seed, *buf;
	size_t *len, cap = 1 << 16, ns = 0;
	long iters = argc > 1 ? atol(argv[1]) : 0;
	const char *tr = getenv("REPLAY_TRACE");

	trace = tr && *tr == '1';
	if (argc < 3) {
		fprintf(stderr, "usage: replay N SEEDFILE...\n");
		return 2;
	}
	seed = calloc(argc, sizeof(*seed));
	len = calloc(argc, sizeof(*len));
	buf = malloc(cap);
	if (!seed || !len || !buf)
		return 2;
	for (int i = 2; i < argc; i++) {
		unsigned char *b = load(argv[i], &len[ns]);
		if (!b) {
			fprintf(stderr, "replay: cannot read %s\n", argv[i]);
			return 2;
		}
		run(b, len[ns]);
		seed[ns++] = b;
	}
	for (long i = 0; i < iters; i++) {
		size_t s = next() % ns, t = next() % ns;
		size_t n = mutate(seed[s], len[s], seed[t], len[t], buf, cap);
		/* an exact-size copy, so ASan sees a read past the end */
		unsigned char *in = malloc(n ? n : 1);
		if (!in)
			return 2;
		memcpy(in, buf, n);
		run(in, n);
		free(in);
	}
	printf("%zu seeds and %ld mutants\n", ns, iters);
	for (size_t i = 0; i < ns; i++)
		free(seed[i]);
	free(seed);
	free(len);
	free(buf);
	return 0;
}
