/* proc/cmdpolicy.c - split shell lines into simple commands and check them
 * against allow/deny lists (cmdpolicy.h).  The splitter is a small
 * recursive scanner of POSIX/bash syntax: it does not need to understand
 * everything a shell does, only to never miss a command that would run. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cmdpolicy.h"
#include "strbuf.h"

#define MAX_DEPTH 64

struct heredoc {
	char *delim;
	bool strip_tabs, expand;
};

struct parser {
	const char *s;
	size_t i, n;
	struct wap_cmdlist *out;
	bool oom, deep;
};

/* the state of one list being scanned (a nesting level) */
struct level {
	bool arith;		/* words here are not commands: ${...}, $((...)) */
	/* the command being built */
	char **words;
	unsigned *flags;
	size_t nw, capw;
	/* the word being built */
	struct wap_sb w;
	bool inword;
	unsigned wflags;
	bool brace_open, brace_list;	/* unquoted { then , or .. : brace expansion */
	bool assign_ok;			/* only name chars so far, unquoted */
	bool saw_eq;
	/* what the next word is */
	bool redir_target, heredoc_delim, heredoc_strip;
	struct heredoc hd[8];
	int nhd;
	int paren;			/* open subshell parens in this level */
};

static void push_word(struct parser *p, struct level *l, char *s, unsigned f)
{
	if (l->nw + 2 > l->capw) {
		size_t cap = l->capw ? l->capw * 2 : 8;
		char **w = realloc(l->words, cap * sizeof(*w));
		unsigned *fl = w ? realloc(l->flags, cap * sizeof(*fl)) : NULL;
		if (w)
			l->words = w;
		if (!w || !fl) {
			free(s);
			p->oom = true;
			return;
		}
		l->flags = fl;
		l->capw = cap;
	}
	l->words[l->nw] = s;
	l->flags[l->nw++] = f;
	l->words[l->nw] = NULL;
}

static void end_word(struct parser *p, struct level *l)
{
	char *s;
	unsigned f = l->wflags;

	if (!l->inword)
		return;
	l->inword = false;
	s = wap_sb_detach(&l->w);
	l->w = (struct wap_sb)WAP_SB_INIT;
	if (!s) {
		p->oom = true;
		return;
	}
	if (l->brace_open && l->brace_list)
		f |= WAP_CMDW_DYN;
	if (l->assign_ok && l->saw_eq)
		f |= WAP_CMDW_ASSIGN;
	if (l->heredoc_delim) {
		l->heredoc_delim = false;
		if (l->nhd < (int)(sizeof(l->hd) / sizeof(l->hd[0]))) {
			l->hd[l->nhd++] = (struct heredoc){ s, l->heredoc_strip,
							   !(f & WAP_CMDW_QUOTED) };
			return;
		}
		free(s);
		return;
	}
	if (l->redir_target) {
		l->redir_target = false;
		free(s);
		return;
	}
	push_word(p, l, s, f);
}

static void start_word(struct level *l)
{
	if (l->inword)
		return;
	l->inword = true;
	l->wflags = 0;
	l->brace_open = l->brace_list = false;
	l->assign_ok = true;
	l->saw_eq = false;
}

static void addc(struct level *l, char c, bool quoted)
{
	start_word(l);
	wap_sb_addc(&l->w, c);
	if (quoted) {
		l->wflags |= WAP_CMDW_QUOTED;
		if (!l->saw_eq)
			l->assign_ok = false;
		return;
	}
	if (!l->saw_eq) {
		if (c == '=' && l->w.len > 1)
			l->saw_eq = true;
		else if (!(isalnum((unsigned char)c) || c == '_') || (l->w.len == 1 && isdigit((unsigned char)c)))
			l->assign_ok = false;
	}
}

static void free_words(struct level *l)
{
	for (size_t i = 0; i < l->nw; i++)
		free(l->words[i]);
	free(l->words);
	free(l->flags);
	l->words = NULL;
	l->flags = NULL;
	l->nw = l->capw = 0;
}

static bool is_kw(const char *w, const char *const *set)
{
	for (int i = 0; set[i]; i++)
		if (!strcmp(w, set[i]))
			return true;
	return false;
}

