/* git/log.c - the log and show actions: commits as JSON, --since and
 * --until, and the history walk as git log does it (date order, path
 * limiting with parent simplification, revision ranges). */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* ---- log and show ---- */

/* "2026-11-22T00:05:14+01:00": the time T at OFFSET_MIN, its local time
 * and offset (as gmtime_r and snprintf would, without them: two dates a
 * commit of a log of thousands) */
static void iso_date(git_time_t t, int offset_min, char out[40])
{
	long long lt = (long long)t + offset_min * 60LL, days, secs, y, era;
	unsigned doe, yoe, doy, mp, d, m;
	int off = offset_min < 0 ? -offset_min : offset_min;

	days = lt >= 0 ? lt / 86400 : -((-lt + 86399) / 86400);
	secs = lt - days * 86400;
	/* Howard Hinnant's civil_from_days */
	days += 719468;
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = (unsigned)(days - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = (long long)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (y < 0 || y > 9999 || off >= 100 * 60) {
		snprintf(out, 40, "%04lld-%02u-%02uT%02lld:%02lld:%02lld%c%02d:%02d", y, m, d, secs / 3600,
			 secs / 60 % 60, secs % 60, offset_min < 0 ? '-' : '+', off / 60, off % 60);
		return;
	}
	memcpy(out, "0000-00-00T00:00:00+00:00", 26);
	out[0] += (char)(y / 1000), out[1] += (char)(y / 100 % 10), out[2] += (char)(y / 10 % 10);
	out[3] += (char)(y % 10);
	out[5] += (char)(m / 10), out[6] += (char)(m % 10);
	out[8] += (char)(d / 10), out[9] += (char)(d % 10);
	out[11] += (char)(secs / 36000), out[12] += (char)(secs / 3600 % 10);
	out[14] += (char)(secs / 60 % 60 / 10), out[15] += (char)(secs / 60 % 10);
	out[17] += (char)(secs % 60 / 10), out[18] += (char)(secs % 10);
	out[19] = offset_min < 0 ? '-' : '+';
	out[20] += (char)(off / 600 % 10), out[21] += (char)(off / 60 % 10);
	out[23] += (char)(off % 60 / 10), out[24] += (char)(off % 10);
}

/* The name and email of C's KEY ("author " or "committer ") line as git
 * splits it (libgit2's signature also cuts '.', ',', '"'... off the ends
 * of a name: "Mick A." would be "Mick A"); NULL, NULL if not found. */
static void raw_ident(git_commit *c, const char *key, char **name, char **email)
{
	const char *h = git_commit_raw_header(c), *l, *lt, *gt, *e;
	size_t kl = strlen(key);

	*name = *email = NULL;
	for (l = h; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, kl))
			continue;
		l += kl;
		e = strchrnul(l, '\n');
		lt = memchr(l, '<', e - l);
		gt = lt ? memchr(lt, '>', e - lt) : NULL;
		if (!gt)
			return;
		for (e = lt; e > l && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*name = strndup(l, e - l);
		*email = strndup(lt + 1, gt - lt - 1);
		if (!*name || !*email) {
			free(*name);
			free(*email);
			*name = *email = NULL;
		}
		return;
	}
}

