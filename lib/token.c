/* token.c - make, place and write the bearer token of the network doors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"
#include "token.h"

int wap_token_random(char out[65], struct wap_err *err)
{
	unsigned char b[32];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			return wap_err_set(err, WAP_E_FAILED, "Cannot make a token: getrandom: %s", strerror(errno));
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	explicit_bzero(b, sizeof(b));
	return 0;
}

/* Is the directory PATH would be created in at or beneath DIR? */
static bool beneath(const char *path, const char *dir)
{
	char *copy = strdup(path), *slash, real[PATH_MAX], rdir[PATH_MAX];
	bool in = false;
	size_t n;

	if (!copy)
		return true;	/* cannot tell: say yes, the caller refuses */
	slash = strrchr(copy, '/');
	if (!slash)
		snprintf(copy, strlen(copy) + 1, ".");
	else if (slash == copy)
		slash[1] = 0;
	else
		*slash = 0;
	if (realpath(copy, real) && realpath(dir, rdir)) {
		n = strlen(rdir);
		in = !strncmp(real, rdir, n) && (real[n] == '/' || real[n] == 0 || (n == 1 && rdir[0] == '/'));
	}
	free(copy);
	return in;
}

int wap_token_write(const struct wap_ws *ws, const char *path, const char *token, struct wap_err *err)
{
	size_t n = strlen(token);
	int fd;

	if (ws && ws->confined && (beneath(path, ws->root) || (ws->root_alias && beneath(path, ws->root_alias))))
		return wap_err_set(err, WAP_E_INVALID,
				   "The token file %s is inside the workspace root, where the agent could read it: "
				   "choose another --token-file", path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return wap_err_set(err, WAP_E_FAILED, "Cannot write the token file %s: %s", path, strerror(errno));
	if (fchmod(fd, 0600) < 0 || write(fd, token, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
		int e = errno;
		close(fd);
		return wap_err_set(err, WAP_E_FAILED, "Cannot write the token file %s: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}

char *wap_token_state_file(const char *name)
{
	const char *dir = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	struct wap_sb sb = WAP_SB_INIT;

	if (dir && *dir) {
		wap_sb_addf(&sb, "%s/%s", dir, name);
	} else {
		wap_sb_addf(&sb, "%s/.cache", home && *home ? home : "/tmp");
		if (sb.buf)
			mkdir(sb.buf, 0700);
		wap_sb_addf(&sb, "/%s", name);
	}
	return wap_sb_detach(&sb);
}
