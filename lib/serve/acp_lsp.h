/* serve/acp_lsp.h - the Agent Control Protocol's methods that language
 * servers answer: state.getDiagnostics, state.getSymbols,
 * state.findReferences, state.goToDefinition, state.getHover,
 * state.getCodeActions, editor.formatDocument and editor.getCompletions.
 *
 * Each is a name and shape mapping onto the `sym` applet's op (its action
 * per method), run on the one road (wap_run_op: argument check, the policy
 * of sym.ACTION in lib/serve/policy.c, approval, audit).  Positions are
 * the protocol's: lines and characters from 0, characters in UTF-16 code
 * units (as LSP); paths absolute (or root-relative), beneath the root.
 */
#ifndef WAP_ACP_LSP_H
#define WAP_ACP_LSP_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "run.h"

/* Is METHOD one of the methods above? */
bool wap_acp_lsp_method(const char *method);

/* Run METHOD with PARAMS (borrowed).  Returns as wap_run_op: 0 with *RES
 * (a new reference), -1 with ERR, or WAP_POLICY_UNAPPROVED. */
int wap_acp_lsp(struct wap_run *run, const char *method, const json_t *params, json_t **res,
		struct wap_err *err);

#endif
