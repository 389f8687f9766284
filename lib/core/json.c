/* core/json.c - JSON text to and from jansson values, as jansson writes and
 * reads it, faster (json.h). */
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ---- the blocks of jansson's values ---- */

/* A call builds and frees some 80 small jansson blocks (a value, a
 * hashtable's buckets and pairs, a string's bytes); glibc's per-thread
 * cache keeps 7 blocks of a size, so most of them took malloc's and
 * free's slow paths.  Each thread keeps up to KEEP free blocks of each
 * usable size class (16 bytes apart, up to 16 * CLASSES) here.  The blocks
 * are malloc's own, sorted by malloc_usable_size, so anything jansson
 * hands out (json_dumps' text) may still be given to free(), and a block
 * malloc'd before the cache was on may come back through it. */
#if !defined(__SANITIZE_ADDRESS__)	/* under ASan every block is malloc's, to be checked */
#define CLASSES 16
#define KEEP 256

struct jcache {
	void *head[CLASSES];
	unsigned n[CLASSES];
	bool on;
};

static __thread struct jcache jc;
static pthread_key_t jc_key;
static pthread_once_t jc_once = PTHREAD_ONCE_INIT;

/* a thread's end (or the key's destructor run): its blocks to malloc */
static void jc_drop(void *arg)
{
	struct jcache *c = arg;

	for (int k = 0; k < CLASSES; k++) {
		while (c->head[k]) {
			void *p = c->head[k];
			c->head[k] = *(void **)p;
			free(p);
		}
		c->n[k] = 0;
	}
	c->on = false;
}

static void jc_key_new(void)
{
	pthread_key_create(&jc_key, jc_drop);
}

static void *jc_malloc(size_t n)
{
	size_t k = n ? (n + 15) >> 4 : 1;	/* its blocks have >= 16 * k usable */
	void *p;

	if (k >= CLASSES || !(p = jc.head[k]))
		return malloc(k < CLASSES ? k << 4 : n);
	jc.head[k] = *(void **)p;
	jc.n[k]--;
	return p;
}

static void jc_free(void *p)
{
	size_t k;

	if (!p)
		return;
	k = malloc_usable_size(p) >> 4;
	if (k >= CLASSES || jc.n[k] >= KEEP) {
		free(p);
		return;
	}
	if (!jc.on) {	/* the first in this thread: dropped at its end */
		pthread_once(&jc_once, jc_key_new);
		pthread_setspecific(jc_key, &jc);
		jc.on = true;
	}
	*(void **)p = jc.head[k];
	jc.head[k] = p;
	jc.n[k]++;
}

#endif

void wap_json_cache_init(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	json_set_alloc_funcs(jc_malloc, jc_free);
#endif
}

/* ---- encoding ---- */

/* Containers deeper than this are handed to json_dumps whole: the stack of
 * open containers (the cycle check) stays small. */
#define DUMP_DEPTH 256

struct dumper {
	struct wap_sb *sb;
	const json_t *open[DUMP_DEPTH];
	int depth;
};

static inline bool room(struct wap_sb *sb, size_t n)
{
	return sb->len + n + 1 <= sb->cap || wap_sb_grow(sb, n);
}

static inline void put(struct wap_sb *sb, const char *s, size_t n)
{
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
}

/* Byte classes of a string being written: 0 copies as it is, 1 is escaped,
 * 2-4 lead a UTF-8 sequence of that length, 5 never starts a valid one
 * (jansson's utf8_check_first). */
static const unsigned char cls[256] = {
	[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,
	[0x80 ... 0xc1] = 5, [0xc2 ... 0xdf] = 2, [0xe0 ... 0xef] = 3, [0xf0 ... 0xf4] = 4,
	[0xf5 ... 0xff] = 5,
};

/* Is the N-byte sequence at S (its lead byte known good) valid UTF-8:
 * continuation bytes, no overlong form, no surrogate, at most U+10FFFF. */
static bool utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t v = s[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);

	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return false;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return false;
	return !((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && v < 0x10000));
}