static json_t *commit_json(struct g *g, git_commit *c)
{
	const git_signature *a = git_commit_author(c), *cm = git_commit_committer(c);
	const char *msg = git_commit_message(c), *sum = git_commit_summary(c);
	char h[GIT_OID_HEXSZ + 1], ad[40], cd[40], *an, *ae, *cn, *ce;
	size_t ml = msg ? strlen(msg) : 0;
	json_t *parents = json_array(), *o;

	oid_hex(git_commit_id(c), h);
	iso_date(a->when.time, a->when.offset, ad);
	iso_date(cm->when.time, cm->when.offset, cd);
	while (ml && (msg[ml - 1] == '\n' || msg[ml - 1] == ' ' || msg[ml - 1] == '\t'))
		ml--;
	for (unsigned i = 0; i < git_commit_parentcount(c); i++)
		json_array_append_new(parents, oid_json(git_commit_parent_id(c, i)));
	raw_ident(c, "author ", &an, &ae);
	raw_ident(c, "committer ", &cn, &ce);
	o = json_pack("{s:s, s:o, s:s, s:s#, s:s, s:s, s:s, s:s, s:s, s:s, s:o}",
		      "hash", h, "shortHash", oid_abbrev_json(g, git_commit_id(c)), "subject", sum ? sum : "",
		      "message", msg ? msg : "", (int)ml, "author", an ? an : a->name,
		      "authorEmail", ae ? ae : a->email, "date", ad, "committer", cn ? cn : cm->name,
		      "committerEmail", ce ? ce : cm->email, "commitDate", cd, "parents", parents);
	/* git's %B is the raw message: kept when it is not the trimmed one
	 * and a newline (a message made without git's clean-up) */
	if (o && msg && *msg && (strlen(msg) != ml + 1 || msg[ml] != '\n'))
		json_object_set_new(o, "rawMessage", json_string(msg));
	free(an);
	free(ae);
	free(cn);
	free(ce);
	return o;
}

/* Dates for --since/--until: @EPOCH, "N units ago", now, yesterday, or
 * YYYY-MM-DD[( |T)HH:MM[:SS]][Z|(+|-)HH[:]MM] (local time without a zone). */
static int parse_when(struct g *g, const char *s, const char *opt, git_time_t *out)
{
	static const struct { const char *u; long secs; } units[] = {
		{ "second", 1 }, { "minute", 60 }, { "hour", 3600 }, { "day", 86400 },
		{ "week", 604800 }, { "month", 2592000 }, { "year", 31536000 }, { NULL, 0 } };
	time_t now = time(NULL);
	long long n;
	char unit[32], rest[8], rel[128];
	int y, mo, d, H = 0, M = 0, S = 0, used = 0, k;
	struct tm tm = { 0 };
	const char *p;

	if (s[0] == '@' && sscanf(s + 1, "%lld%n", &n, &used) == 1 && !s[1 + used]) {
		*out = n;
		return 0;
	}
	if (!strcmp(s, "now")) {
		*out = now;
		return 0;
	}
	if (!strcmp(s, "yesterday")) {
		*out = now - 86400;
		return 0;
	}
	snprintf(rel, sizeof(rel), "%s", s);
	for (char *q = rel; *q; q++)
		if (*q == '.' || *q == '_')
			*q = ' ';
	if (sscanf(rel, "%lld %31[a-z] %7s", &n, unit, rest) == 3 && !strcmp(rest, "ago") && n >= 0) {
		size_t ul = strlen(unit);
		if (ul > 1 && unit[ul - 1] == 's')
			unit[ul - 1] = 0;
		for (k = 0; units[k].u; k++)
			if (!strcmp(unit, units[k].u)) {
				*out = now - n * units[k].secs;
				return 0;
			}
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
		p = s + used;
		if ((*p == 'T' || *p == ' ') && sscanf(p + 1, "%2d:%2d%n", &H, &M, &used) == 2) {
			p += 1 + used;
			if (*p == ':' && sscanf(p + 1, "%2d%n", &S, &used) == 1)
				p += 1 + used;
		}
		tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
		tm.tm_hour = H, tm.tm_min = M, tm.tm_sec = S;
		if (!*p) {
			tm.tm_isdst = -1;
			*out = mktime(&tm);
			return 0;
		}
		if (!strcmp(p, "Z")) {
			*out = timegm(&tm);
			return 0;
		}
		if (*p == '+' || *p == '-') {
			int oh, om = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &used) == 2 ||
			    sscanf(p + 1, "%2d%2d%n", &oh, &om, &used) == 2) {
				if (!p[1 + used]) {
					long off = (oh * 60 + om) * 60;
					*out = timegm(&tm) - (*p == '+' ? off : -off);
					return 0;
				}
			}
		}
	}
	return wap_err_set(g->err, WAP_E_INVALID,
			   "Invalid date for --%s: '%s' (use YYYY-MM-DD[THH:MM[:SS]][Z|+HH:MM], @EPOCH or 'N days ago')",
			   opt, s);
}

