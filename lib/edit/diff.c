/* edit/diff.c - unified diffs of two buffers through libgit2. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lazy.h"
#include "diff.h"
#include "git.h"
#include "strbuf.h"
#include "text.h"

int wap_diff_make(const char *old, size_t oldlen, const char *new, size_t newlen,
		  const char *oldpath, const char *newpath, struct wap_diff *d,
		  struct wap_err *err)
{
	git_diff_options o;
	git_patch *p = NULL;
	git_buf b = { 0 };
	size_t ctx = 0, add = 0, del = 0;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (wap_git_init(err))
		return -1;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	if (!newpath)
		newpath = oldpath;
	o.flags = GIT_DIFF_FORCE_TEXT | GIT_DIFF_INDENT_HEURISTIC;
	o.context_lines = 3;
	if (git_patch_from_buffers(&p, old, old ? oldlen : 0, old ? oldpath : NULL,
				   new, new ? newlen : 0, new ? newpath : NULL, &o) ||
	    git_patch_line_stats(&ctx, &add, &del, p) || git_patch_to_buf(&b, p)) {
		const git_error *ge = git_error_last();
		wap_err_set(err, WAP_E_FAILED, "cannot make diff: %s",
			    ge && ge->message ? ge->message : "libgit2 error");
		goto out;
	}
	d->text = malloc(b.size + 1);
	if (!d->text) {
		wap_err_oom(err);
		goto out;
	}
	if (b.size)
		memcpy(d->text, b.ptr, b.size);
	d->text[b.size] = 0;
	d->len = b.size;
	d->additions = add;
	d->deletions = del;
	rc = 0;
out:
	git_buf_dispose(&b);
	git_patch_free(p);
	return rc;
}

void wap_diff_release(struct wap_diff *d)
{
	free(d->text);
	d->text = NULL;
	d->len = 0;
}

json_t *wap_diff_json(const struct wap_diff *d)
{
	struct wap_sb sb = WAP_SB_INIT;
	const char *p = d->text ? d->text : "";
	size_t len = d->text ? d->len : 0, bad;
	json_t *j;

	if (wap_text_utf8_valid(p, len, NULL))
		return json_stringn(p, len);
	while (len) {
		if (wap_text_utf8_valid(p, len, &bad)) {
			wap_sb_add(&sb, p, len);
			break;
		}
		wap_sb_add(&sb, p, bad);
		wap_sb_adds(&sb, "\xef\xbf\xbd");
		p += bad + 1;
		len -= bad + 1;
	}
	j = sb.oom ? NULL : json_stringn(sb.buf ? sb.buf : "", sb.len);
	wap_sb_release(&sb);
	return j;
}
