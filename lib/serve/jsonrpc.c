/* serve/jsonrpc.c - JSON-RPC 2.0 messages: parse, check, reply, process. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonrpc.h"

static size_t max_message(const struct wap_rpc_limits *lim)
{
	return lim && lim->max_message ? lim->max_message : WAP_RPC_MAX_MESSAGE;
}

static size_t max_batch(const struct wap_rpc_limits *lim)
{
	return lim && lim->max_batch ? lim->max_batch : WAP_RPC_MAX_BATCH;
}

json_t *wap_rpc_parse(const char *buf, size_t len, const struct wap_rpc_limits *lim,
		      json_t **reply)
{
	json_error_t je;
	json_t *v;

	*reply = NULL;
	if (len > max_message(lim)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "Invalid Request: message of %zu bytes is over the limit of %zu",
			 len, max_message(lim));
		*reply = wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST, msg, NULL);
		return NULL;
	}
	if (memchr(buf, 0, len)) {
		*reply = wap_rpc_error(NULL, WAP_RPC_PARSE_ERROR, "Parse error: NUL byte in the message", NULL);
		return NULL;
	}
	v = wap_json_loadb(buf, len, JSON_DECODE_ANY, &je);
	if (!v) {
		char msg[300];
		enum json_error_code c = json_error_code(&je);

		if (c == json_error_numeric_overflow || c == json_error_stack_overflow ||
		    c == json_error_null_character) {
			/* valid JSON we will not hold: a number too big, nesting too deep */
			snprintf(msg, sizeof(msg), "Invalid Request: %s", je.text);
			*reply = wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST, msg, NULL);
		} else {
			snprintf(msg, sizeof(msg), "Parse error: %s at line %d, column %d",
				 je.text, je.line, je.column);
			*reply = wap_rpc_error(NULL, WAP_RPC_PARSE_ERROR, msg, NULL);
		}
		return NULL;
	}
	return v;
}

static bool valid_id(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id) || json_is_real(id);
}

/* The members of a message, in one pass over its keys: a message has a
 * handful, and six lookups hashed six keys, most of them absent.  A key
 * is its bytes and its length: "id\u0000x" is not "id". */
#define IS(k, n, lit) ((n) == sizeof(lit) - 1 && !memcmp(k, lit, sizeof(lit) - 1))

static void members(const json_t *msg, const json_t **ver, const json_t **id, const json_t **method,
		    const json_t **params, const json_t **result, const json_t **error)
{
	const char *k;
	size_t n;
	json_t *v;

	*ver = *id = *method = *params = *result = *error = NULL;
	json_object_keylen_foreach((json_t *)msg, k, n, v) {
		if (IS(k, n, "jsonrpc"))
			*ver = v;
		else if (IS(k, n, "id"))
			*id = v;
		else if (IS(k, n, "method"))
			*method = v;
		else if (IS(k, n, "params"))
			*params = v;
		else if (IS(k, n, "result"))
			*result = v;
		else if (IS(k, n, "error"))
			*error = v;
	}
}

enum wap_rpc_kind wap_rpc_check(const json_t *msg, struct wap_rpc_msg *m, json_t **reply)
{
	const json_t *ver, *id, *method, *params, *result, *error;
	const char *why = NULL;

	memset(m, 0, sizeof(*m));
	m->msg = msg;
	m->kind = WAP_RPC_INVALID;
	if (reply)
		*reply = NULL;
	if (!json_is_object(msg)) {
		why = "Invalid Request: a message must be a JSON object";
		id = NULL;
		goto invalid;
	}
	members(msg, &ver, &id, &method, &params, &result, &error);
	if (id && !valid_id(id)) {
		why = json_is_null(id) ? "Invalid Request: id must not be null"
				       : "Invalid Request: id must be a string or a number";
		id = NULL;
		goto invalid;
	}
	if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0")) {
		why = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
		goto invalid;
	}
	if (method) {
		if (!json_is_string(method) || !json_string_length(method)) {
			why = "Invalid Request: \"method\" must be a non-empty string";
			goto invalid;
		}
		if (result || error) {
			why = "Invalid Request: a request cannot carry \"result\" or \"error\"";
			goto invalid;
		}
		if (params && !json_is_object(params) && !json_is_array(params)) {
			why = "Invalid Request: \"params\" must be an object or an array";
			goto invalid;
		}
		if (strlen(json_string_value(method)) != json_string_length(method)) {
			why = "Invalid Request: NUL in the method name";
			goto invalid;
		}
		m->method = json_string_value(method);
		m->params = (json_t *)params;
		m->id = id;
		m->kind = id ? WAP_RPC_REQUEST : WAP_RPC_NOTIFICATION;
		return m->kind;
	}
	if (id && (!!result ^ !!error) && !params &&
	    (!error || (json_is_object(error) && json_is_integer(json_object_get(error, "code"))))) {
		m->id = id;
		m->result = result;
		m->error = error;
		m->kind = WAP_RPC_RESPONSE;
		return m->kind;
	}
	why = "Invalid Request: no \"method\"";
