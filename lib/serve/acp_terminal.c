/* serve/acp_terminal.c - the Agent Control terminal.* methods: PTY terminals of
 * the session (lib/proc/term.c), their output pushed as notifications. */
#include <stdlib.h>
#include <string.h>

#include "acp_impl.h"
#include "config.h"
#include "strbuf.h"
#include "term.h"

static void on_term_output(void *arg, const char *id, const char *data, size_t len)
{
	struct wap_acp_session *s = arg;
	size_t n;
	char *clean = wap_term_utf8(data, len, &n);

	if (!clean)
		return;
	s->notify(s->arg, notification("terminal.output",
		json_pack("{s:s, s:s%}", "terminalId", id, "data", clean, n)));
	free(clean);
}

static void on_term_exit(void *arg, const char *id, int code, int sig)
{
	struct wap_acp_session *s = arg;
	json_t *p = json_pack("{s:s}", "terminalId", id);

	if (sig)
		json_object_set_new(p, "signal", json_integer(sig));
	else
		json_object_set_new(p, "exitCode", json_integer(code));
	s->notify(s->arg, notification("terminal.closed", p));
}

static struct wap_terms *terms(struct acp_ctx *c)
{
	if (!c->s->terms)
		c->s->terms = wap_terms_new(ACP_WS(c), on_term_output, on_term_exit, c->s);
	return c->s->terms;
}

static int term_id(struct acp_ctx *c, const char **id, struct wap_err *err)
{
	return acp_need_str(c, "terminalId", id, err);
}

int acp_terminal_create(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	struct wap_term_opts o = { 0 };
	json_t *env = json_object_get(c->params, "env"), *v;
	const char *k, *name = NULL, *cwd = NULL;
	char **envv = NULL, id[WAP_TERM_ID_LEN];
	int r;

	if (wap_req_str(c->params, "name", &name, err) < 0 || wap_req_str(c->params, "cwd", &cwd, err) < 0)
		return -1;
	if (env && !json_is_object(env) && !json_is_null(env))
		return wap_err_set(err, WAP_E_INVALID, "env must be an object of strings");
	json_object_foreach(env, k, v) {
		struct wap_sb sb = WAP_SB_INIT;
		if (!json_is_string(v) || !*k || strchr(k, '=')) {
			wap_strv_free(envv);
			return wap_err_set(err, WAP_E_INVALID, "env must be an object of strings");
		}
		wap_sb_addf(&sb, "%s=%s", k, json_string_value(v));
		wap_strv_push(&envv, sb.buf ? sb.buf : "");
		wap_sb_release(&sb);
	}
	if (!ACP_WS(c)->pol.allow_terminal) {
		wap_strv_free(envv);
		return wap_err_set(err, WAP_E_DISABLED, "Terminal access is disabled (security.allowTerminalAccess)");
	}
	o.name = name;
	o.cwd = cwd;
	o.env = envv;
	r = wap_term_create(terms(c), &o, id, err);
	wap_strv_free(envv);
	if (r < 0)
		return -1;
	*res = json_pack("{s:s}", "terminalId", id);
	return 0;
}

int acp_terminal_dispose(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (term_id(c, &id, err) < 0 || wap_term_release(terms(c), id, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_terminal_sendText(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *id, *text;
	bool nl = true;
	json_t *jt;
	struct wap_sb sb = WAP_SB_INIT;
	int r;

	if (term_id(c, &id, err) < 0 || acp_need_str(c, "text", &text, err) < 0 ||
	    wap_req_bool(c->params, "addNewLine", &nl, err) < 0)
		return -1;
	jt = json_object_get(c->params, "text");
	/* With a command list in force, what is typed is checked as a
	 * command line, as `wap exec` checks its commands. */
	if (wap_term_check_line(ACP_WS(c), text, err) < 0)
		return -1;
	wap_sb_add(&sb, text, json_string_length(jt));
	if (nl)
		wap_sb_addc(&sb, '\n');
	r = wap_term_send(terms(c), id, sb.buf ? sb.buf : "", sb.len, c->call.cancel, err);
	wap_sb_release(&sb);
	if (r < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_terminal_show(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;

	if (term_id(c, &id, err) < 0 || wap_term_show(terms(c), id, err) < 0)
		return -1;
	*res = acp_success();
	return 0;
}

int acp_terminal_list(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	(void)err;
	*res = json_pack("{s:o}", "terminals", wap_term_list(terms(c)));
	return 0;
}

int acp_terminal_getActive(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	*res = wap_term_active(terms(c));
	if (!*res)
		return wap_err_set(err, WAP_E_TERM_NOT_FOUND, "No active terminal");
	return 0;
}

int acp_terminal_getOutput(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *id;
	long long max = WAP_TERM_DEFAULT_LINES;
	char *out, *clean;
	size_t len, cl;
	bool trunc;
	struct wap_term_status st;

	if (term_id(c, &id, err) < 0 || wap_req_int(c->params, "maxLines", &max, err) < 0)
		return -1;
	if (max <= 0)
		return wap_err_set(err, WAP_E_INVALID, "maxLines must be positive");
	if (wap_term_output(terms(c), id, (size_t)max, &out, &len, &trunc, &st, err) < 0)
		return -1;
	clean = wap_term_utf8(out, len, &cl);
	free(out);
	if (!clean)
		return wap_err_oom(err);
	*res = json_pack("{s:s%, s:b, s:b}", "output", clean, cl, "truncated", trunc, "exited", st.exited);
	if (st.exited)
		json_object_set_new(*res, "exitCode", json_integer(st.exit_code));
	free(clean);
	return 0;
}
