/* core/match.c - PCRE2 matching behind a literal prefilter (see match.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "match.h"
#include "strbuf.h"

#if defined(__x86_64__)
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif
#endif

#define NONE ((size_t)-1)
#define MAXLIT 8

struct lit {
	unsigned char *low;	/* the bytes; letters lower-cased when icase */
	unsigned char *fold;	/* 0x20 where a byte is a letter (icase), else 0 */
	size_t n;
	size_t i1, i2;		/* the two rarest positions */
	bool icase;
};

struct wap_matcher {
	pcre2_code *re;
	long time_ms;		/* the time bound on one buffer */
	bool multiline;
	bool exact;		/* the literals are the whole pattern */
	struct lit lits[MAXLIT];
	size_t nlits;
};

struct wap_mstate {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
	size_t next[MAXLIT];	/* cached next position of each literal */
	size_t from[MAXLIT];	/* the position the cache was computed from */
	bool bylines;		/* the whole buffer hit a PCRE2 limit: go line by line */
	const struct wap_cancel *cancel;
	long t0;		/* when the buffer was begun (ms) */
	unsigned ticks;		/* the clock is read every few calls */
	int error;		/* why matching stopped: a PCRE2 error or WAP_MATCH_* */
	const char *err_p;	/* where: a pointer into the subject */
};

/* Every match runs under these: a pattern that backtracks without end
 * fails in well under a second instead of hanging a server (the JIT
 * honours the match limit; the depth and heap limits bound the
 * interpreter's memory), and the time bound catches the rest. */
#define MATCH_LIMIT 10000000
#define DEPTH_LIMIT 1000000
#define HEAP_LIMIT_KIB (64 * 1024)
#define TIME_MS 20000
/* Without a literal to look for, PCRE2 runs over this much of the buffer
 * at a time (cut at a line end), so a cancel is seen inside a big file. */
#define WINDOW (4u << 20)