static int dump_string(struct wap_sb *sb, const char *str, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str, *end = s + n, *run;

	if (!room(sb, n + 2))
		return -1;
	sb->buf[sb->len++] = '"';
	while (s < end) {
		run = s;
		/* 8 bytes at a time while none is below 0x20, '"', '\\' or
		 * past 0x7f (the usual text), then a byte at a time */
		while (end - s >= 8) {
			uint64_t w, q, b;
			memcpy(&w, s, 8);
			q = w ^ 0x2222222222222222ULL;
			b = w ^ 0x5c5c5c5c5c5c5c5cULL;
			/* (x - 0x01..) & ~x has a high bit set iff x has a zero
			 * byte; (w - 0x20..) & ~w iff w has one below 0x20 */
			if ((((w - 0x2020202020202020ULL) & ~w) | ((q - 0x0101010101010101ULL) & ~q) |
			     ((b - 0x0101010101010101ULL) & ~b) | w) & 0x8080808080808080ULL)
				break;
			s += 8;
		}
		while (s < end && !cls[*s])
			s++;
		if (s > run) {
			if (!room(sb, (size_t)(s - run) + 1))
				return -1;
			put(sb, (const char *)run, s - run);
		}
		if (s == end)
			break;
		switch (cls[*s]) {
		case 1: {
			char e[6] = { '\\', 0 };
			size_t k = 2;
			switch (*s) {
			case '"': e[1] = '"'; break;
			case '\\': e[1] = '\\'; break;
			case '\b': e[1] = 'b'; break;
			case '\f': e[1] = 'f'; break;
			case '\n': e[1] = 'n'; break;
			case '\r': e[1] = 'r'; break;
			case '\t': e[1] = 't'; break;
			default:
				e[1] = 'u';
				e[2] = '0';
				e[3] = '0';
				e[4] = hex[*s >> 4];
				e[5] = hex[*s & 15];
				k = 6;
			}
			if (!room(sb, k + 1))
				return -1;
			put(sb, e, k);
			s++;
			break;
		}
		case 5:
			return -1;
		default: {
			size_t k = cls[*s];
			if ((size_t)(end - s) < k || !utf8_seq(s, k))
				return -1;
			if (!room(sb, k + 1))
				return -1;
			put(sb, (const char *)s, k);
			s += k;
		}
		}
	}
	if (!room(sb, 1))
		return -1;
	sb->buf[sb->len++] = '"';
	return 0;
}

static int dump_int(struct wap_sb *sb, json_int_t v)
{
	char d[24], *p = d + sizeof(d);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	if (!room(sb, (size_t)(d + sizeof(d) - p)))
		return -1;
	put(sb, p, d + sizeof(d) - p);
	return 0;
}

/* what jansson alone writes: a real (its own %.17g and ".0" rules) or a
 * container too deep for our stack */
static int dump_jansson(struct wap_sb *sb, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t n = s ? strlen(s) : 0;
	int rc = -1;

	if (s && room(sb, n)) {
		put(sb, s, n);
		rc = 0;
	}
	free(s);
	return rc;
}