/* The command is complete: drop assignments and keywords, keep the rest. */
static void end_cmd(struct parser *p, struct level *l)
{
	static const char *const skip[] = { "if", "then", "else", "elif", "do", "while",
		"until", "!", "{", "}", "fi", "done", "esac", "coproc", NULL };
	static const char *const drop[] = { "for", "select", "case", "[[", "]]", NULL };
	size_t i = 0;

	end_word(p, l);
	/* a redirection without its target is a syntax error for the shell;
	 * it must not swallow the next command's program */
	l->redir_target = false;
	l->heredoc_delim = false;
	if (l->arith || !l->nw)
		goto out;
	for (;;) {
		if (i < l->nw && (l->flags[i] & WAP_CMDW_ASSIGN)) {
			i++;
			continue;
		}
		if (i < l->nw && !(l->flags[i] & WAP_CMDW_QUOTED)) {
			if (is_kw(l->words[i], skip)) {
				i++;
				continue;
			}
			if (!strcmp(l->words[i], "time")) {
				i++;
				while (i < l->nw && l->words[i][0] == '-')
					i++;
				continue;
			}
			if (!strcmp(l->words[i], "function")) {
				i += 2;
				continue;
			}
			if (is_kw(l->words[i], drop))
				i = l->nw;
		}
		break;
	}
	if (i >= l->nw)
		goto out;
	if (p->out->n == p->out->cap) {
		size_t cap = p->out->cap ? p->out->cap * 2 : 8;
		struct wap_cmd *v = realloc(p->out->v, cap * sizeof(*v));
		if (!v) {
			p->oom = true;
			goto out;
		}
		p->out->v = v;
		p->out->cap = cap;
	}
	{
		struct wap_cmd *c = &p->out->v[p->out->n];
		size_t k = l->nw - i;
		c->words = calloc(k + 1, sizeof(*c->words));
		c->flags = calloc(k + 1, sizeof(*c->flags));
		if (!c->words || !c->flags) {
			free(c->words);
			free(c->flags);
			p->oom = true;
			goto out;
		}
		for (size_t j = 0; j < k; j++) {
			c->words[j] = l->words[i + j];
			c->flags[j] = l->flags[i + j];
			l->words[i + j] = NULL;
		}
		c->n = k;
		p->out->n++;
	}
out:
	free_words(l);
}

static void scan(struct parser *p, char term, bool arith, int depth);

/* an unquoted here-document's body is expanded: look for substitutions */
static void skip_heredocs(struct parser *p, struct level *l, int depth)
{
	for (int h = 0; h < l->nhd; h++) {
		struct heredoc *hd = &l->hd[h];
		size_t dl = strlen(hd->delim);
		while (p->i < p->n) {
			size_t ls = p->i, le;
			const char *line;
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
			le = p->i;
			if (p->i < p->n)
				p->i++;
			line = p->s + ls;
			if (hd->strip_tabs)
				while (line < p->s + le && *line == '\t')
					line++;
			if ((size_t)(p->s + le - line) == dl && !memcmp(line, hd->delim, dl))
				break;
			if (!hd->expand)
				continue;
			for (size_t k = ls; k < le; k++) {
				if (p->s[k] == '\\') {
					k++;
				} else if ((p->s[k] == '$' && k + 1 < p->n && p->s[k + 1] == '(') ||
					   p->s[k] == '`') {
					bool ar = p->s[k] == '$' && k + 2 < p->n && p->s[k + 2] == '(';
					p->i = k + (p->s[k] == '$' ? 2 : 1);
					scan(p, p->s[k] == '$' ? ')' : '`', ar, depth + 1);
					/* the substitution may have run past this line */
					if (p->i > le) {
						le = p->i;
						break;
					}
					k = p->i - 1;
					p->i = le < p->n ? le + 1 : le;
				}
			}
		}
		free(hd->delim);
	}
	l->nhd = 0;
}