static long mono_ms(void)
{
	struct timespec ts;

	/* the coarse clock (a tick's resolution): read between spans of a
	 * subject, where the precise one would be a cost of its own */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* ---- how common a byte is in source text (higher: more common) ---- */

static unsigned char rank(unsigned char c)
{
	static const char *const tiers[] = {
		" ",		/* 255 */
		"etinrsoa",	/* 240 */
		"\n\t",		/* 235 */
		"lcdupmf_",	/* 220 */
		"();,=*",	/* 210 */
		"hgbvxykw",	/* 190 */
		".->/{}\"#01",	/* 180 */
		"ETSRINAOCDL23456789:&[]<+|!'", /* 150 */
		"qjz",		/* 130 */
		"BFGHJKMPQUVWXYZ%\\?@$~`^", /* 120 */
		NULL
	};
	static const unsigned char val[] = { 255, 240, 235, 220, 210, 190, 180, 150, 130, 120 };

	for (int i = 0; tiers[i]; i++)
		if (c && strchr(tiers[i], c))
			return val[i];
	if (c >= 0x80)
		return 60;
	return 20;
}

static unsigned char rank_ci(unsigned char c, bool icase)
{
	if (icase && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
		unsigned a = rank(c | 0x20), b = rank(c & ~0x20);
		return a > b ? a : b;
	}
	return rank(c);
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int lit_init(struct lit *l, const unsigned char *s, size_t n, bool icase)
{
	size_t best1 = 0, best2 = NONE;

	l->low = malloc(n + 1);
	l->fold = malloc(n + 1);
	if (!l->low || !l->fold)
		return -1;
	l->n = n;
	l->icase = icase;
	for (size_t i = 0; i < n; i++) {
		bool a = icase && is_alpha(s[i]);
		l->low[i] = a ? (s[i] | 0x20) : s[i];
		l->fold[i] = a ? 0x20 : 0;
	}
	for (size_t i = 1; i < n; i++)
		if (rank_ci(s[i], icase) < rank_ci(s[best1], icase))
			best1 = i;
	/* the second: as rare, and far from the first (neighbours go together) */
	for (size_t i = 0; i < n; i++) {
		size_t d, d2;
		if (i == best1 || (l->low[i] == l->low[best1]))
			continue;
		d = i > best1 ? i - best1 : best1 - i;
		d2 = best2 == NONE ? 0 : best2 > best1 ? best2 - best1 : best1 - best2;
		if (best2 == NONE || rank_ci(s[i], icase) < rank_ci(s[best2], icase) ||
		    (rank_ci(s[i], icase) == rank_ci(s[best2], icase) && d > d2))
			best2 = i;
	}
	if (best2 == NONE)
		best2 = n > 1 ? (best1 ? 0 : n - 1) : best1;
	l->i1 = best1 < best2 ? best1 : best2;
	l->i2 = best1 < best2 ? best2 : best1;
	return 0;
}

static void lit_release(struct lit *l)
{
	free(l->low);
	free(l->fold);
}

/* in the vector scans: no call, so that their constants stay in registers
 * (a candidate rarely gets past its first bytes) */
static inline __attribute__((always_inline)) bool lit_at_fold(const struct lit *l,
							      const unsigned char *h, const bool fold)
{
	for (size_t i = 0; i < l->n; i++)
		if ((fold ? h[i] | l->fold[i] : h[i]) != l->low[i])
			return false;
	return true;
}

static inline bool lit_at(const struct lit *l, const unsigned char *h)
{
	if (!l->icase)
		return !memcmp(h, l->low, l->n);
	for (size_t i = 0; i < l->n; i++)
		if ((h[i] | l->fold[i]) != l->low[i])
			return false;
	return true;
}

static __attribute__((unused)) size_t find_scalar(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	if (len < l->n || from > len - l->n)
		return NONE;
	if (!l->icase) {
		const unsigned char *r = memmem(h + from, len - from, l->low, l->n);
		return r ? (size_t)(r - h) : NONE;
	}
	for (size_t p = from; p + l->n <= len; p++)
		if (lit_at(l, h + p))
			return p;
	return NONE;
}

#if defined(__x86_64__)
/* The two rare bytes of L compared at every position of H, 128 positions a
 * round, one test a round.  FOLD (a constant: the function is compiled
 * twice) ORs 0x20 into letters for -i; a case-sensitive scan spends no
 * instruction on it. */
__attribute__((target("avx2"), always_inline))
static inline size_t find_avx2_fold(const struct lit *l, const unsigned char *h, size_t from,
				    size_t len, const bool fold)
{
	size_t n = l->n, p = from, last;
	__m256i b1, b2, f1, f2;

	if (len < n || from > len - n)
		return NONE;
	last = len - n;
	b1 = _mm256_set1_epi8((char)l->low[l->i1]);
	b2 = _mm256_set1_epi8((char)l->low[l->i2]);
	f1 = _mm256_set1_epi8((char)l->fold[l->i1]);
	f2 = _mm256_set1_epi8((char)l->fold[l->i2]);
#define EQ(q, b, f) _mm256_cmpeq_epi8(fold ? _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(q)), f) \
					    : _mm256_loadu_si256((const __m256i *)(q)), b)
#define PAIR(k) _mm256_and_si256(EQ(q1 + (k), b1, f1), EQ(q2 + (k), b2, f2))
	while (p + 127 <= last) {
		const unsigned char *q1 = h + p + l->i1, *q2 = h + p + l->i2;
		__m256i m0 = PAIR(0), m1 = PAIR(32), m2 = PAIR(64), m3 = PAIR(96);
		__m256i any = _mm256_or_si256(_mm256_or_si256(m0, m1), _mm256_or_si256(m2, m3));
		uint64_t m;
		if (_mm256_testz_si256(any, any)) {
			p += 128;
			continue;
		}
		for (int half = 0; half < 2; half++) {
			m = half ? (uint32_t)_mm256_movemask_epi8(m2) |
				   ((uint64_t)(uint32_t)_mm256_movemask_epi8(m3) << 32)
				 : (uint32_t)_mm256_movemask_epi8(m0) |
				   ((uint64_t)(uint32_t)_mm256_movemask_epi8(m1) << 32);
			while (m) {
				unsigned k = __builtin_ctzll(m);
				if (lit_at_fold(l, h + p + k, fold))
					return p + k;
				m &= m - 1;
			}
			p += 64;
		}
	}
	while (p + 31 <= last) {
		const unsigned char *q1 = h + p + l->i1, *q2 = h + p + l->i2;
		unsigned m = (unsigned)_mm256_movemask_epi8(PAIR(0));
		while (m) {
			unsigned k = __builtin_ctz(m);
			if (lit_at_fold(l, h + p + k, fold))
				return p + k;
			m &= m - 1;
		}
		p += 32;
	}
#undef PAIR
#undef EQ
	for (; p <= last; p++)
		if (lit_at_fold(l, h + p, fold))
			return p;
	return NONE;
}

__attribute__((target("avx2")))
static size_t find_avx2(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	return l->icase ? find_avx2_fold(l, h, from, len, true) :
			  find_avx2_fold(l, h, from, len, false);
}

/* The same with AVX-512 (BW): 64 positions a compare, the results in mask
 * registers, half the instructions a byte of AVX2's. */
__attribute__((target("avx512f,avx512bw"), always_inline))
static inline size_t find_avx512_fold(const struct lit *l, const unsigned char *h, size_t from,
				      size_t len, const bool fold)
{
	size_t n = l->n, p = from, last;
	__m512i b1, b2, f1, f2;

	if (len < n || from > len - n)
		return NONE;
	last = len - n;
	b1 = _mm512_set1_epi8((char)l->low[l->i1]);
	b2 = _mm512_set1_epi8((char)l->low[l->i2]);
	f1 = _mm512_set1_epi8((char)l->fold[l->i1]);
	f2 = _mm512_set1_epi8((char)l->fold[l->i2]);
#define EQ(q, b, f) _mm512_cmpeq_epi8_mask(fold ? _mm512_or_si512(_mm512_loadu_si512((const void *)(q)), f) \
					      : _mm512_loadu_si512((const void *)(q)), b)
#define PAIR(k) (EQ(q1 + (k), b1, f1) & EQ(q2 + (k), b2, f2))
	/* one unaligned round, then the first byte's loads aligned: a
	 * 64-byte load across two cache lines costs two (the positions the
	 * two rounds share are looked at twice) */
	if (p + 63 <= last) {
		const unsigned char *q1 = h + p + l->i1, *q2 = h + p + l->i2;
		uint64_t m = PAIR(0);
		while (m) {
			unsigned k = __builtin_ctzll(m);
			if (lit_at_fold(l, h + p + k, fold))
				return p + k;
			m &= m - 1;
		}
		p += 64 - ((uintptr_t)q1 & 63);
	}
	while (p + 127 <= last) {
		const unsigned char *q1 = h + p + l->i1, *q2 = h + p + l->i2;
		uint64_t m0 = PAIR(0), m1 = PAIR(64);
		if (!(m0 | m1)) {
			p += 128;
			continue;
		}
		for (int half = 0; half < 2; half++) {
			uint64_t m = half ? m1 : m0;
			while (m) {
				unsigned k = __builtin_ctzll(m);
				if (lit_at_fold(l, h + p + k, fold))
					return p + k;
				m &= m - 1;
			}
			p += 64;
		}
	}
	while (p + 63 <= last) {
		const unsigned char *q1 = h + p + l->i1, *q2 = h + p + l->i2;
		uint64_t m = PAIR(0);
		while (m) {
			unsigned k = __builtin_ctzll(m);
			if (lit_at_fold(l, h + p + k, fold))
				return p + k;
			m &= m - 1;
		}
		p += 64;
	}
#undef PAIR
#undef EQ
	for (; p <= last; p++)
		if (lit_at_fold(l, h + p, fold))
			return p;
	return NONE;
}

__attribute__((target("avx512f,avx512bw")))
static size_t find_avx512(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	return l->icase ? find_avx512_fold(l, h, from, len, true) :
			  find_avx512_fold(l, h, from, len, false);
}