/* ---- the history walk, as git log does it ----
 * Commits come out of a queue ordered by committer date, newest first
 * (equal dates in the order they were queued: git's
 * commit_list_insert_by_date); a commit older than --since ends its line
 * of history; with paths, a commit that changes none of them is not shown,
 * and a merge that is TREESAME to a parent follows that parent only (git's
 * default history simplification). */
struct oidset {
	git_oid *v;
	size_t cap, n;
};

static size_t oid_hash(const git_oid *id)
{
	size_t h;

	memcpy(&h, id->id, sizeof(h));
	return h;
}

static bool oidset_has(const struct oidset *s, const git_oid *id)
{
	if (!s->cap)
		return false;
	for (size_t i = oid_hash(id) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (git_oid_is_zero(&s->v[i]))
			return false;
		if (git_oid_equal(&s->v[i], id))
			return true;
	}
}

/* 1 if added, 0 if present, -1 out of memory */
static int oidset_add(struct oidset *s, const git_oid *id)
{
	size_t i;

	if (oidset_has(s, id))
		return 0;
	if ((s->n + 1) * 2 > s->cap) {
		struct oidset b = { calloc(s->cap ? s->cap * 2 : 64, sizeof(git_oid)), s->cap ? s->cap * 2 : 64, 0 };
		if (!b.v)
			return -1;
		for (size_t k = 0; k < s->cap; k++)
			if (!git_oid_is_zero(&s->v[k]))
				oidset_add(&b, &s->v[k]);
		free(s->v);
		*s = b;
	}
	for (i = oid_hash(id) & (s->cap - 1); !git_oid_is_zero(&s->v[i]); i = (i + 1) & (s->cap - 1))
		;
	git_oid_cpy(&s->v[i], id);
	s->n++;
	return 1;
}

struct cqueue {
	git_commit **v;
	size_t n, cap;
};

static int cq_insert(struct cqueue *q, git_commit *c)
{
	git_time_t t = git_commit_time(c);
	size_t i = 0;

	if (q->n == q->cap) {
		size_t nc = q->cap ? q->cap * 2 : 16;
		git_commit **nv = realloc(q->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		q->v = nv;
		q->cap = nc;
	}
	while (i < q->n && git_commit_time(q->v[i]) >= t)
		i++;
	memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof(*q->v));
	q->v[i] = c;
	q->n++;
	return 0;
}

static git_commit *cq_pop(struct cqueue *q)
{
	git_commit *c;

	if (!q->n)
		return NULL;
	c = q->v[0];
	memmove(q->v, q->v + 1, --q->n * sizeof(*q->v));
	return c;
}

/* Is C's tree the same as its parent P's (or, for P NULL, the empty
 * tree's) at PATHS? */
static int treesame(struct g *g, git_commit *c, git_commit *p, struct strv *paths, bool *same)
{
	git_diff_options o;
	git_tree *t = NULL, *pt = NULL;
	git_diff *d = NULL;
	int e;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.pathspec = strv_arr(paths);
	if (!(e = git_commit_tree(&t, c)) && (!p || !(e = git_commit_tree(&pt, p))))
		e = git_diff_tree_to_tree(&d, g->repo, pt, t, &o);
	if (!e)
		*same = git_diff_num_deltas(d) == 0;
	git_diff_free(d);
	git_tree_free(pt);
	git_tree_free(t);
	return e ? lg(g, e, "cannot compare commits") : 0;
}

/* C's parent I, looked up once into PV[I] (commits are not cached:
 * git_libgit2_init's options in git.c) */
static git_commit *parent_at(struct g *g, git_commit *c, git_commit **pv, unsigned i)
{
	if (!pv[i] && git_commit_parent(&pv[i], c, i)) {
		pv[i] = NULL;
		lg(g, -1, "cannot read a parent commit");
	}
	return pv[i];
}