/* ANSI-C quoting $'...': plain text is kept; escapes make it computed. */
static void ansi_c(struct parser *p, struct level *l)
{
	start_word(l);
	l->wflags |= WAP_CMDW_QUOTED;
	l->assign_ok = false;
	while (p->i < p->n && p->s[p->i] != '\'') {
		if (p->s[p->i] == '\\' && p->i + 1 < p->n) {
			l->wflags |= WAP_CMDW_DYN;
			p->i++;
		}
		wap_sb_addc(&l->w, p->s[p->i++]);
	}
	if (p->i < p->n)
		p->i++;
}

/* At a '$' (p->i past it); IN_DQ: inside double quotes. */
static void dollar(struct parser *p, struct level *l, int depth, bool in_dq)
{
	char c = p->i < p->n ? p->s[p->i] : 0;

	start_word(l);
	if (c == '(') {
		bool ar = p->i + 1 < p->n && p->s[p->i + 1] == '(';
		p->i++;
		l->wflags |= WAP_CMDW_DYN;
		scan(p, ')', ar, depth + 1);
	} else if (c == '{') {
		p->i++;
		l->wflags |= WAP_CMDW_DYN;
		scan(p, '}', true, depth + 1);
	} else if (c == '\'' && !in_dq) {
		p->i++;
		ansi_c(p, l);
		return;
	} else if (c == '"' && !in_dq) {
		return;	/* $"..." is "...": the caller sees the quote next */
	} else if (isalnum((unsigned char)c) || c == '_') {
		l->wflags |= WAP_CMDW_DYN;
		while (p->i < p->n && (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_'))
			p->i++;
	} else if (c && strchr("@*#?$!-", c)) {
		l->wflags |= WAP_CMDW_DYN;
		p->i++;
	} else {
		addc(l, '$', in_dq);
		return;
	}
	wap_sb_addc(&l->w, '$');	/* a placeholder for the expansion */
	l->assign_ok = l->assign_ok && l->saw_eq;
}

static void dquote(struct parser *p, struct level *l, int depth)
{
	start_word(l);
	l->wflags |= WAP_CMDW_QUOTED;
	if (!l->saw_eq)
		l->assign_ok = false;
	while (p->i < p->n && p->s[p->i] != '"') {
		char c = p->s[p->i++];
		if (c == '\\' && p->i < p->n && strchr("$`\"\\\n", p->s[p->i])) {
			if (p->s[p->i] != '\n')
				wap_sb_addc(&l->w, p->s[p->i]);
			p->i++;
		} else if (c == '$') {
			dollar(p, l, depth, true);
		} else if (c == '`') {
			l->wflags |= WAP_CMDW_DYN;
			scan(p, '`', false, depth + 1);
			wap_sb_addc(&l->w, '$');
		} else {
			wap_sb_addc(&l->w, c);
		}
	}
	if (p->i < p->n)
		p->i++;
}

static void redirect(struct parser *p, struct level *l, char c, int depth)
{
	/* an fd number before the operator is part of it: 2>&1 */
	if (l->inword && !(l->wflags & WAP_CMDW_QUOTED)) {
		bool digits = l->w.len > 0;
		for (size_t k = 0; k < l->w.len; k++)
			digits = digits && isdigit((unsigned char)l->w.buf[k]);
		if (digits || (l->w.len > 2 && l->w.buf[0] == '{' && l->w.buf[l->w.len - 1] == '}')) {
			wap_sb_release(&l->w);
			l->w = (struct wap_sb)WAP_SB_INIT;
			l->inword = false;
		}
	}
	end_word(p, l);
	if (p->i < p->n && p->s[p->i] == '(') {
		/* process substitution <(...) >(...) */
		p->i++;
		scan(p, ')', false, depth + 1);
		start_word(l);
		l->wflags |= WAP_CMDW_DYN;
		wap_sb_addc(&l->w, '$');
		return;
	}
	if (c == '<' && p->i < p->n && p->s[p->i] == '<') {
		p->i++;
		if (p->i < p->n && p->s[p->i] == '<') {
			p->i++;		/* here-string <<< WORD */
			l->redir_target = true;
			return;
		}
		l->heredoc_strip = p->i < p->n && p->s[p->i] == '-';
		if (l->heredoc_strip)
			p->i++;
		l->heredoc_delim = true;
		return;
	}
	while (p->i < p->n && strchr(">&|", p->s[p->i]))
		p->i++;
	l->redir_target = true;
}

/* Scan up to TERM (0: the end) or the end of the input. */
static void scan(struct parser *p, char term, bool arith, int depth)
{
	struct level l = { .arith = arith, .w = WAP_SB_INIT };

	if (depth > MAX_DEPTH) {
		p->deep = true;
		p->i = p->n;
		return;
	}
	while (p->i < p->n && !p->oom) {
		char c = p->s[p->i++];

		if (c == term && term != ')' && !(term == '}' && l.paren)) {
			break;
		}
		switch (c) {
		case ' ':
		case '\t':
		case '\r':
			end_word(p, &l);
			break;
		case '\n':
			end_cmd(p, &l);
			if (l.nhd)
				skip_heredocs(p, &l, depth);
			break;
		case '&':
			if (p->i < p->n && p->s[p->i] == '>') {
				p->i++;
				redirect(p, &l, '>', depth);
				break;
			}
			/* fall through */
		case ';':
		case '|':
			end_cmd(p, &l);
			break;
		case '(':
			if (arith) {
				l.paren++;
				break;
			}
			end_cmd(p, &l);
			l.paren++;
			break;
		case ')':
			if (l.paren > 0) {
				l.paren--;
				if (!arith)
					end_cmd(p, &l);
				break;
			}
			if (term == ')')
				goto done;
			end_cmd(p, &l);
			break;
		case '<':
		case '>':
			redirect(p, &l, c, depth);
			break;
		case '\'':
			start_word(&l);
			l.wflags |= WAP_CMDW_QUOTED;
			if (!l.saw_eq)
				l.assign_ok = false;
			while (p->i < p->n && p->s[p->i] != '\'')
				wap_sb_addc(&l.w, p->s[p->i++]);
			if (p->i < p->n)
				p->i++;
			break;
		case '"':
			dquote(p, &l, depth);
			break;
		case '\\':
			if (p->i < p->n && p->s[p->i] == '\n') {
				p->i++;
				break;
			}
			if (p->i < p->n)
				addc(&l, p->s[p->i++], true);
			break;
		case '$':
			dollar(p, &l, depth, false);
			break;
		case '`':
			start_word(&l);
			l.wflags |= WAP_CMDW_DYN;
			scan(p, '`', false, depth + 1);
			wap_sb_addc(&l.w, '$');
			break;
		case '#':
			if (!l.inword) {
				while (p->i < p->n && p->s[p->i] != '\n')
					p->i++;
				break;
			}
			addc(&l, c, false);
			break;
		case '*':
		case '?':
		case '[':
			addc(&l, c, false);
			l.wflags |= WAP_CMDW_DYN;
			break;
		case '{': {
			bool alone = !l.inword && (p->i >= p->n || strchr(" \t\n;&|", p->s[p->i]));
			addc(&l, c, false);
			if (!alone)
				l.brace_open = true;
			break;
		}
		case ',':
			if (l.brace_open)
				l.brace_list = true;
			addc(&l, c, false);
			break;
		case '.':
			if (l.brace_open && p->i < p->n && p->s[p->i] == '.')
				l.brace_list = true;
			addc(&l, c, false);
			break;
		default:
			addc(&l, c, false);
		}
	}
done:
	end_cmd(p, &l);
	for (int h = 0; h < l.nhd; h++)
		free(l.hd[h].delim);
	wap_sb_release(&l.w);
	free_words(&l);
}

int wap_cmd_split(const char *line, struct wap_cmdlist *out, struct wap_err *err)
{
	struct parser p = { .s = line, .n = strlen(line), .out = out };

	scan(&p, 0, false, 0);
	/* "[" alone is the test command, not a glob */
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->v[i].words[0], "[") || !strcmp(out->v[i].words[0], "[["))
			out->v[i].flags[0] &= ~WAP_CMDW_DYN;
	if (p.oom)
		return wap_err_oom(err);
	if (p.deep)
		return wap_err_set(err, WAP_E_INVALID, "command line nested too deeply");
	return 0;
}