static size_t find_sse2(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	size_t n = l->n, p = from, last;
	__m128i b1, b2, f1, f2;

	if (len < n || from > len - n)
		return NONE;
	last = len - n;
	b1 = _mm_set1_epi8((char)l->low[l->i1]);
	b2 = _mm_set1_epi8((char)l->low[l->i2]);
	f1 = _mm_set1_epi8((char)l->fold[l->i1]);
	f2 = _mm_set1_epi8((char)l->fold[l->i2]);
	while (p + 15 <= last) {
		__m128i a = _mm_loadu_si128((const __m128i *)(h + p + l->i1));
		__m128i b = _mm_loadu_si128((const __m128i *)(h + p + l->i2));
		unsigned m;
		a = _mm_cmpeq_epi8(_mm_or_si128(a, f1), b1);
		b = _mm_cmpeq_epi8(_mm_or_si128(b, f2), b2);
		m = (unsigned)_mm_movemask_epi8(_mm_and_si128(a, b));
		while (m) {
			unsigned k = __builtin_ctz(m);
			if (lit_at(l, h + p + k))
				return p + k;
			m &= m - 1;
		}
		p += 16;
	}
	for (; p <= last; p++)
		if (lit_at(l, h + p))
			return p;
	return NONE;
}

/* the CPU's features as glibc found them at start-up (<sys/platform/x86.h>,
 * glibc 2.33): __builtin_cpu_supports links libgcc's constructor that asks
 * the CPU again, with CPUID, at every start of wap - 90 us of each `wap
 * exec` in a VM, where each CPUID traps to the hypervisor. */
static int cpu_simd(void)
{
#if __has_include(<sys/platform/x86.h>)
	return CPU_FEATURE_ACTIVE(AVX512BW) && CPU_FEATURE_ACTIVE(AVX512F) ? 2 :
		CPU_FEATURE_ACTIVE(AVX2) ? 1 : 0;
#else
	return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f") ? 2 :
		__builtin_cpu_supports("avx2") ? 1 : 0;
#endif
}

/* the widest scan the CPU has: 2 AVX-512 (BW), 1 AVX2, 0 SSE2 */
static int simd = -1, have_avx2 = -1;

static void simd_init(void)
{
	int s = cpu_simd();
	have_avx2 = s >= 1;
	simd = s;
}

int wap_match_simd(int max)
{
	simd_init();
	if (simd > max)
		simd = max < 0 ? 0 : max;
	return simd;
}

static size_t lit_find(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	if (simd < 0)
		simd_init();
	if (l->n == 1 && !l->icase) {
		const unsigned char *r = from < len ? memchr(h + from, l->low[0], len - from) : NULL;
		return r ? (size_t)(r - h) : NONE;
	}
	return simd == 2 ? find_avx512(l, h, from, len) :
	       simd == 1 ? find_avx2(l, h, from, len) : find_sse2(l, h, from, len);
}

/* Each newline adds one to a byte of one of four accumulators (cmpeq
 * gives -1, subtracted); they are summed before a byte can overflow, 255
 * rounds of 128 bytes. */
__attribute__((target("avx2")))
static size_t count_nl_avx2(const unsigned char *p, size_t n)
{
	const __m256i nl = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
	__m256i sum = zero;
	size_t c = 0, i = 0;

	while (n - i >= 128) {
		__m256i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
		size_t k = (n - i) / 128;
		if (k > 255)
			k = 255;
		for (; k; k--, i += 128) {
			const __m256i *q = (const __m256i *)(p + i);
			a0 = _mm256_sub_epi8(a0, _mm256_cmpeq_epi8(_mm256_loadu_si256(q), nl));
			a1 = _mm256_sub_epi8(a1, _mm256_cmpeq_epi8(_mm256_loadu_si256(q + 1), nl));
			a2 = _mm256_sub_epi8(a2, _mm256_cmpeq_epi8(_mm256_loadu_si256(q + 2), nl));
			a3 = _mm256_sub_epi8(a3, _mm256_cmpeq_epi8(_mm256_loadu_si256(q + 3), nl));
		}
		sum = _mm256_add_epi64(sum, _mm256_sad_epu8(a0, zero));
		sum = _mm256_add_epi64(sum, _mm256_sad_epu8(a1, zero));
		sum = _mm256_add_epi64(sum, _mm256_sad_epu8(a2, zero));
		sum = _mm256_add_epi64(sum, _mm256_sad_epu8(a3, zero));
	}
	c = (size_t)_mm256_extract_epi64(sum, 0) + (size_t)_mm256_extract_epi64(sum, 1) +
	    (size_t)_mm256_extract_epi64(sum, 2) + (size_t)_mm256_extract_epi64(sum, 3);
	for (; i + 32 <= n; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
		c += __builtin_popcount((unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)));
	}
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

size_t wap_count_nl(const char *p, size_t n)
{
	size_t c = 0;

	if (have_avx2 < 0)
		simd_init();
	if (have_avx2)
		return count_nl_avx2((const unsigned char *)p, n);
	for (const char *e = p + n; (p = memchr(p, '\n', e - p)); p++)
		c++;
	return c;
}
#else
int wap_match_simd(int max)
{
	(void)max;
	return 0;
}

static size_t lit_find(const struct lit *l, const unsigned char *h, size_t from, size_t len)
{
	return find_scalar(l, h, from, len);
}

size_t wap_count_nl(const char *p, size_t n)
{
	size_t c = 0;

	for (const char *e = p + n; (p = memchr(p, '\n', e - p)); p++)
		c++;
	return c;
}
#endif

/* ---- required literals of a regex ---- */

/* A set of alternatives, each a byte string; every match holds one. */
struct litset {
	struct wap_sb s[MAXLIT];
	size_t n;
	bool valid;
};

static void ls_release(struct litset *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		wap_sb_release(&ls->s[i]);
	ls->n = 0;
	ls->valid = false;
}

static long ls_score(const struct litset *ls, bool icase)
{
	long best = -1;

	if (!ls->valid || !ls->n)
		return -1;
	for (size_t i = 0; i < ls->n; i++) {
		long sc = 0;
		if (!ls->s[i].len)
			return -1;
		for (size_t k = 0; k < ls->s[i].len; k++)
			sc += 256 - rank_ci((unsigned char)ls->s[i].buf[k], icase);
		if (best < 0 || sc < best)
			best = sc;
	}
	return best - 20 * (long)(ls->n - 1);
}

