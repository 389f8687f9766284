/* serve/audit.c - one JSON line per operation, never contents. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "policy.h"
#include "file.h"

struct wap_audit {
	FILE *f;		/* owned */
	pthread_mutex_t mu;
};

/* Request keys worth recording: they say where and what, not contents. */
static const char *const kept[] = {
	"path", "paths", "source", "destination", "pattern", "regexp", "command", "argv",
	"cwd", "action", "files", "include", "exclude", "type", "dir", "rev", "branch",
	"remote", "url", "member", "mode", "offset", "limit", "head", "tail", "recursive",
	"max_depth", "max_results", "timeout_ms", "replace_all", "dry_run", "force",
	"fixed_strings", "ignore_case", "glob", "name", "args", "terminalId", NULL
};

#define MAX_STR 200

static json_t *cut(const json_t *v)
{
	if (json_is_string(v) && json_string_length(v) > MAX_STR) {
		char buf[MAX_STR + 4];
		size_t n = MAX_STR;
		const unsigned char *s = (const unsigned char *)json_string_value(v);
		while (n && (s[n] & 0xC0) == 0x80)	/* do not split a UTF-8 sequence */
			n--;
		memcpy(buf, s, n);
		memcpy(buf + n, "...", 4);
		return json_string(buf);
	}
	if (json_is_array(v)) {
		json_t *a = json_array(), *el;
		size_t i;
		json_array_foreach(v, i, el) {
			if (i == 20) {
				json_array_append_new(a, json_string("..."));
				break;
			}
			if (json_is_string(el) || json_is_number(el))
				json_array_append_new(a, cut(el));
		}
		return a;
	}
	if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
		return json_deep_copy(v);
	return json_string("(omitted)");
}

static char *scrub_url(const char *u)
{
	/* user:password@ in a URL is a token */
	const char *p = strstr(u, "://"), *at, *slash;
	char *out;

	if (!p)
		return strdup(u);
	p += 3;
	slash = strchr(p, '/');
	at = strchr(p, '@');
	if (!at || (slash && at > slash))
		return strdup(u);
	if (asprintf(&out, "%.*s***@%s", (int)(p - u), u, at + 1) < 0)
		return NULL;
	return out;
}

json_t *wap_audit_summary(const char *op, const json_t *req)
{
	const struct wap_opdesc *d = op ? wap_op_find(op) : NULL;
	json_t *s = json_object();

	if (!json_is_object(req))
		return s;
	/* what is typed into a terminal is the command it runs (elsewhere
	 * "text" is a file's: not kept) */
	if (d && !strcmp(d->category, "terminal") && json_object_get(req, "text"))
		json_object_set_new(s, "text", cut(json_object_get(req, "text")));
	for (int i = 0; kept[i]; i++) {
		json_t *v = json_object_get(req, kept[i]);
		if (!v)
			continue;
		if (!strcmp(kept[i], "url") && json_is_string(v)) {
			char *u = scrub_url(json_string_value(v));
			json_t *j = u ? json_string(u) : NULL;
			json_t *c = j ? cut(j) : json_string("(omitted)");
			json_object_set_new(s, "url", c);
			json_decref(j);
			free(u);
			continue;
		}
		json_object_set_new(s, kept[i], cut(v));
	}
	/* say that contents were there without saying what they were */
	static const char *const sized[] = { "content", "new", "old", "patch", "stdin", NULL };
	for (int i = 0; sized[i]; i++) {
		json_t *v = json_object_get(req, sized[i]);
		if (json_is_string(v)) {
			char k[32];
			snprintf(k, sizeof(k), "%s_bytes", sized[i]);
			json_object_set_new(s, k, json_integer(json_string_length(v)));
		}
	}
	return s;
}

struct wap_audit *wap_audit_open(const char *file, struct wap_err *err)
{
	struct wap_audit *a = calloc(1, sizeof(*a));

	if (!a) {
		wap_err_oom(err);
		return NULL;
	}
	if (!strcmp(file, "-")) {
		/* the caller asked for the log on fd 2: a stream of our own on it */
		int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		a->f = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!a->f && fd >= 0)
			close(fd);
	} else {
		a->f = wap_open_record(file, true);
	}
	if (!a->f) {
		wap_err_set(err, WAP_E_FAILED, "cannot open the audit log %s: %s", file, strerror(errno));
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

void wap_audit_close(struct wap_audit *a)
{
	if (!a)
		return;
	fclose(a->f);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

void wap_audit_log(struct wap_audit *a, const char *op, const char *workspace,
		   const char *session, double duration_ms, const json_t *req,
		   const struct wap_err *err)
{
	struct timespec ts;
	char when[32], *line;
	json_t *o;

	if (!a)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	wap_iso_time(&ts, when);
	o = json_object();
	json_object_set_new(o, "time", json_string(when));
	json_object_set_new(o, "op", json_string(op));
	/* from the one table of ops: did it (try to) write or run commands? */
	json_object_set_new(o, "mutating", json_boolean(wap_op_flags(op, req) & WAP_OP_MUTATING));
	json_object_set_new(o, "workspace", workspace ? json_string(workspace) : json_null());
	json_object_set_new(o, "session", session ? json_string(session) : json_null());
	json_object_set_new(o, "duration_ms", json_real((double)(long long)(duration_ms * 1000) / 1000));
	if (err && err->kind != WAP_OK) {
		json_object_set_new(o, "outcome", json_string("error"));
		json_object_set_new(o, "error", json_string(wap_err_code(err->kind)));
	} else {
		json_object_set_new(o, "outcome", json_string("ok"));
	}
	json_object_set_new(o, "request", wap_audit_summary(op, req));
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!line)
		return;
	pthread_mutex_lock(&a->mu);
	fprintf(a->f, "%s\n", line);
	fflush(a->f);
	pthread_mutex_unlock(&a->mu);
	free(line);
}