void wap_cmdlist_release(struct wap_cmdlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->v[i].n; k++)
			free(l->v[i].words[k]);
		free(l->v[i].words);
		free(l->v[i].flags);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- checking ---- */

static const char *base(const char *w)
{
	const char *s = strrchr(w, '/');

	return s ? s + 1 : w;
}

static bool listed(char *const *v)
{
	return v && v[0];
}

/* Does ENTRY ("git push", "rm", "python*") match the command WORDS? */
static bool entry_matches(const char *entry, char *const *words, size_t n)
{
	const char *p = entry;
	size_t k = 0;

	for (;; k++) {
		char tok[256];
		size_t l = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		while (*p && *p != ' ' && *p != '\t')
			if (l + 1 < sizeof(tok))
				tok[l++] = *p++;
			else
				p++;
		tok[l] = 0;
		if (k >= n)
			return false;
		if (k == 0) {
			if (fnmatch(tok, base(words[0]), 0) &&
			    !(strchr(tok, '/') && !fnmatch(tok, words[0], 0)))
				return false;
		} else if (fnmatch(tok, words[k], 0)) {
			return false;
		}
	}
	return k > 0;
}

static const char *first_match(char *const *list, char *const *words, size_t n)
{
	for (size_t i = 0; list && list[i]; i++)
		if (entry_matches(list[i], words, n))
			return list[i];
	return NULL;
}