/* take SRC into DST when better (SRC is released either way) */
static void ls_offer(struct litset *dst, struct litset *src, bool icase)
{
	if (ls_score(src, icase) > ls_score(dst, icase)) {
		ls_release(dst);
		*dst = *src;
		memset(src, 0, sizeof(*src));
	} else {
		ls_release(src);
	}
}

struct px {
	const char *p, *e;
	bool icase;
	bool bail;		/* something not understood: no prefilter */
	bool pure;		/* so far nothing but literal characters */
};

static void parse_alt(struct px *x, struct litset *out, int depth);

/* Skip a character class starting at '['. */
static void skip_class(struct px *x)
{
	const char *p = x->p + 1;

	if (p < x->e && *p == '^')
		p++;
	if (p < x->e && *p == ']')
		p++;
	while (p < x->e && *p != ']') {
		if (*p == '\\' && p + 1 < x->e)
			p += 2;
		else if (*p == '[' && p + 1 < x->e && p[1] == ':') {
			const char *q = strstr(p + 2, ":]");
			p = q && q < x->e ? q + 2 : p + 1;
		} else
			p++;
	}
	x->p = p < x->e ? p + 1 : p;
}

/* A quantifier at x->p: its minimum (1 when there is none). */
static long quantifier(struct px *x, bool *had)
{
	long min = 1;

	*had = false;
	if (x->p >= x->e)
		return 1;
	if (*x->p == '?' || *x->p == '*') {
		min = 0;
		x->p++;
	} else if (*x->p == '+') {
		x->p++;
	} else if (*x->p == '{') {
		const char *q = x->p + 1;
		long a = 0;
		bool digits = false;
		while (q < x->e && *q >= '0' && *q <= '9') {
			a = a * 10 + (*q++ - '0');
			digits = true;
			if (a > 100000)
				a = 100000;
		}
		if (!digits)
			return 1;	/* "{" is a literal then */
		if (q < x->e && *q == ',') {
			q++;
			while (q < x->e && *q >= '0' && *q <= '9')
				q++;
		}
		if (q >= x->e || *q != '}')
			return 1;
		min = a;
		x->p = q + 1;
	} else {
		return 1;
	}
	*had = true;
	if (x->p < x->e && (*x->p == '?' || *x->p == '+'))
		x->p++;
	return min;
}

static void flush(struct wap_sb *run, struct litset *best, bool icase)
{
	if (run->len) {
		struct litset c = { .n = 1, .valid = true };
		wap_sb_add(&c.s[0], run->buf, run->len);
		ls_offer(best, &c, icase);
		run->len = 0;
	}
}

static void parse_seq(struct px *x, struct litset *best, int depth)
{
	struct wap_sb run = WAP_SB_INIT;

	while (x->p < x->e && !x->bail) {
		char c = *x->p;
		unsigned char lit[8];
		size_t nlit = 0;
		bool breaker = false, had;
		long min;

		if (c == '|' || c == ')')
			break;
		if (c == '(') {
			struct litset sub = { 0 };
			bool look = false;
			x->pure = false;
			x->p++;
			if (x->p < x->e && *x->p == '?') {
				const char *q = x->p + 1;
				if (q < x->e && (*q == ':' || *q == '|' || *q == '>')) {
					x->p = q + 1;
				} else if (q < x->e && (*q == '=' || *q == '!')) {
					x->p = q + 1;
					look = true;
				} else if (q + 1 < x->e && *q == '<' && (q[1] == '=' || q[1] == '!')) {
					x->p = q + 2;
					look = true;
				} else if (q < x->e && (*q == '<' || *q == '\'' || *q == 'P')) {
					/* named group */
					char close = *q == '\'' ? '\'' : '>';
					if (*q == 'P') {
						if (q + 1 >= x->e || q[1] != '<') {
							x->bail = true;
							break;
						}
						q++;
					}
					while (q < x->e && *q != close && *q != ')')
						q++;
					if (q >= x->e || *q != close) {
						x->bail = true;
						break;
					}
					x->p = q + 1;
				} else {
					x->bail = true;	/* inline options and the rest */
					break;
				}
			} else if (x->p < x->e && *x->p == '*') {
				x->bail = true;	/* verbs */
				break;
			}
			parse_alt(x, &sub, depth + 1);
			if (x->p >= x->e || *x->p != ')') {
				ls_release(&sub);
				x->bail = true;
				break;
			}
			x->p++;
			min = quantifier(x, &had);
			flush(&run, best, x->icase);
			if (!look && min >= 1)
				ls_offer(best, &sub, x->icase);
			else
				ls_release(&sub);
			continue;
		}
		if (c == '\\') {
			unsigned char d;
			if (x->p + 1 >= x->e) {
				x->bail = true;
				break;
			}
			d = (unsigned char)x->p[1];
			if (d == 'Q' || d == 'E' || d == 'K' || d == 'c' || d == 'x' || d == 'o' ||
			    d == 'N' || d == 'p' || d == 'P' || d == 'g' || d == 'k' || d == 'X' ||
			    d == 'R' || d == 'C') {
				x->bail = true;	/* not worth understanding */
				break;
			}
			x->p += 2;
			if (d < 0x80 && !((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') ||
					  (d >= '0' && d <= '9'))) {
				lit[nlit++] = d;
			} else {
				breaker = true;
			}
		} else if (c == '[') {
			skip_class(x);
			breaker = true;
		} else if (c == '.' || c == '^' || c == '$') {
			x->p++;
			breaker = true;
		} else if (c == '*' || c == '+' || c == '?') {
			x->bail = true;	/* a quantifier with nothing before it */
			break;
		} else {
			/* one (possibly multi-byte) character */
			unsigned char u = (unsigned char)c;
			size_t k = u < 0x80 ? 1 : u >= 0xf0 ? 4 : u >= 0xe0 ? 3 : u >= 0xc0 ? 2 : 1;
			if ((size_t)(x->e - x->p) < k)
				k = x->e - x->p;
			memcpy(lit, x->p, k);
			nlit = k;
			x->p += k;
		}
		min = quantifier(x, &had);
		if (breaker || had)
			x->pure = false;
		if (nlit && x->icase) {
			/* Unicode folding maps k and s to non-ASCII letters too */
			unsigned char l0 = lit[0] | 0x20;
			if (lit[0] >= 0x80 || l0 == 'k' || l0 == 's') {
				breaker = true;
				x->pure = false;
			}
		}
		if (breaker || !nlit) {
			flush(&run, best, x->icase);
			continue;
		}
		if (had && min == 0) {
			flush(&run, best, x->icase);
			continue;
		}
		wap_sb_add(&run, lit, nlit);
		if (had)
			flush(&run, best, x->icase);
	}
	flush(&run, best, x->icase);
	wap_sb_release(&run);
}

static void parse_alt(struct px *x, struct litset *out, int depth)
{
	bool ok = true;

	memset(out, 0, sizeof(*out));
	if (depth > 50) {
		x->bail = true;
		return;
	}
	for (;;) {
		struct litset br = { 0 };
		parse_seq(x, &br, depth);
		if (x->bail) {
			ls_release(&br);
			ok = false;
			break;
		}
		if (!br.valid || br.n == 0 || out->n + br.n > MAXLIT)
			ok = false;
		if (ok) {
			for (size_t i = 0; i < br.n; i++)
				out->s[out->n++] = br.s[i];
			br.n = 0;
		}
		ls_release(&br);
		if (x->p < x->e && *x->p == '|') {
			x->p++;
			x->pure = x->pure && depth == 0;
			if (depth > 0)
				x->pure = false;
			continue;
		}
		break;
	}
	if (!ok) {
		ls_release(out);
		return;
	}
	out->valid = out->n > 0;
}

/* ---- building ---- */

static void add_escaped(struct wap_sb *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				  (c >= '0' && c <= '9') || c == '_'))
			wap_sb_addc(sb, '\\');
		wap_sb_addc(sb, *s);
	}
}

