/* fuzz_jsonrpc.c - libFuzzer target for the JSON-RPC core: any bytes are
 * parsed, checked and answered without a crash or a leak, and every reply
 * is a well-formed JSON-RPC response.  Build and run (after `make`):
 *
 *   scripts/fuzz jsonrpc 60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

/* A handler that answers "echo" with its params, fails "fail" with an
 * application error, and does not know the rest. */
static json_t *handler(void *arg, const struct wap_rpc_msg *m)
{
	(void)arg;
	if (m->kind == WAP_RPC_RESPONSE || !m->id)
		return NULL;
	if (!strcmp(m->method, "echo"))
		return wap_rpc_result(m->id, m->params ? json_incref(m->params) : NULL);
	if (!strcmp(m->method, "fail"))
		return wap_rpc_error(m->id, -32000, "failed", NULL);
	return wap_rpc_error(m->id, WAP_RPC_METHOD_NOT_FOUND, "Method not found", NULL);
}

static void check_reply(const json_t *r)
{
	if (!json_is_object(r) || !json_is_string(json_object_get(r, "jsonrpc")) ||
	    !json_object_get(r, "id") ||
	    !json_object_get(r, "result") == !json_object_get(r, "error"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wap_rpc_limits lim = { .max_message = 1 << 16, .max_batch = 16 };
	json_t *reply = wap_rpc_process((const char *)data, size, &lim, handler, NULL);
	size_t i;
	json_t *r;

	if (json_is_array(reply)) {
		json_array_foreach(reply, i, r)
			check_reply(r);
	} else if (reply) {
		check_reply(reply);
	}
	if (reply) {
		size_t n;
		char *s = wap_rpc_dump(reply, &n);
		free(s);
	}
	json_decref(reply);
	return 0;
}
