/* serve/acp_state.c - the Agent Control state.* methods wap can answer
 * without a language server. */
#include <string.h>

#include "acp_impl.h"

int acp_state_getWorkspace(struct acp_ctx *c, json_t **res, struct wap_err *err)
{
	const char *root = ACP_WS(c)->root, *base = strrchr(root, '/');

	(void)err;
	base = base && base[1] ? base + 1 : root;
	*res = json_pack("{s:[s], s:s}", "folders", root, "name", base);	/* the document's two fields */
	return 0;
}