/* ripgrep's Unicode classes, where PCRE2 10.42's differ: a word character
 * is a letter, a mark, a decimal digit, a connector or a joiner (Rust's
 * regex; PCRE2's \w takes letters and numbers only, so a combining accent
 * or a vowel sign split a word), and a POSIX class is ASCII ([[:alpha:]]
 * is [A-Za-z], as in ripgrep, where PCRE2's UCP takes every letter). */
#define WORD_ITEMS "A-Za-z0-9_\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}"
#define WORD "[" WORD_ITEMS "]"

static const char *const posix_ascii[][2] = {
	{ "alnum", "0-9A-Za-z" }, { "alpha", "A-Za-z" }, { "ascii", "\\x00-\\x7f" },
	{ "blank", "\\t " }, { "cntrl", "\\x00-\\x1f\\x7f" }, { "digit", "0-9" },
	{ "graph", "\\x21-\\x7e" }, { "lower", "a-z" }, { "print", "\\x20-\\x7e" },
	{ "punct", "\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e" },
	{ "space", "\\t\\n\\x0b\\f\\r " }, { "upper", "A-Z" }, { "word", "0-9A-Za-z_" },
	{ "xdigit", "0-9A-Fa-f" },
};

/* [:NAME:] or [:^NAME:] at P (inside a class): NAME's ASCII ranges, in
 * *LEN its length and in *NEG whether it is negated; NULL if none */
static const char *posix_at(const char *p, size_t *len, bool *neg)
{
	const char *e, *name;

	if (p[0] != '[' || p[1] != ':' || !(e = strstr(p + 2, ":]")))
		return NULL;
	*neg = p[2] == '^';
	name = p + 2 + *neg;
	for (size_t i = 0; i < sizeof(posix_ascii) / sizeof(*posix_ascii); i++)
		if ((size_t)(e - name) == strlen(posix_ascii[i][0]) &&
		    !strncmp(name, posix_ascii[i][0], e - name)) {
			*len = e + 2 - p;
			return posix_ascii[i][1];
		}
	return NULL;
}

/* PATTERN onto SB in ripgrep's classes: \w \W \b \B and POSIX classes
 * rewritten, the rest as written.  A negated POSIX class among other
 * members ([x[:^alpha:]]) stays PCRE2's (it has no class difference).
 * In extended mode ((?x) anywhere) a '#' comment is copied as it is, and
 * a newline ends one the pattern ends in, before the caller's ')'. */
static void add_pattern(struct wap_sb *sb, const char *p)
{
	bool cls = false;	/* inside [...] */
	bool ext = false;	/* (?x) somewhere */
	bool neg;

	for (const char *f = strstr(p, "(?"); f && !ext; f = strstr(f + 2, "(?")) {
		size_t k = strspn(f + 2, "imnsxJU-^");
		ext = memchr(f + 2, 'x', k) && (f[2 + k] == ')' || f[2 + k] == ':');
	}
	while (*p) {
		const char *ascii;
		size_t n;
		if (ext && !cls && *p == '#') {
			n = strcspn(p, "\n");
			wap_sb_add(sb, p, n);
			p += n;
		} else if (*p == '\\' && p[1] == 'Q') {
			/* \Q...\E: literal */
			const char *e = strstr(p + 2, "\\E");
			n = e ? (size_t)(e + 2 - p) : strlen(p);
			wap_sb_add(sb, p, n);
			p += n;
		} else if (*p == '\\' && p[1]) {
			n = p[1] == 'c' && p[2] ? 3 : 2;
			if (p[1] == 'w')
				wap_sb_adds(sb, cls ? WORD_ITEMS : WORD);
			else if (p[1] == 'W' && !cls)
				wap_sb_adds(sb, "[^" WORD_ITEMS "]");
			else if (p[1] == 'b' && !cls)
				wap_sb_adds(sb, "(?:(?<=" WORD ")(?!" WORD ")|(?<!" WORD ")(?=" WORD "))");
			else if (p[1] == 'B' && !cls)
				wap_sb_adds(sb, "(?:(?<=" WORD ")(?=" WORD ")|(?<!" WORD ")(?!" WORD "))");
			else
				wap_sb_add(sb, p, n);
			p += n;
		} else if (!cls && *p == '[' && (ascii = posix_at(p + 1, &n, &neg)) && neg &&
			   p[1 + n] == ']') {
			/* [[:^alpha:]] */
			wap_sb_addf(sb, "[^%s]", ascii);
			p += n + 2;
		} else if (cls && (ascii = posix_at(p, &n, &neg))) {
			if (neg)
				wap_sb_add(sb, p, n);
			else
				wap_sb_adds(sb, ascii);
			p += n;
		} else if (!cls && *p == '[') {
			/* a ']' right after "[" or "[^" is a member */
			cls = true;
			n = 1 + (p[1] == '^');
			n += p[n] == ']';
			wap_sb_add(sb, p, n);
			p += n;
		} else if (!cls && *p == '(' && p[1] == '?' && p[2] == '#') {
			/* a comment, to its ')' */
			n = strcspn(p, ")");
			wap_sb_add(sb, p, n);
			p += n;
		} else {
			if (cls && *p == ']')
				cls = false;
			wap_sb_addc(sb, *p++);
		}
	}
	if (ext)
		wap_sb_addc(sb, '\n');
}

