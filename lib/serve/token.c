/* serve/token.c - make, place and write the bearer token of the network doors. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"
#include "token.h"

static int random_bytes(unsigned char *b, size_t nbytes, struct wap_err *err)
{
	size_t got = 0;

	while (got < nbytes) {
		ssize_t n = getrandom(b + got, nbytes - got, 0);
		if (n > 0)
			got += (size_t)n;
		else if (errno != EINTR)
			return wap_err_set(err, WAP_E_FAILED, "Cannot make a token: getrandom: %s", strerror(errno));
	}
	return 0;
}

int wap_random_hex(char *out, size_t nbytes, struct wap_err *err)
{
	unsigned char b[64];

	if (nbytes > sizeof(b))
		return wap_err_set(err, WAP_E_INVALID, "at most %zu random bytes", sizeof(b));
	if (random_bytes(b, nbytes, err))
		return -1;
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * nbytes] = 0;
	explicit_bzero(b, sizeof(b));
	return 0;
}

int wap_random_uuid(char out[37], struct wap_err *err)
{
	unsigned char b[16];

	if (random_bytes(b, sizeof(b), err))
		return -1;
	b[6] = (b[6] & 0x0f) | 0x40;	/* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80;	/* the RFC 4122 variant */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
	return 0;
}

int wap_token_random(char out[65], struct wap_err *err)
{
	return wap_random_hex(out, 32, err);
}

/* Is the directory PATH would be created in the root or beneath it?
 * Walked up by "..", comparing inodes, so symlinks and other spellings
 * of the root are seen through (and no path is resolved by name). */
static bool beneath(const char *path, int rootfd)
{
	char *dir = strdup(path), *slash;
	struct stat r, d, up;
	bool in = false;
	int fd, parent;

	if (!dir || fstat(rootfd, &r) < 0) {
		free(dir);
		return true;	/* cannot tell: say yes, the caller refuses */
	}
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, strlen(dir) + 1, ".");
	else if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return false;	/* no such directory: the file cannot be made either */
	for (int depth = 0; depth < 4096; depth++) {
		if (fstat(fd, &d) < 0 || (d.st_dev == r.st_dev && d.st_ino == r.st_ino)) {
			in = true;
			break;
		}
		parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || fstat(parent, &up) < 0) {
			if (parent >= 0)
				close(parent);
			in = true;
			break;
		}
		close(fd);
		fd = parent;
		if (up.st_dev == d.st_dev && up.st_ino == d.st_ino)
			break;	/* / is its own parent: not beneath the root */
	}
	close(fd);
	return in;
}

int wap_token_write(const struct wap_ws *ws, const char *path, const char *token, struct wap_err *err)
{
	size_t n = strlen(token);
	int fd;

	if (ws && ws->confined && beneath(path, ws->rootfd))
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

bool wap_token_equal(const char *want, const char *got, size_t len)
{
	size_t lw = strlen(want);
	unsigned char d = (unsigned char)(lw != len);

	for (size_t i = 0; i < len; i++)
		d |= (unsigned char)(got[i] ^ want[lw ? i % lw : 0]);
	return lw && !d;
}