invalid:
	if (reply)
		*reply = wap_rpc_error(id, WAP_RPC_INVALID_REQUEST, why, NULL);
	return WAP_RPC_INVALID;
}

static json_t *id_copy(const json_t *id)
{
	return id && !json_is_null(id) ? json_deep_copy(id) : json_null();
}

json_t *wap_rpc_result(const json_t *id, json_t *result)
{
	json_t *o = json_object();

	json_object_set_new_nocheck(o, "jsonrpc", json_string("2.0"));
	json_object_set_new_nocheck(o, "id", id_copy(id));
	json_object_set_new_nocheck(o, "result", result ? result : json_object());
	return o;
}

#define TOOL_TEXT_NOT_UTF8 "(the text rendering is not valid UTF-8; see structuredContent)"

json_t *wap_rpc_tool_result(const json_t *id, const char *text, bool is_error, json_t *res)
{
	/* built by hand: json_pack's format parsing cost more than the rest */
	json_t *t = json_string(text ? text : ""), *item = json_object(), *content = json_array();
	json_t *r = json_object();

	if (!t)	/* text not valid UTF-8: say so rather than fail */
		t = json_string(TOOL_TEXT_NOT_UTF8);
	json_object_set_new_nocheck(item, "type", json_string_nocheck("text"));
	json_object_set_new_nocheck(item, "text", t);
	json_array_append_new(content, item);
	json_object_set_new_nocheck(r, "content", content);
	json_object_set_new_nocheck(r, "isError", json_boolean(is_error));
	if (res)
		json_object_set_nocheck(r, "structuredContent", res);
	return wap_rpc_result(id, r);
}

/* The same bytes as wap_json_dump(wap_rpc_tool_result(...)): the keys in
 * the order that function sets them, the strings through the one escaper.
 * A call's reply is written once, straight into the output buffer: no
 * reply tree to allocate, hash and free (tests/unit/test_jsonrpc.c checks
 * the two agree). */
int wap_rpc_tool_reply(struct wap_sb *sb, const json_t *id, const char *text, bool is_error,
		       const json_t *res)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":";
	static const char sc[] = ",\"structuredContent\":";
	size_t was = sb->len;

	if (!text)
		text = "";
	wap_sb_add(sb, head, sizeof(head) - 1);
	if (id && !json_is_null(id)) {
		if (wap_json_dump(id, sb))
			goto fail;
	} else {
		wap_sb_add(sb, "null", 4);
	}
	wap_sb_add(sb, mid, sizeof(mid) - 1);
	if (wap_json_dump_str(sb, text, strlen(text)) &&
	    wap_json_dump_str(sb, TOOL_TEXT_NOT_UTF8, sizeof(TOOL_TEXT_NOT_UTF8) - 1))
		goto fail;
	wap_sb_adds(sb, is_error ? "}],\"isError\":true" : "}],\"isError\":false");
	if (res) {
		wap_sb_add(sb, sc, sizeof(sc) - 1);
		if (wap_json_dump(res, sb))
			goto fail;
	}
	wap_sb_add(sb, "}}", 2);
	if (!sb->oom)
		return 0;
fail:
	sb->len = was;
	if (sb->buf)
		sb->buf[was] = 0;
	return -1;
}