static uint32_t cflags(const struct wap_match_opts *o)
{
	return PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_UCP | PCRE2_MULTILINE |
	       PCRE2_USE_OFFSET_LIMIT |
	       (o->icase ? PCRE2_CASELESS : 0);
}

static int regex_error(struct wap_err *err, const char *pat, int ec, PCRE2_SIZE off)
{
	PCRE2_UCHAR msg[256];

	pcre2_get_error_message(ec, msg, sizeof(msg));
	wap_err_set(err, WAP_E_INVALID, "Invalid regex '%s': %s at offset %zu", pat,
		    (char *)msg, (size_t)off);
	wap_err_details(err, json_pack("{s:s, s:I, s:s}", "pattern", pat, "offset",
				       (json_int_t)off, "message", (char *)msg));
	return -1;
}

struct wap_matcher *wap_matcher_new(const struct wap_match_opts *o, struct wap_err *err)
{
	struct wap_matcher *m;
	struct wap_sb rx = WAP_SB_INIT;
	struct litset all = { 0 };
	bool exact = !o->word && !o->line && !o->multiline;
	int ec;
	PCRE2_SIZE off;

	if (!o->n)
		return wap_err_set(err, WAP_E_INVALID, "missing PATTERN"), NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		wap_err_oom(err);
		return NULL;
	}
	m->multiline = o->multiline;
	m->time_ms = o->time_ms > 0 ? o->time_ms : TIME_MS;
	/* check each pattern alone, for an offset the caller recognises */
	for (size_t i = 0; i < o->n && !o->fixed; i++) {
		pcre2_code *c = pcre2_compile((PCRE2_SPTR)o->patterns[i], PCRE2_ZERO_TERMINATED,
					      cflags(o), &ec, &off, NULL);
		if (!c) {
			regex_error(err, o->patterns[i], ec, off);
			goto fail;
		}
		pcre2_code_free(c);
	}
	if (o->line)
		wap_sb_adds(&rx, "^(?:");
	if (o->word)
		wap_sb_adds(&rx, "(?<!" WORD ")(?:");
	for (size_t i = 0; i < o->n; i++) {
		if (i)
			wap_sb_addc(&rx, '|');
		wap_sb_adds(&rx, "(?:");
		if (o->fixed)
			add_escaped(&rx, o->patterns[i]);
		else
			add_pattern(&rx, o->patterns[i]);
		wap_sb_adds(&rx, ")");
	}
	if (o->word)
		wap_sb_adds(&rx, ")(?!" WORD ")");
	if (o->line)
		wap_sb_adds(&rx, ")$");
	if (rx.oom) {
		wap_err_oom(err);
		goto fail;
	}
	m->re = pcre2_compile((PCRE2_SPTR)rx.buf, rx.len, cflags(o), &ec, &off, NULL);
	if (!m->re) {
		regex_error(err, rx.buf, ec, off);
		goto fail;
	}
	pcre2_jit_compile(m->re, PCRE2_JIT_COMPLETE);

	/* the literals: one set of alternatives for all the patterns */
	all.valid = true;
	for (size_t i = 0; i < o->n && all.valid; i++) {
		const char *p = o->patterns[i];
		struct litset one = { 0 };
		if (o->fixed) {
			bool ok = *p != 0 && !strchr(p, '\n');
			if (o->icase)
				for (const char *q = p; *q && ok; q++) {
					unsigned char c = (unsigned char)*q | 0x20;
					if ((unsigned char)*q >= 0x80 || c == 'k' || c == 's')
						ok = false;
				}
			if (ok) {
				one.n = 1;
				one.valid = true;
				wap_sb_adds(&one.s[0], p);
			} else {
				exact = false;
				/* a piece of it still helps */
				struct px x = { p, p + strlen(p), o->icase, false, true };
				struct wap_sb esc = WAP_SB_INIT;
				add_escaped(&esc, p);
				x.p = esc.buf ? esc.buf : "";
				x.e = x.p + esc.len;
				parse_alt(&x, &one, 0);
				if (x.bail)
					ls_release(&one);
				wap_sb_release(&esc);
			}
		} else {
			struct px x = { p, p + strlen(p), o->icase, false, true };
			parse_alt(&x, &one, 0);
			if (x.bail || x.p != x.e) {
				ls_release(&one);
				exact = false;
			} else {
				/* pure literals: the alternatives spell the pattern */
				size_t sum = one.n - 1;
				for (size_t k = 0; k < one.n; k++)
					sum += one.s[k].len;
				if (!x.pure || sum != strlen(p))
					exact = false;
			}
		}
		if (!one.valid || all.n + one.n > MAXLIT) {
			all.valid = false;
			ls_release(&one);
			break;
		}
		for (size_t k = 0; k < one.n; k++)
			all.s[all.n++] = one.s[k];
		one.n = 0;
		ls_release(&one);
	}
	if (all.valid && ls_score(&all, o->icase) > 0) {
		for (size_t i = 0; i < all.n; i++) {
			if (lit_init(&m->lits[i], (unsigned char *)all.s[i].buf, all.s[i].len, o->icase)) {
				wap_err_oom(err);
				m->nlits = i + 1;
				ls_release(&all);
				goto fail;
			}
			m->nlits++;
		}
		m->exact = exact;
	}
	ls_release(&all);
	wap_sb_release(&rx);
	return m;
