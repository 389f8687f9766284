/* git/creds.c - credentials for push, fetch, pull and clone: the token
 * (from --token-file, read through the sandbox, or $WAP_GIT_TOKEN) goes
 * as the x-access-token user over HTTPS (plain HTTP to this machine only)
 * and only to the hosts the invoker named in $WAP_GIT_TOKEN_HOST; ssh
 * remotes get the SSH agent. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "file.h"
#include "internal.h"

/* The token: --token-file (beneath the root, first line) or $WAP_GIT_TOKEN. */
int load_token(struct g *g)
{
	const char *tf = str_key(g, "token_file"), *env = getenv("WAP_GIT_TOKEN");
	char *rel = NULL, *buf = NULL;
	size_t len = 0, n;

	if (tf) {
		if (wap_req_path(g->call, g->req, "token_file", NULL, &rel, g->err))
			return -1;
		if (wap_read_file(g->ws, rel, 65536, &buf, &len, NULL, g->err)) {
			free(rel);
			return -1;
		}
		free(rel);
		n = strcspn(buf, "\r\n");
		while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
			n--;
		g->token = n ? strndup(buf, n) : NULL;
		explicit_bzero(buf, len);
		free(buf);
		if (!n)
			return wap_err_set(g->err, WAP_E_INVALID, "The token file %s is empty", tf);
		return g->token ? 0 : wap_err_oom(g->err);
	}
	if (env && *env && !(g->token = strdup(env)))
		return wap_err_oom(g->err);
	return 0;
}

/* The token goes over HTTPS, and over plain HTTP to this machine only. */
static bool token_ok_for(const char *url)
{
	static const char *const local[] = { "http://localhost", "http://127.0.0.1", "http://[::1]", NULL };

	if (!strncmp(url, "https://", 8))
		return true;
	for (int i = 0; local[i]; i++) {
		size_t n = strlen(local[i]);
		if (!strncmp(url, local[i], n) && (url[n] == ':' || url[n] == '/' || !url[n]))
			return true;
	}
	return false;
}

/* The host[:port] of URL (scheme://[userinfo@]host[:port]/...): *HOST,
 * *HLEN (brackets kept for IPv6) and *PORT (NULL, or the digits after the
 * colon, *PLEN long).  False if URL has no such authority. */
static bool url_host(const char *url, const char **host, size_t *hlen, const char **port,
		     size_t *plen)
{
	const char *a = strstr(url, "://"), *end, *at, *h;

	if (!a)
		return false;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (at = a, h = a; at < end; at++)
		if (*at == '@')
			h = at + 1;
	*port = NULL;
	*plen = 0;
	if (*h == '[') {
		const char *rb = memchr(h, ']', end - h);
		if (!rb)
			return false;
		*hlen = rb + 1 - h;
	} else {
		const char *c = memchr(h, ':', end - h);
		*hlen = (c ? c : end) - h;
	}
	*host = h;
	if (h + *hlen < end && h[*hlen] == ':') {
		*port = h + *hlen + 1;
		*plen = end - *port;
	}
	return *hlen > 0;
}

/* Is URL's host one the invoker named in $WAP_GIT_TOKEN_HOST ("host" or
 * "host:port", separated by commas or spaces)?  The list comes from the
 * environment of whoever started wap, never from the repository: the
 * agent can rewrite .git/config (url, pushurl, insteadOf) at will. */
static bool token_host_ok(const char *url)
{
	const char *list = getenv("WAP_GIT_TOKEN_HOST"), *h, *p, *e;
	size_t hl, pl;

	if (!list || !url_host(url, &h, &hl, &p, &pl))
		return false;
	for (e = list; *e;) {
		size_t n, eh;
		const char *colon;

		e += strspn(e, ", \t");
		n = strcspn(e, ", \t");
		if (!n)
			break;
		/* the entry's own host and port */
		if (*e == '[') {
			const char *rb = memchr(e, ']', n);
			eh = rb ? (size_t)(rb + 1 - e) : n;
		} else {
			colon = memchr(e, ':', n);
			eh = colon ? (size_t)(colon - e) : n;
		}
		if (eh == hl && !strncasecmp(e, h, hl) &&
		    (eh == n || (e[eh] == ':' && p && n - eh - 1 == pl && !strncmp(e + eh + 1, p, pl))))
			return true;
		e += n;
	}
	return false;
}

int cred_cb(git_credential **out, const char *url, const char *user, unsigned int allowed,
		   void *payload)
{
	struct g *g = payload;

	if (++g->cred_tries > 1) {
		g->auth_failed = true;
		git_error_set_str(GIT_ERROR_NET, "the remote refused the credentials");
		return GIT_EAUTH;
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user && *user ? user : "git");
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && g->token && token_ok_for(url) &&
	    token_host_ok(url))
		return git_credential_userpass_plaintext_new(out, "x-access-token", g->token);
	g->auth_failed = true;
	if (!g->token)
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials: set WAP_GIT_TOKEN or "
				  "--token-file (HTTPS), or run an SSH agent (ssh)");
	else if (!token_ok_for(url))
		git_error_set_str(GIT_ERROR_NET,
				  "the remote asks for credentials, and wap sends the token over HTTPS only");
	else if (!getenv("WAP_GIT_TOKEN_HOST"))
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials, and wap sends the token "
				  "only to the hosts named in $WAP_GIT_TOKEN_HOST, which is not set");
	else
		git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials, and its host is not one "
				  "of those named in $WAP_GIT_TOKEN_HOST (the token is not sent)");
	return GIT_EAUTH;
}
