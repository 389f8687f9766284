/* edit/patch.h - patches: the `*** Begin Patch` format of Codex and OpenCode's
 * apply_patch, and unified diffs (`git diff`, `diff -u`).
 *
 * A patch is parsed whole, then every file's new content is computed in
 * memory (hunks located exactly, then ignoring trailing whitespace, then
 * all surrounding whitespace, then with Unicode punctuation normalised);
 * only when every file succeeds is anything written, each file atomically
 * with its version checked, and if a write fails midway the files already
 * changed are put back.  CRLF files stay CRLF.
 *
 * Ownership: struct wap_patch owns a copy of the patch text and everything
 * in it (wap_patch_release); *files from wap_patch_run is a new reference.
 */
#ifndef WAP_PATCH_H
#define WAP_PATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "edit.h"
#include "err.h"
#include "ws.h"

enum wap_pkind { WAP_P_ADD, WAP_P_DELETE, WAP_P_UPDATE };

struct wap_pline {
	char op;			/* ' ', '-', '+' */
	struct wap_span s;		/* into the patch's copy */
};

struct wap_phunk {
	long old_start, old_count;	/* unified: from "@@ -a,b"; -1 unknown */
	struct wap_span ctx;		/* Codex "@@ context" (len 0: none) */
	bool has_ctx;
	struct wap_pline *v;
	size_t n, cap;
	bool eof;			/* Codex "*** End of File" */
	bool old_nonl, new_nonl;	/* "\ No newline at end of file" */
};

struct wap_pfile {
	enum wap_pkind kind;
	char *path;			/* as written (malloc'd) */
	char *move_to;			/* or NULL */
	bool unified;
	mode_t mode;			/* "new file mode" permission bits, or 0 */
	mode_t chmod;			/* UPDATE: "new mode" bits, or 0 */
	bool link;			/* the new side is a symlink (mode 120000): its
					 * content the target */
	struct wap_phunk *h;
	size_t nh;
	char *content;			/* ADD: the new file's bytes */
	size_t clen;
};

struct wap_patch {
	char *buf;			/* the patch text, owned */
	struct wap_pfile *f;
	size_t n;
	bool unified;
	bool force;			/* set by the caller: replace read-only files */
};

/* Parse TEXT.  DFLT_PATH (may be NULL) names the file of a unified diff
 * that has hunks but no file header. */
int wap_patch_parse(const char *text, size_t len, const char *dflt_path,
		    struct wap_patch *p, struct wap_err *err);
void wap_patch_release(struct wap_patch *p);

/* Apply an UPDATE (or verify a DELETE) of F to OLD: *OUT malloc'd. */
int wap_patch_apply_file(const struct wap_pfile *f, const char *old, size_t oldlen,
			 char **out, size_t *outlen, struct wap_err *err);

/* Apply P to the workspace (DRY_RUN: compute only).  EXPECTED_VERSION
 * (may be NULL) is allowed when the patch touches one existing file.
 * *FILES receives [{status:"A"|"M"|"D"|"R", path, from?, diff, additions,
 * deletions, version?}] (version: after the patch; in a dry run the
 * current one, absent for a file that does not exist).  All or nothing. */
int wap_patch_run(const struct wap_ws *ws, const struct wap_patch *p,
		  const char *expected_version, bool dry_run, json_t **files,
		  struct wap_err *err);

/* Tests: make commit step N (0-based) fail, to check the rollback;
 * -1 (default) never.  $WAP_TEST_PATCH_FAIL_AT sets it too. */
extern int wap_patch_fail_at;

#endif