static int dump_value(struct dumper *d, const json_t *v)
{
	struct wap_sb *sb = d->sb;

	switch (json_typeof(v)) {
	case JSON_NULL:
		if (!room(sb, 4))
			return -1;
		put(sb, "null", 4);
		return 0;
	case JSON_TRUE:
		if (!room(sb, 4))
			return -1;
		put(sb, "true", 4);
		return 0;
	case JSON_FALSE:
		if (!room(sb, 5))
			return -1;
		put(sb, "false", 5);
		return 0;
	case JSON_INTEGER:
		return dump_int(sb, json_integer_value(v));
	case JSON_REAL:
		return dump_jansson(sb, v);
	case JSON_STRING:
		return dump_string(sb, json_string_value(v), json_string_length(v));
	case JSON_ARRAY:
	case JSON_OBJECT:
		break;
	default:
		return -1;
	}
	for (int i = 0; i < d->depth; i++)
		if (d->open[i] == v)
			return -1;	/* inside itself: jansson refuses it too */
	if (d->depth == DUMP_DEPTH)
		return dump_jansson(sb, v);
	d->open[d->depth++] = v;
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		if (!room(sb, 1))
			return -1;
		sb->buf[sb->len++] = '[';
		for (size_t i = 0; i < n; i++) {
			if (i) {
				if (!room(sb, 1))
					return -1;
				sb->buf[sb->len++] = ',';
			}
			if (dump_value(d, json_array_get(v, i)))
				return -1;
		}
		if (!room(sb, 1))
			return -1;
		sb->buf[sb->len++] = ']';
	} else {
		bool first = true;
		if (!room(sb, 1))
			return -1;
		sb->buf[sb->len++] = '{';
		for (void *it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			if (!first) {
				if (!room(sb, 1))
					return -1;
				sb->buf[sb->len++] = ',';
			}
			first = false;
			if (dump_string(sb, json_object_iter_key(it), json_object_iter_key_len(it)) ||
			    !room(sb, 1))
				return -1;
			sb->buf[sb->len++] = ':';
			if (dump_value(d, json_object_iter_value(it)))
				return -1;
		}
		if (!room(sb, 1))
			return -1;
		sb->buf[sb->len++] = '}';
	}
	d->depth--;
	return 0;
}

/* SB as it was at WAS when the dump failed (FAILED), else terminated. */
static int dump_end(struct wap_sb *sb, size_t was, bool failed)
{
	if (failed) {
		sb->len = was;
		if (sb->buf)
			sb->buf[was] = 0;
		return -1;
	}
	sb->buf[sb->len] = 0;
	return 0;
}

int wap_json_dump(const json_t *v, struct wap_sb *sb)
{
	struct dumper d;	/* not zeroed: open[] is written as it goes */
	size_t was = sb->len;

	d.sb = sb;
	d.depth = 0;
	return dump_end(sb, was, !v || sb->oom || dump_value(&d, v));
}

int wap_json_dump_str(struct wap_sb *sb, const char *s, size_t n)
{
	size_t was = sb->len;

	return dump_end(sb, was, sb->oom || dump_string(sb, s, n));
}

char *wap_json_dumps(const json_t *v, size_t *len)
{
	struct wap_sb sb = WAP_SB_INIT;

	if (!wap_sb_grow(&sb, 255) || wap_json_dump(v, &sb)) {
		wap_sb_release(&sb);
		return NULL;
	}
	if (len)
		*len = sb.len;
	return wap_sb_detach(&sb);
}

/* ---- decoding ---- */

/* Nesting past this is left to jansson (which allows 2048). */
#define LOAD_DEPTH 128

struct loader {
	const unsigned char *p, *end;
	int depth;
	char *tmp;	/* unescaped strings */
	size_t tmpcap;
};

static inline void skip_ws(struct loader *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\n' || *l->p == '\r' || *l->p == '\t'))
		l->p++;
}