static char *show(char *const *words, size_t n)
{
	struct wap_sb sb = WAP_SB_INIT;

	for (size_t i = 0; i < n && sb.len < 200; i++) {
		if (i)
			wap_sb_addc(&sb, ' ');
		wap_sb_adds(&sb, words[i]);
	}
	if (sb.len > 200) {
		sb.len = 200;
		wap_sb_adds(&sb, "...");
	}
	return wap_sb_detach(&sb);
}

static int refuse(struct wap_err *err, char *const *words, size_t n, const char *why,
		  const char *list, const char *rule)
{
	char *s = show(words, n);

	wap_err_set(err, WAP_E_CMD_RESTRICTED, "Command not allowed: %s (%s)", s ? s : "?", why);
	wap_err_details(err, json_pack("{s:s, s:s, s:s?, s:s?}", "command", s ? s : "",
				       "program", base(words[0]), "list", list, "rule", rule));
	free(s);
	return -1;
}

static int check_line(const struct wap_cmdrules *r, const char *line, int depth,
		      struct wap_err *err);

/* builtins harmless enough to need no allow-list entry */
static const char *const safe_builtins[] = {
	"cd", "pwd", "echo", "printf", "true", "false", ":", "test", "[", "export",
	"unset", "set", "shift", "exit", "return", "local", "read", "wait", "declare",
	"typeset", "readonly", "umask", "break", "continue", NULL
};

static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
				       "fish", "rbash", NULL };

struct wrapper {
	const char *name;
	const char *valopts;	/* options taking a value, space separated */
	int skip;		/* positional arguments before the command */
};
static const struct wrapper wrappers[] = {
	{ "env", "-u --unset -C --chdir", 0 },
	{ "sudo", "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --prompt", 0 },
	{ "doas", "-u -C", 0 },
	{ "nohup", "", 0 },
	{ "setsid", "", 0 },
	{ "stdbuf", "-i -o -e", 0 },
	{ "time", "-f -o --format --output", 0 },
	{ "command", "", 0 },
	{ "builtin", "", 0 },
	{ "exec", "-a", 0 },
	{ "nice", "-n --adjustment", 0 },
	{ "ionice", "-c -n -p --class --classdata", 0 },
	{ "timeout", "-s -k --signal --kill-after", 1 },
	{ "chrt", "", 1 },
	{ "taskset", "", 1 },
	{ "flock", "-w -E --timeout --conflict-exit-code", 1 },
	{ "unbuffer", "", 0 },
	{ "strace", "-o -e -p -s -u -a -b -E -I -O -P -S -X", 0 },
	{ "ltrace", "-o -e -p -s -u -a -n", 0 },
	{ "chroot", "--userspec --groups", 1 },
	{ "runuser", "-u -g -G --user --group", 0 },
	{ "nsenter", "-t -S -G --target --setuid --setgid", 0 },
	{ "unshare", "", 0 },
	{ "xargs", "-a -d -E -e -I -i -L -l -n -P -s --arg-file --delimiter --max-args "
		   "--max-procs --max-chars --replace", 0 },
	{ "watch", "-n -d --interval", 0 },
	{ "busybox", "", 0 },
	{ "parallel", "-j -S -a --jobs --sshlogin --arg-file", 0 },
	{ "systemd-run", "-u -p -E --unit --property --setenv -M --machine", 0 },
	{ "firejail", "", 0 },
	{ NULL, NULL, 0 }
};