fail:
	wap_sb_release(&rx);
	wap_matcher_free(m);
	return NULL;
}

void wap_matcher_free(struct wap_matcher *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nlits; i++)
		lit_release(&m->lits[i]);
	pcre2_code_free(m->re);
	free(m);
}

const void *wap_matcher_code(const struct wap_matcher *m)
{
	return m->re;
}

void *wap_mstate_data(struct wap_mstate *s)
{
	return s->md;
}

bool wap_matcher_exact(const struct wap_matcher *m)
{
	return m->exact;
}

size_t wap_matcher_literals(const struct wap_matcher *m, const char **first)
{
	if (first)
		*first = m->nlits ? (const char *)m->lits[0].low : NULL;
	return m->nlits;
}

struct wap_mstate *wap_mstate_new(const struct wap_matcher *m)
{
	struct wap_mstate *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->md = pcre2_match_data_create_from_pattern(m->re, NULL);
	s->mc = pcre2_match_context_create(NULL);
	s->js = pcre2_jit_stack_create(32 << 10, 4 << 20, NULL);
	if (!s->md || !s->mc || !s->js) {
		wap_mstate_free(s);
		return NULL;
	}
	pcre2_jit_stack_assign(s->mc, NULL, s->js);
	pcre2_set_match_limit(s->mc, MATCH_LIMIT);
	pcre2_set_depth_limit(s->mc, DEPTH_LIMIT);
	pcre2_set_heap_limit(s->mc, HEAP_LIMIT_KIB);
	return s;
}

void wap_mstate_set_cancel(struct wap_mstate *s, const struct wap_cancel *cancel)
{
	s->cancel = cancel;
}

void wap_match_limits(void *mctx)
{
	pcre2_set_match_limit(mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, DEPTH_LIMIT);
	pcre2_set_heap_limit(mctx, HEAP_LIMIT_KIB);
}

int wap_match_error(const struct wap_mstate *s, const char **where)
{
	if (where)
		*where = s->err_p;
	return s->error;
}

static pcre2_match_context *shared_mc;

static void shared_init(void)
{
	shared_mc = pcre2_match_context_create(NULL);
	if (shared_mc)
		wap_match_limits(shared_mc);
}

void *wap_match_context(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, shared_init);
	return shared_mc;
}

int wap_match_err(int code, const char *path, size_t line, struct wap_err *err)
{
	const char *what;

	if (code == WAP_MATCH_CANCELLED)
		return wap_cancel_err(err);
	switch (code) {
	case PCRE2_ERROR_MATCHLIMIT: what = "match limit"; break;
	case PCRE2_ERROR_DEPTHLIMIT: what = "depth limit"; break;
	case PCRE2_ERROR_HEAPLIMIT: what = "heap limit"; break;
	case PCRE2_ERROR_JIT_STACKLIMIT: what = "stack limit"; break;
	case PCRE2_ERROR_NOMEMORY: what = "memory limit"; break;
	case WAP_MATCH_TIMEOUT: what = "time limit"; break;
	default: {
		PCRE2_UCHAR msg[128];
		pcre2_get_error_message(code, msg, sizeof(msg));
		return wap_err_set(err, WAP_E_FAILED, "regex failed in %s:%zu: %s", path, line,
				   (char *)msg);
	}
	}
	return wap_err_set(err, WAP_E_TOO_LARGE, "regex %s hit in %s:%zu; simplify the pattern",
			   what, path, line);
}

void wap_mstate_free(struct wap_mstate *s)
{
	if (!s)
		return;
	pcre2_match_data_free(s->md);
	pcre2_match_context_free(s->mc);
	pcre2_jit_stack_free(s->js);
	free(s);
}

void wap_match_begin(struct wap_mstate *s)
{
	s->bylines = false;
	s->error = 0;
	s->err_p = NULL;
	s->ticks = 0;
	s->t0 = mono_ms();
	for (size_t i = 0; i < MAXLIT; i++) {
		s->next[i] = 0;
		s->from[i] = NONE;
	}
}

/* the first candidate at or after POS */
static size_t candidate(const struct wap_matcher *m, struct wap_mstate *s, const char *buf,
			size_t len, size_t pos)
{
	size_t best = NONE;

	for (size_t i = 0; i < m->nlits; i++) {
		if (s->from[i] == NONE || s->from[i] > pos || (s->next[i] != NONE && s->next[i] < pos)) {
			s->next[i] = lit_find(&m->lits[i], (const unsigned char *)buf, pos, len);
			s->from[i] = pos;
		}
		if (s->next[i] < best)
			best = s->next[i];
	}
	return best;
}

/* Stop here?  A cancel, or the buffer's time is up (the clock read every
 * 256th call, or when ALWAYS): the reason in s->error, at AT. */
static bool stop(const struct wap_matcher *m, struct wap_mstate *s, const char *at, bool always)
{
	if (s->error)
		return true;
	if (wap_cancel_is_set(s->cancel)) {
		s->error = WAP_MATCH_CANCELLED;
		s->err_p = at;
		return true;
	}
	if ((always || !(++s->ticks & 255)) && mono_ms() - s->t0 > m->time_ms) {
		s->error = WAP_MATCH_TIMEOUT;
		s->err_p = at;
		return true;
	}
	return false;
}

/* PCRE2's match limit counts each start position afresh, so one
 * pcre2_match() over a line of N bytes may backtrack N times the limit
 * (a 46 KB line of "(x+x+)+y" bait: 40 s).  So a subject is tried SPAN
 * start positions at a time (the offset limit; the lookbehinds and
 * anchors still see the whole subject), and between spans the clock and
 * the cancel are read: one span is at most SPAN limits' work, some 3 s
 * at worst, a few nanoseconds in the common case. */
#define SPAN 128