/* Mark every commit reachable from REV as hidden (the A of A..B). */
static int hide_from(struct g *g, const char *rev, struct oidset *hidden)
{
	git_revwalk *w = NULL;
	git_commit *c = NULL;
	git_oid id;
	int e;

	if (resolve_commit(g, rev, &c))
		return -1;
	if (!(e = git_revwalk_new(&w, g->repo)) && !(e = git_revwalk_push(w, git_commit_id(c)))) {
		while (!(e = git_revwalk_next(&id, w)))
			if (oidset_add(hidden, &id) < 0) {
				e = -1;
				break;
			}
	}
	git_revwalk_free(w);
	git_commit_free(c);
	if (e && e != GIT_ITEROVER)
		return lg(g, e, "cannot walk the history");
	git_error_clear();
	return 0;
}

/* --author and --grep as git takes them: a POSIX basic regex, case
 * sensitive; ^ and $ match at each line of the message.  *SET says
 * whether the option was given. */
static int log_regex(struct g *g, const char *key, const char *opt, regex_t *re, bool *set)
{
	const char *pat = str_key(g, key);
	char msg[256];
	int e;

	*set = false;
	if (!pat)
		return 0;
	if ((e = regcomp(re, pat, REG_NOSUB | REG_NEWLINE))) {
		regerror(e, re, msg, sizeof(msg));
		return wap_err_set(g->err, WAP_E_INVALID, "Invalid regex for --%s: '%s': %s", opt, pat, msg);
	}
	*set = true;
	return 0;
}

/* Does C pass --author (matched against "Name <email>", git's author
 * header without its date) and --grep (against the message)? */
static bool log_match(git_commit *c, const regex_t *author, bool has_author, const regex_t *grep,
		      bool has_grep)
{
	if (has_author) {
		const git_signature *a = git_commit_author(c);
		char *who = NULL;
		bool m;
		if (asprintf(&who, "%s <%s>", a->name, a->email) < 0)
			return false;
		m = !regexec(author, who, 0, NULL, 0);
		free(who);
		if (!m)
			return false;
	}
	if (has_grep) {
		const char *msg = git_commit_message(c);
		if (!msg || regexec(grep, msg, 0, NULL, 0))
			return false;
	}
	return true;
}

/* R gets the diff of commit C against its first parent (its tree alone
 * for a root commit) in PATHS, as show and log -p make it: "diff" (the
 * patch, --stat or --name-only), "files", the counts. */
static int commit_diff(struct g *g, git_commit *c, json_t *r, struct strv *paths, bool stat, bool names)
{
	git_commit *p = NULL;
	git_tree *t = NULL, *pt = NULL;
	git_diff *d = NULL;
	git_diff_options o;
	int rc = -1, e;

	if (diff_opts(g, &o, paths))
		return -1;
	if ((e = git_commit_tree(&t, c)) ||
	    (git_commit_parentcount(c) && ((e = git_commit_parent(&p, c, 0)) || (e = git_commit_tree(&pt, p)))) ||
	    (e = tree_to_tree(g, &d, pt, t, &o))) {
		lg(g, e, "cannot compute the diff of %s", git_oid_tostr_s(git_commit_id(c)));
		goto out;
	}
	rc = find_renames(g, d) || diff_result(g, d, r, stat, names) ? -1 : 0;
out:
	git_diff_free(d);
	git_tree_free(t);
	git_tree_free(pt);
	git_commit_free(p);
	return rc;
}