static bool is_valopt(const char *set, const char *w)
{
	size_t n = strlen(w);
	const char *p = set;

	while ((p = strstr(p, w))) {
		if ((p == set || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return true;
		p += n;
	}
	return false;
}

static int check_words(const struct wap_cmdrules *r, char *const *words, const unsigned *flags,
		       size_t n, int depth, struct wap_err *err)
{
	const char *prog, *a = NULL, *d = NULL;
	bool lists = listed(r->allow) || listed(r->deny);

	if (!n || !lists)
		return 0;
	if (depth > MAX_DEPTH)
		return refuse(err, words, n, "nested too deeply to verify", NULL, NULL);
	if (flags && (flags[0] & WAP_CMDW_DYN))
		return refuse(err, words, n,
			      "its program name is computed at run time, so the command policy cannot verify it",
			      NULL, NULL);
	prog = base(words[0]);
	if (listed(r->allow))
		a = first_match(r->allow, words, n);
	if (listed(r->deny))
		d = first_match(r->deny, words, n);
	if (d && !(a && r->allow_overrides)) {
		char why[600];
		snprintf(why, sizeof(why), "matches %s entry '%s'", r->deny_name, d);
		return refuse(err, words, n, why, r->deny_name, d);
	}
	if (listed(r->allow) && !a && !is_kw(prog, safe_builtins)) {
		char why[300];
		snprintf(why, sizeof(why), "'%s' is not in %s", prog, r->allow_name);
		return refuse(err, words, n, why, r->allow_name, NULL);
	}

	/* look through what runs other commands */
	if (!strcmp(prog, "eval") || !strcmp(prog, "source") || !strcmp(prog, ".")) {
		if (strcmp(prog, "eval") && listed(r->allow) && !a)
			return refuse(err, words, n, "a sourced script cannot be verified", r->allow_name, NULL);
		if (!strcmp(prog, "eval")) {
			char *s = show(words + 1, n - 1);
			int rc = s ? check_line(r, s, depth + 1, err) : -1;
			free(s);
			return rc;
		}
		return 0;
	}
	if (is_kw(prog, shells) || !strcmp(prog, "su") || !strcmp(prog, "script")) {
		size_t i;
		for (i = 1; i < n; i++) {
			const char *w = words[i];
			if (!strcmp(w, "--") || (w[0] != '-' && w[0] != '+'))
				break;
			if (is_kw(w, (const char *const[]){ "-o", "+o", "-O", "+O", "--rcfile",
							    "--init-file", NULL })) {
				i++;
				continue;
			}
			if ((w[1] != '-' && strchr(w, 'c')) || !strcmp(w, "--command")) {
				/* the first non-option word is the script */
				size_t k = i + 1;
				while (k < n && words[k][0] == '-' && strcmp(prog, "su"))
					k++;
				if (k >= n)
					return 0;
				if (flags && (flags[k] & WAP_CMDW_DYN))
					return refuse(err, words, n,
						      "its script is computed at run time, so the command policy cannot verify it",
						      NULL, NULL);
				return check_line(r, words[k], depth + 1, err);
			}
		}
		/* no script file either: the commands come from stdin */
		if (i >= n && is_kw(prog, shells) && !a)
			return refuse(err, words, n,
				      "a shell reading its commands from stdin cannot be verified by the command policy",
				      NULL, NULL);
		return 0;
	}
	if (!strcmp(prog, "alias")) {
		/* alias x='rm -rf' then x (with expand_aliases): check the value */
		for (size_t i = 1; i < n; i++) {
			const char *eq = strchr(words[i], '=');
			if (eq && check_line(r, eq + 1, depth + 1, err))
				return -1;
		}
		return 0;
	}
	if (!strcmp(prog, "trap") && n > 1 && strcmp(words[1], "-") && words[1][0] != '-')
		return check_line(r, words[1], depth + 1, err);
	if (!strcmp(prog, "find")) {
		for (size_t i = 1; i < n; i++) {
			if (!strcmp(words[i], "-exec") || !strcmp(words[i], "-execdir") ||
			    !strcmp(words[i], "-ok") || !strcmp(words[i], "-okdir")) {
				size_t k = i + 1, e = k;
				while (e < n && strcmp(words[e], ";") && strcmp(words[e], "+"))
					e++;
				if (check_words(r, words + k, flags ? flags + k : NULL, e - k, depth + 1, err))
					return -1;
				i = e;
			}
		}
		return 0;
	}
	if (!strcmp(prog, "env")) {
		for (size_t i = 1; i + 1 < n; i++)
			if (!strcmp(words[i], "-S") || !strcmp(words[i], "--split-string"))
				return check_line(r, words[i + 1], depth + 1, err);
	}
	for (const struct wrapper *w = wrappers; w->name; w++) {
		size_t i = 1;
		int skip = w->skip;
		if (strcmp(prog, w->name))
			continue;
		if (!strcmp(prog, "taskset") && n > 1 && words[1][0] == '-')
			skip = 1;
		while (i < n) {
			const char *x = words[i];
			if (!strcmp(x, "--")) {
				i++;
				break;
			}
			if (x[0] == '-' && x[1]) {
				i += is_valopt(w->valopts, x) ? 2 : 1;
				continue;
			}
			if (!strcmp(prog, "env") && (flags ? (flags[i] & WAP_CMDW_ASSIGN) : strchr(x, '=') != NULL)) {
				i++;
				continue;
			}
			if (skip > 0) {
				skip--;
				i++;
				continue;
			}
			break;
		}
		if (i < n)
			return check_words(r, words + i, flags ? flags + i : NULL, n - i, depth + 1, err);
		return 0;
	}
	return 0;
}

static int check_line(const struct wap_cmdrules *r, const char *line, int depth,
		      struct wap_err *err)
{
	struct wap_cmdlist cl = { 0 };
	int rc;

	if (depth > MAX_DEPTH)
		return wap_err_set(err, WAP_E_CMD_RESTRICTED, "Command not allowed: nested too deeply to verify");
	rc = wap_cmd_split(line, &cl, err);
	for (size_t i = 0; !rc && i < cl.n; i++)
		rc = check_words(r, cl.v[i].words, cl.v[i].flags, cl.v[i].n, depth, err);
	wap_cmdlist_release(&cl);
	return rc;
}

int wap_cmd_check(const struct wap_cmdrules *r, const char *line, char *const *argv,
		  struct wap_err *err)
{
	if (!listed(r->allow) && !listed(r->deny))
		return 0;
	if (line)
		return check_line(r, line, 0, err);
	{
		size_t n = 0;
		while (argv && argv[n])
			n++;
		return check_words(r, argv, NULL, n, 0, err);
	}
}

/* the first word of ENTRY matches NAME; *ONLY: ENTRY has no other word */
static bool prog_matches(const char *entry, const char *name, bool *only)
{
	char tok[256];
	size_t l = 0;
	const char *p = entry;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != ' ' && *p != '\t' && l + 1 < sizeof(tok))
		tok[l++] = *p++;
	tok[l] = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	*only = !*p;
	return l && !fnmatch(base(tok), name, 0);
}

enum wap_cmd_verdict wap_cmd_prog(const struct wap_cmdrules *r, const char *name)
{
	bool a = false, d = false, only;

	for (size_t i = 0; listed(r->allow) && r->allow[i]; i++)
		a |= prog_matches(r->allow[i], name, &only);
	for (size_t i = 0; listed(r->deny) && r->deny[i]; i++)
		d |= prog_matches(r->deny[i], name, &only) && only;
	if (d && !(a && r->allow_overrides))
		return WAP_CMD_DENIED;
	if (listed(r->allow) && !a)
		return WAP_CMD_NOT_LISTED;
	return WAP_CMD_ALLOWED;
}