static int run(const struct wap_matcher *m, struct wap_mstate *s, const char *subj, size_t n,
	       size_t off)
{
	const unsigned char *u = (const unsigned char *)subj;

	for (;;) {
		int rc;
		bool last = n - off <= SPAN;
		pcre2_set_offset_limit(s->mc, last ? PCRE2_UNSET : off + SPAN - 1);
		rc = pcre2_match(m->re, (PCRE2_SPTR)subj, n, off, 0, s->md, s->mc);
		if (rc != PCRE2_ERROR_NOMATCH || last)
			return rc;
		/* on, to the start of a character */
		off += SPAN;
		while (off < n && (u[off] & 0xc0) == 0x80)
			off++;
		if (stop(m, s, subj + (off < n ? off : n), true))
			return PCRE2_ERROR_NOMATCH;
		if (off > n)
			off = n;
	}
}

/* A match error on the subject from AT: recorded, so the caller can tell
 * it from no match. */
static bool failed(struct wap_mstate *s, int rc, const char *at)
{
	if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH)
		return false;
	s->error = rc;
	s->err_p = at;
	return true;
}

static size_t line_start(const char *buf, size_t from, size_t at)
{
	const char *nl = at > from ? memrchr(buf + from, '\n', at - from) : NULL;
	return nl ? (size_t)(nl - buf) + 1 : from;
}

static size_t line_end(const char *buf, size_t len, size_t at)
{
	const char *nl = at < len ? memchr(buf + at, '\n', len - at) : NULL;
	return nl ? (size_t)(nl - buf) : len;
}

bool wap_match_line(const struct wap_matcher *m, struct wap_mstate *s, const char *buf,
		    size_t len, size_t pos, size_t *ls, size_t *le)
{
	if (stop(m, s, buf + pos, false))
		return false;
	if (m->multiline) {
		PCRE2_SIZE *ov;
		size_t ms, me;
		int rc;
		if (pos >= len)
			return false;
		rc = run(m, s, buf, len, pos);
		if (rc < 0) {
			if (rc != PCRE2_ERROR_NOMATCH) {
				/* name the first line that fails alone, if one does */
				size_t a = pos, at = pos;
				while (a < len && !stop(m, s, buf + a, false)) {
					size_t b = line_end(buf, len, a);
					int r = run(m, s, buf + a, b - a, 0);
					if (r < 0 && r != PCRE2_ERROR_NOMATCH) {
						at = a;
						break;
					}
					a = b + 1;
				}
				if (s->error == WAP_MATCH_CANCELLED)
					return false;
				s->error = rc;
				s->err_p = buf + at;
			}
			stop(m, s, buf + pos, true);
			return false;
		}
		stop(m, s, buf + pos, true);
		ov = pcre2_get_ovector_pointer(s->md);
		ms = ov[0];
		me = ov[1];
		/* an empty match at the very end belongs to an unterminated last line */
		if (ms > len || (ms == len && buf[len - 1] == '\n'))
			return false;
		*ls = line_start(buf, pos, ms);
		*le = line_end(buf, len, me > ms ? me - 1 : ms);
		return true;
	}
	while (pos < len) {
		size_t c, a, b;
		int rc;
		if (stop(m, s, buf + pos, false))
			return false;
		if (m->nlits) {
			c = candidate(m, s, buf, len, pos);
			if (c == NONE)
				return false;
		} else {
			PCRE2_SIZE *ov;
			size_t end = len;
			if (s->bylines) {
				/* each line alone: bounded work however the pattern backtracks */
				a = pos;
				b = line_end(buf, len, pos);
				goto verify;
			}
			/* a window of whole lines: no match spans lines */
			if (len - pos > WINDOW)
				end = line_end(buf, len, pos + WINDOW);
			rc = run(m, s, buf, end, pos);
			if (stop(m, s, buf + pos, true))
				return false;
			if (rc == PCRE2_ERROR_NOMATCH) {
				if (end == len)
					return false;
				pos = end + 1;
				continue;
			}
			if (rc < 0) {
				/* a match or backtracking limit over the whole window:
				 * the answer is still each line's own */
				s->bylines = true;
				continue;
			}
			ov = pcre2_get_ovector_pointer(s->md);
			c = ov[0];
			if (c > len || (c == len && buf[len - 1] == '\n'))
				return false;
			a = line_start(buf, pos, c);
			b = line_end(buf, len, c);
			if (ov[1] <= b) {
				*ls = a;
				*le = b;
				return true;
			}
			goto verify;
		}
		a = line_start(buf, pos, c);
		b = line_end(buf, len, c);
		if (m->exact) {
			*ls = a;
			*le = b;
			return true;
		}
verify:
		rc = run(m, s, buf + a, b - a, 0);
		if (rc >= 0) {
			*ls = a;
			*le = b;
			return true;
		}
		if (failed(s, rc, buf + a))
			return false;
		pos = b + 1;
	}
	return false;
}

bool wap_match_sub(const struct wap_matcher *m, struct wap_mstate *s, const char *subj,
		   size_t n, size_t off, size_t *ms, size_t *me)
{
	PCRE2_SIZE *ov;
	int rc;

	if (off > n || stop(m, s, subj, false))
		return false;
	rc = run(m, s, subj, n, off);
	if (rc < 0) {
		failed(s, rc, subj);
		return false;
	}
	ov = pcre2_get_ovector_pointer(s->md);
	*ms = ov[0];
	*me = ov[1];
	return true;
}

size_t wap_match_step(const char *subj, size_t n, size_t i)
{
	unsigned char c = i < n ? (unsigned char)subj[i] : 0;
	size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

	if (i + len > n)
		return i + 1;
	for (size_t k = 1; k < len; k++)
		if (((unsigned char)subj[i + k] & 0xc0) != 0x80)
			return i + 1;
	return i + len;
}

bool wap_match_next(const struct wap_matcher *m, struct wap_mstate *s, const char *subj,
		    size_t n, struct wap_match_iter *it, size_t *ms, size_t *me)
{
	for (;;) {
		bool skip;

		if (it->off > n || !wap_match_sub(m, s, subj, n, it->off, ms, me))
			return false;
		skip = *ms == *me && it->any && *me == it->last;
		it->off = *ms == *me ? wap_match_step(subj, n, *me) : *me;
		if (skip)
			continue;
		it->last = *me;
		it->any = true;
		return true;
	}
}