int op_log(struct g *g, json_t **res)
{
	regex_t author_re, grep_re;
	bool has_author = false, has_grep = false;
	struct strv revs = { 0 }, paths = { 0 }, starts = { 0 };
	struct oidset seen = { 0 }, hidden = { 0 };
	struct cqueue q = { 0 };
	git_commit **pv = NULL;		/* the parents of the commit at hand */
	unsigned pvn = 0, pvused = 0;
	long long max = 50;
	git_time_t since = 0, until = 0;
	bool has_since = false, has_until = false, truncated = false, filter;
	const char *s;
	json_t *entries = NULL;
	git_commit *c = NULL;
	struct wap_sb text = WAP_SB_INIT;
	long long shown = 0;
	/* -p, --stat, --name-only: each commit's diff, as git log prints it
	 * (none for a merge, as git's default); their text all told stops
	 * at maxFileSize, and the log with it */
	bool stat = bool_key(g, "stat"), names = bool_key(g, "name_only");
	bool diffs = stat || names || bool_key(g, "patch"), cut = false;
	const char *bad = stat && names ? "--stat with --name-only" : diffs && stat && bool_key(g, "patch") ?
			  "-p with --stat (git's patch with a diffstat)" : NULL;
	size_t left = g->ws->lim.max_file_size;
	int rc = -1, k;

	if ((k = wap_req_int(g->req, "max_count", &max, g->err)) < 0 ||
	    wap_git_pretty(NULL, g->req, NULL, g->err))
		return -1;
	if (max < 0)
		return wap_err_set(g->err, WAP_E_INVALID, "--max-count must not be negative");
	if (bad)
		return wap_err_set(g->err, WAP_E_INVALID, "log: %s is not supported: use one", bad);
	if ((s = str_key(g, "since"))) {
		if (parse_when(g, s, "since", &since))
			return -1;
		has_since = true;
	}
	if ((s = str_key(g, "until"))) {
		if (parse_when(g, s, "until", &until))
			return -1;
		has_until = true;
	}
	if (log_regex(g, "author", "author", &author_re, &has_author) ||
	    log_regex(g, "grep", "grep", &grep_re, &has_grep))
		goto out;
	if (split_revs_paths(g, &revs, &paths, WAP_ACC_READ))
		goto out;
	if ((s = str_key(g, "rev")) && strv_add(&revs, strdup(s))) {
		wap_err_oom(g->err);
		goto out;
	}
	filter = paths.n && !strv_has_root(&paths);
	if (diffs && tree_diff_index(g))
		goto out;
	entries = json_array();
	/* the starting points; A..B hides what A reaches */
	for (size_t i = 0; i < revs.n; i++) {
		char *dots = strstr(revs.v[i], "..");
		if (!dots) {
			if (strv_add(&starts, strdup(revs.v[i])))
				goto nomem;
			continue;
		}
		if (dots[2] == '.') {
			wap_err_set(g->err, WAP_E_INVALID, "Unsupported revision range for log: '%s' (use A..B)",
				    revs.v[i]);
			goto out;
		}
		*dots = 0;
		if (hide_from(g, *revs.v[i] ? revs.v[i] : "HEAD", &hidden))
			goto out;
		if (strv_add(&starts, strdup(dots[2] ? dots + 2 : "HEAD")))
			goto nomem;
	}
	if (!revs.n) {
		if (head_commit(g, &c))
			goto out;
		if (!c)
			goto done;	/* no commits yet */
	}
	for (size_t i = 0; i <= starts.n; i++) {
		if (i < starts.n && resolve_commit(g, starts.v[i], &c))
			goto out;
		if (!c)
			continue;
		if (oidset_add(&seen, git_commit_id(c)) != 1 || cq_insert(&q, c)) {
			git_commit_free(c);
			c = NULL;
			if (g->err->kind)
				goto out;
			continue;
		}
		c = NULL;
	}
	while ((c = cq_pop(&q))) {
		git_time_t t = git_commit_time(c);
		unsigned np = git_commit_parentcount(c);
		int follow = -1;	/* -1: every parent */
		bool show = true, same;

		if (oidset_has(&hidden, git_commit_id(c)) || (has_since && t < since)) {
			git_commit_free(c);
			continue;
		}
		if (np > pvn) {
			git_commit **nv = realloc(pv, np * sizeof(*pv));
			if (!nv)
				goto nomem;
			pv = nv;
			pvn = np;
		}
		if (np)
			memset(pv, 0, np * sizeof(*pv));
		pvused = np;
		if (filter) {
			if (np <= 1) {
				if ((np && !parent_at(g, c, pv, 0)) ||
				    treesame(g, c, np ? pv[0] : NULL, &paths, &same))
					goto out;
				show = !same;
			} else {
				for (unsigned i = 0; i < np && follow < 0; i++) {
					if (!parent_at(g, c, pv, i) || treesame(g, c, pv[i], &paths, &same))
						goto out;
					if (same)
						follow = i;
				}
				show = follow < 0;
			}
		}
		for (unsigned i = 0; i < np; i++) {
			int added;
			if (follow >= 0 && (int)i != follow)
				continue;
			added = oidset_add(&seen, git_commit_parent_id(c, i));
			if (added < 0)
				goto nomem;
			if (!added)
				continue;
			if (!parent_at(g, c, pv, i))
				goto out;
			if (cq_insert(&q, pv[i]))
				goto nomem;
			pv[i] = NULL;	/* the queue's now */
		}
		for (unsigned i = 0; i < np; i++) {
			git_commit_free(pv[i]);
			pv[i] = NULL;
		}
		if (show && !(has_until && t > until) && log_match(c, &author_re, has_author, &grep_re, has_grep)) {
			json_t *j;
			size_t used;

			if (shown >= max) {
				truncated = true;
				break;
			}
			j = commit_json(g, c);
			if (diffs && np > 1) {
				json_object_set_new(j, "diff", json_string(""));
				json_object_set_new(j, "files", json_array());
			} else if (diffs) {
				g->diff_cap = left ? left : 1;
				if (commit_diff(g, c, j, &paths, stat, names)) {
					json_decref(j);
					goto out;
				}
				used = strlen(json_string_value(json_object_get(j, "diff")));
				left -= used < left ? used : left;
				cut = json_is_true(json_object_get(j, "isTruncated"));
			}
			if (g->call->text) {
				/* the CLI's text: each commit printed and
				 * dropped (not 2,000 held as JSON to the end) */
				text.len = 0;
				wap_git_pretty_entry(j, shown, g->req, &text);
				g->call->text(g->call->text_arg, text.buf, text.len);
				json_decref(j);
			} else {
				json_array_append_new(entries, j);
			}
			shown++;
			if (cut) {	/* the patches stop here, and the log */
				truncated = true;
				break;
			}
		}
		git_commit_free(c);
	}
done:
	git_error_clear();
	*res = json_pack("{s:o, s:b}", "entries", entries, "isTruncated", truncated);
	if (truncated && cut)
		json_object_set_new(*res, "maxBytes", json_integer(g->ws->lim.max_file_size));
	entries = NULL;
	rc = 0;
	goto out;
nomem:
	wap_err_oom(g->err);
out:
	for (unsigned i = 0; i < pvused; i++)
		git_commit_free(pv[i]);
	free(pv);
	git_commit_free(c);
	while ((c = cq_pop(&q)))
		git_commit_free(c);
	free(q.v);
	free(seen.v);
	free(hidden.v);
	json_decref(entries);
	wap_sb_release(&text);
	strv_free(&revs);
	strv_free(&paths);
	strv_free(&starts);
	if (has_author)
		regfree(&author_re);
	if (has_grep)
		regfree(&grep_re);
	return rc;
}