json_t *wap_rpc_error(const json_t *id, int code, const char *message, json_t *data)
{
	json_t *o = json_object(), *e = json_object(), *m;

	json_object_set_new_nocheck(e, "code", json_integer(code));
	/* messages may quote the caller's bytes: keep them valid UTF-8 */
	m = json_string(message ? message : "");
	json_object_set_new_nocheck(e, "message", m ? m : json_string("(message not valid UTF-8)"));
	if (data)
		json_object_set_new_nocheck(e, "data", data);
	json_object_set_new_nocheck(o, "jsonrpc", json_string("2.0"));
	json_object_set_new_nocheck(o, "id", id_copy(id));
	json_object_set_new_nocheck(o, "error", e);
	return o;
}

json_t *wap_rpc_oom(const json_t *id)
{
	return wap_rpc_error(id, WAP_RPC_INTERNAL, WAP_RPC_OOM_MSG, NULL);
}

json_t *wap_rpc_error_wap(const json_t *id, const struct wap_err *e)
{
	return wap_rpc_error(id, wap_err_rpc(e->kind), e->msg, wap_err_json(e));
}

json_t *wap_rpc_notification(const char *method, json_t *params)
{
	json_t *o = json_object();

	json_object_set_new_nocheck(o, "jsonrpc", json_string("2.0"));
	json_object_set_new_nocheck(o, "method", json_string(method));
	if (params)
		json_object_set_new_nocheck(o, "params", params);
	return o;
}

json_t *wap_rpc_request(const json_t *id, const char *method, json_t *params)
{
	json_t *o = wap_rpc_notification(method, params);

	json_object_set_new_nocheck(o, "id", id_copy(id));
	return o;
}

char *wap_rpc_dump(const json_t *msg, size_t *len)
{
	return wap_json_dumps(msg, len);
}

static json_t *process_one(const json_t *v, wap_rpc_handler handler, void *arg)
{
	struct wap_rpc_msg m;
	json_t *reply = NULL, *r;

	switch (wap_rpc_check(v, &m, &reply)) {
	case WAP_RPC_INVALID:
		return reply;
	case WAP_RPC_RESPONSE:
		handler(arg, &m);
		return NULL;
	case WAP_RPC_NOTIFICATION:
		r = handler(arg, &m);
		json_decref(r);
		return NULL;
	case WAP_RPC_REQUEST:
		r = handler(arg, &m);
		if (!r)
			r = wap_rpc_error(m.id, WAP_RPC_INTERNAL, "Internal error", NULL);
		return r;
	}
	return NULL;
}

json_t *wap_rpc_process_value(const json_t *v, const struct wap_rpc_limits *lim,
			      wap_rpc_handler handler, void *arg)
{
	json_t *out, *el;
	size_t i, made = 0;	/* the replies' bytes */

	if (!json_is_array(v))
		return process_one(v, handler, arg);
	if (lim && lim->no_batches)
		return wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST,
				     "Invalid Request: batches are not supported", NULL);
	if (!json_array_size(v))
		return wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST, "Invalid Request: empty batch", NULL);
	if (json_array_size(v) > max_batch(lim)) {
		char msg[120];
		snprintf(msg, sizeof(msg), "Invalid Request: batch of %zu messages is over the limit of %zu",
			 json_array_size(v), max_batch(lim));
		return wap_rpc_error(NULL, WAP_RPC_INVALID_REQUEST, msg, NULL);
	}
	out = json_array();
	json_array_foreach(v, i, el) {
		const json_t *id = json_object_get(el, "id");
		json_t *r;

		if (made > WAP_RPC_MAX_BATCH_REPLY && id && json_object_get(el, "method")) {
			struct wap_err e = { 0 };
			wap_err_set(&e, WAP_E_TOO_LARGE, "Batch too large: its replies before this "
				    "request took more than %u MiB, the most of one batch; send the "
				    "request again alone or in a smaller batch", WAP_RPC_MAX_BATCH_REPLY >> 20);
			r = wap_rpc_error_wap(id, &e);
			wap_err_release(&e);
		} else if ((r = process_one(el, handler, arg))) {
			made += json_dumpb(r, NULL, 0, JSON_COMPACT);
		}
		if (r)
			json_array_append_new(out, r);
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *wap_rpc_process(const char *buf, size_t len, const struct wap_rpc_limits *lim,
			wap_rpc_handler handler, void *arg)
{
	json_t *reply = NULL, *v = wap_rpc_parse(buf, len, lim, &reply), *out;

	if (!v)
		return reply;
	out = wap_rpc_process_value(v, lim, handler, arg);
	json_decref(v);
	return out;
}