static int hex4(const unsigned char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A string at l->p (past its opening quote): its bytes in *S, *N (in the
 * input, or unescaped in l->tmp).  -1: not taken here (invalid, a NUL, or
 * out of memory). */
static int load_string(struct loader *l, const char **s, size_t *n)
{
	const unsigned char *start = l->p, *q = l->p;
	bool esc = false;
	char *t;

	for (;;) {
		if (q >= l->end)
			return -1;
		unsigned c = *q;
		if (c == '"')
			break;
		if (c == '\\') {
			esc = true;
			q += 2;
			continue;
		}
		if (c < 0x20)
			return -1;
		if (c < 0x80) {
			q++;
			continue;
		}
		if (cls[c] == 5 || (size_t)(l->end - q) < cls[c] || !utf8_seq(q, cls[c]))
			return -1;
		q += cls[c];
	}
	l->p = q + 1;
	if (!esc) {
		*s = (const char *)start;
		*n = q - start;
		return 0;
	}
	if ((size_t)(q - start) + 1 > l->tmpcap) {
		char *nt = realloc(l->tmp, (size_t)(q - start) + 1);
		if (!nt)
			return -1;
		l->tmp = nt;
		l->tmpcap = (size_t)(q - start) + 1;
	}
	t = l->tmp;
	for (const unsigned char *r = start; r < q;) {
		int v, v2;
		if (*r != '\\') {
			*t++ = (char)*r++;
			continue;
		}
		r++;
		switch (*r++) {
		case '"': *t++ = '"'; break;
		case '\\': *t++ = '\\'; break;
		case '/': *t++ = '/'; break;
		case 'b': *t++ = '\b'; break;
		case 'f': *t++ = '\f'; break;
		case 'n': *t++ = '\n'; break;
		case 'r': *t++ = '\r'; break;
		case 't': *t++ = '\t'; break;
		case 'u':
			if (q - r < 4 || (v = hex4(r)) <= 0)
				return -1;	/* bad digits, or \u0000 */
			r += 4;
			if (v >= 0xdc00 && v <= 0xdfff)
				return -1;
			if (v >= 0xd800 && v <= 0xdbff) {
				if (q - r < 6 || r[0] != '\\' || r[1] != 'u' || (v2 = hex4(r + 2)) < 0xdc00 ||
				    v2 > 0xdfff)
					return -1;
				r += 6;
				v = ((v - 0xd800) << 10) + (v2 - 0xdc00) + 0x10000;
			}
			if (v < 0x80) {
				*t++ = (char)v;
			} else if (v < 0x800) {
				*t++ = (char)(0xc0 | (v >> 6));
				*t++ = (char)(0x80 | (v & 0x3f));
			} else if (v < 0x10000) {
				*t++ = (char)(0xe0 | (v >> 12));
				*t++ = (char)(0x80 | ((v >> 6) & 0x3f));
				*t++ = (char)(0x80 | (v & 0x3f));
			} else {
				*t++ = (char)(0xf0 | (v >> 18));
				*t++ = (char)(0x80 | ((v >> 12) & 0x3f));
				*t++ = (char)(0x80 | ((v >> 6) & 0x3f));
				*t++ = (char)(0x80 | (v & 0x3f));
			}
			break;
		default:
			return -1;
		}
	}
	*s = l->tmp;
	*n = t - l->tmp;
	return 0;
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* a literal: the word must end there (jansson reads the whole word) */
static bool literal(struct loader *l, const char *w, size_t n)
{
	if ((size_t)(l->end - l->p) < n || memcmp(l->p, w, n) ||
	    ((size_t)(l->end - l->p) > n && is_alpha(l->p[n])))
		return false;
	l->p += n;
	return true;
}

/* an integer; a real (or one too big) is left to jansson */
static json_t *load_number(struct loader *l)
{
	bool neg = false;
	unsigned long long v = 0, max;

	if (*l->p == '-') {
		neg = true;
		l->p++;
	}
	if (l->p >= l->end)
		return NULL;
	if (*l->p == '0') {
		l->p++;
	} else if (*l->p >= '1' && *l->p <= '9') {
		max = neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX;
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			unsigned d = *l->p++ - '0';
			if (v > (max - d) / 10)
				return NULL;
			v = v * 10 + d;
		}
	} else {
		return NULL;
	}
	if (l->p < l->end && ((*l->p >= '0' && *l->p <= '9') || *l->p == '.' || *l->p == 'e' ||
			      *l->p == 'E'))
		return NULL;
	return json_integer(neg ? (json_int_t)(0ULL - v) : (json_int_t)v);
}

static json_t *load_value(struct loader *l);

static json_t *load_array(struct loader *l)
{
	json_t *a = json_array(), *e;

	if (!a)
		return NULL;
	skip_ws(l);
	if (l->p < l->end && *l->p == ']') {
		l->p++;
		return a;
	}
	for (;;) {
		if (!(e = load_value(l)) || json_array_append_new(a, e))
			goto fail;
		skip_ws(l);
		if (l->p >= l->end)
			goto fail;
		if (*l->p == ']') {
			l->p++;
			return a;
		}
		if (*l->p++ != ',')
			goto fail;
		skip_ws(l);
	}
fail:
	json_decref(a);
	return NULL;
}

static json_t *load_object(struct loader *l)
{
	json_t *o = json_object(), *v;

	if (!o)
		return NULL;
	skip_ws(l);
	if (l->p < l->end && *l->p == '}') {
		l->p++;
		return o;
	}
	for (;;) {
		const char *k;
		char kbuf[64], *kheap = NULL;
		size_t kn;
		int rc;

		if (l->p >= l->end || *l->p != '"')
			goto fail;
		l->p++;
		if (load_string(l, &k, &kn))
			goto fail;
		if (k == l->tmp) {	/* the next string reuses tmp: keep the key */
			if (kn < sizeof(kbuf)) {
				memcpy(kbuf, k, kn);
				k = kbuf;
			} else if ((kheap = malloc(kn))) {
				memcpy(kheap, k, kn);
				k = kheap;
			} else {
				goto fail;
			}
		}
		skip_ws(l);
		if (l->p >= l->end || *l->p++ != ':') {
			free(kheap);
			goto fail;
		}
		skip_ws(l);
		v = load_value(l);
		/* the same call jansson makes: a key seen before keeps its
		 * place and takes the new value */
		rc = v ? json_object_setn_new_nocheck(o, k, kn, v) : -1;
		free(kheap);
		if (rc)
			goto fail;
		skip_ws(l);
		if (l->p >= l->end)
			goto fail;
		if (*l->p == '}') {
			l->p++;
			return o;
		}
		if (*l->p++ != ',')
			goto fail;
		skip_ws(l);
	}
fail:
	json_decref(o);
	return NULL;
}

/* the value at l->p (whitespace skipped), or NULL: not taken here */
static json_t *load_value(struct loader *l)
{
	json_t *v = NULL;

	if (l->p >= l->end || ++l->depth > LOAD_DEPTH)
		return NULL;
	switch (*l->p) {
	case '{':
		l->p++;
		v = load_object(l);
		break;
	case '[':
		l->p++;
		v = load_array(l);
		break;
	case '"': {
		const char *s;
		size_t n;
		l->p++;
		if (!load_string(l, &s, &n))
			v = json_stringn_nocheck(s, n);
		break;
	}
	case 't':
		v = literal(l, "true", 4) ? json_true() : NULL;
		break;
	case 'f':
		v = literal(l, "false", 5) ? json_false() : NULL;
		break;
	case 'n':
		v = literal(l, "null", 4) ? json_null() : NULL;
		break;
	default:
		if (*l->p == '-' || (*l->p >= '0' && *l->p <= '9'))
			v = load_number(l);
	}
	l->depth--;
	return v;
}

json_t *wap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
	struct loader l = { (const unsigned char *)buf, (const unsigned char *)buf + len, 0, NULL, 0 };
	json_t *v = NULL;

	if (buf && !(flags & ~(size_t)JSON_DECODE_ANY)) {
		skip_ws(&l);
		if ((flags & JSON_DECODE_ANY) || (l.p < l.end && (*l.p == '{' || *l.p == '[')))
			v = load_value(&l);
		skip_ws(&l);
		if (v && l.p != l.end) {
			json_decref(v);
			v = NULL;
		}
	}
	free(l.tmp);
	if (!v)	/* jansson's verdict, and its words for what is wrong */
		return json_loadb(buf, len, flags, err);
	if (err) {
		memset(err, 0, sizeof(*err));
		err->line = err->column = -1;
		err->position = (int)len;
		memcpy(err->source, "<buffer>", sizeof("<buffer>"));
	}
	return v;
}

size_t wap_json_values(const char *buf, size_t len)
{
	size_t n = 1;
	bool str = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				str = false;
		} else if (c == '"') {
			str = true;
		} else if (c == ',' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}