int op_show(struct g *g, json_t **res)
{
	const char *rev = str_key(g, "rev");
	git_commit *c = NULL;
	struct strv none = { 0 };
	json_t *r = NULL;
	int rc = -1;

	if (!rev)
		rev = g->nargs ? g->args[0] : "HEAD";
	if (g->nargs > (str_key(g, "rev") ? 0 : 1))
		return wap_err_set(g->err, WAP_E_INVALID, "show takes one revision");
	if (wap_git_pretty(NULL, g->req, NULL, g->err))
		return -1;
	if (resolve_commit(g, rev, &c))
		return -1;
	r = commit_json(g, c);
	if (git_commit_parentcount(c) > 1) {
		/* the "Merge:" line's abbreviations */
		json_t *sp = json_array();
		for (unsigned i = 0; i < git_commit_parentcount(c); i++)
			json_array_append_new(sp, oid_abbrev_json(g, git_commit_parent_id(c, i)));
		json_object_set_new(r, "shortParents", sp);
		if (!bool_key(g, "stat")) {
			/* git's combined diff (--cc) is not made: see README */
			json_object_set_new(r, "diff", json_string(""));
			json_object_set_new(r, "files", json_array());
			goto done;
		}
		/* a merge's --stat is against its first parent, as git's */
	}
	if (tree_diff_index(g) || commit_diff(g, c, r, &none, bool_key(g, "stat"), false))
		goto out;
done:
	*res = r;
	r = NULL;
	rc = 0;
out:
	json_decref(r);
	git_commit_free(c);
	return rc;
}
