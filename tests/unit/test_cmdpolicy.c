/* test_cmdpolicy.c - the shell-line splitter and the command lists. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdpolicy.h"
#include "strbuf.h"

/* Split LINE and render it as "prog a b | prog2 ..." (words joined by
 * spaces, commands by " | ", computed programs marked with a leading '!'). */
static char *split(const char *line)
{
	struct wap_cmdlist cl = { 0 };
	struct wap_err err = { 0 };
	struct wap_sb sb = WAP_SB_INIT;

	assert_int_equal(wap_cmd_split(line, &cl, &err), 0);
	for (size_t i = 0; i < cl.n; i++) {
		if (i)
			wap_sb_adds(&sb, " | ");
		if (cl.v[i].flags[0] & WAP_CMDW_DYN)
			wap_sb_addc(&sb, '!');
		for (size_t k = 0; k < cl.v[i].n; k++) {
			if (k)
				wap_sb_addc(&sb, ' ');
			wap_sb_adds(&sb, cl.v[i].words[k]);
		}
	}
	wap_cmdlist_release(&cl);
	return wap_sb_detach(&sb);
}

#define SPLIT(line, want) do { \
		char *got_ = split(line); \
		assert_string_equal(got_, want); \
		free(got_); \
	} while (0)

static void test_separators(void **state)
{
	(void)state;
	SPLIT("ls -l", "ls -l");
	SPLIT("a; b && c || d | e & f", "a | b | c | d | e | f");
	SPLIT("a\nb\n\nc", "a | b | c");
	SPLIT("a |& b", "a | b");
	SPLIT("(a; b) && { c; }", "a | b | c");
	SPLIT("", "");
	SPLIT("   # just a comment", "");
	SPLIT("a # comment; rm", "a");
	SPLIT("echo a#b", "echo a#b");
}

static void test_quotes(void **state)
{
	(void)state;
	SPLIT("'r'm \"-rf\" x", "rm -rf x");
	SPLIT("r\\m x", "rm x");
	SPLIT("echo 'a; rm x'", "echo a; rm x");
	SPLIT("echo \"a && b\"", "echo a && b");
	SPLIT("r\\\nm x", "rm x");
	SPLIT("echo \"it's\"", "echo it's");
	SPLIT("$'rm' x", "rm x");
	SPLIT("$'\\x72m' x", "!x72m x");
}

static void test_substitutions(void **state)
{
	(void)state;
	SPLIT("echo $(rm x)", "rm x | echo $");
	SPLIT("echo `rm x`", "rm x | echo $");
	SPLIT("echo \"$(rm x; ls)\"", "rm x | ls | echo $");
	SPLIT("echo $(echo $(rm x))", "rm x | echo $ | echo $");
	SPLIT("cat <(rm x) >(ls)", "rm x | ls | cat $ $");
	SPLIT("echo $((1 + $(rm x)))", "rm x | echo $");
	SPLIT("echo ${X:-$(rm x)}", "rm x | echo $");
	SPLIT("$(echo rm) x", "echo rm | !$ x");
	SPLIT("$X x", "!$ x");
	SPLIT("${X} x", "!$ x");
	SPLIT("echo $((2*(3+4)))", "echo $");
}

static void test_words(void **state)
{
	(void)state;
	SPLIT("FOO=1 BAR=\"a b\" rm x", "rm x");
	SPLIT("FOO=1", "");
	SPLIT("echo FOO=1", "echo FOO=1");
	SPLIT("\"FOO\"=1 x", "FOO=1 x");
	SPLIT("if true; then rm x; elif a; then b; else c; fi", "true | rm x | a | b | c");
	SPLIT("while read l; do rm $l; done", "read l | rm $");
	SPLIT("for f in a b; do rm $f; done", "rm $");
	SPLIT("! rm x", "rm x");
	SPLIT("time -p rm x", "rm x");
	SPLIT("f() { rm x; }", "f | rm x");
	SPLIT("function f { rm x; }", "rm x");
	SPLIT("r* x", "!r* x");
	SPLIT("{rm,-rf} x", "!{rm,-rf} x");
	SPLIT("[ -f x ] && [[ -d y ]]", "[ -f x ]");
	SPLIT("'if' x", "if x");
}

static void test_redirections(void **state)
{
	(void)state;
	SPLIT("echo hi > rm", "echo hi");
	SPLIT("echo hi 2>&1 >>log < in", "echo hi");
	SPLIT("cmd &> out; rm x", "cmd | rm x");
	SPLIT("cmd 2> >(rm x)", "rm x | cmd");
	SPLIT("cat <<< 'rm x'", "cat");
	SPLIT("cat <<EOF\nrm x\nEOF\nls", "cat | ls");
	SPLIT("cat <<'EOF'\n$(rm x)\nEOF\nls", "cat | ls");
	SPLIT("cat <<EOF\n$(rm x)\nEOF\nls", "cat | rm x | ls");
	SPLIT("cat <<-EOF\n\trm x\n\tEOF\nls", "cat | ls");
	SPLIT("cat <<A <<B\nx\nA\ny\nB\nls", "cat | ls");
}

static int check(const char *allow[], const char *deny[], const char *line)
{
	struct wap_cmdrules r = { (char *const *)allow, (char *const *)deny, true, "allow", "deny" };
	struct wap_err err = { 0 };
	int rc = wap_cmd_check(&r, line, NULL, &err);

	if (rc)
		assert_int_equal(err.kind, WAP_E_CMD_RESTRICTED);
	wap_err_release(&err);
	return rc;
}

static void test_check(void **state)
{
	const char *deny[] = { "rm", "git push", "python*", NULL };
	const char *allow[] = { "ls", "git status", "make", NULL };
	const char *none[] = { NULL };

	(void)state;
	assert_int_equal(check(none, deny, "ls -l"), 0);
	assert_int_equal(check(none, deny, "rm x"), -1);
	assert_int_equal(check(none, deny, "/usr/bin/rm x"), -1);
	assert_int_equal(check(none, deny, "git push"), -1);
	assert_int_equal(check(none, deny, "git pull"), 0);
	assert_int_equal(check(none, deny, "python3 -c 1"), -1);
	assert_int_equal(check(none, deny, "env -u X A=1 rm x"), -1);
	assert_int_equal(check(none, deny, "env -S 'rm x'"), -1);
	assert_int_equal(check(none, deny, "nice -n 5 rm x"), -1);
	assert_int_equal(check(none, deny, "timeout -s KILL 5 rm x"), -1);
	assert_int_equal(check(none, deny, "xargs -n 1 rm"), -1);
	assert_int_equal(check(none, deny, "find . -name x -execdir rm {} +"), -1);
	assert_int_equal(check(none, deny, "bash -lc 'rm x'"), -1);
	assert_int_equal(check(none, deny, "sh -c \"$X\""), -1);
	assert_int_equal(check(none, deny, "eval rm x"), -1);
	assert_int_equal(check(none, deny, "command rm x"), -1);
	assert_int_equal(check(none, deny, "exec rm x"), -1);
	assert_int_equal(check(none, deny, "$CMD x"), -1);
	assert_int_equal(check(none, deny, "bash -o pipefail -c 'rm x'"), -1);
	assert_int_equal(check(none, deny, "bash -o pipefail -c 'ls'"), 0);
	assert_int_equal(check(none, deny, "echo 'rm x' | sh"), -1);
	assert_int_equal(check(none, deny, "bash -s < script"), -1);
	assert_int_equal(check(none, deny, "bash build.sh"), 0);
	assert_int_equal(check(none, deny, "su -c 'rm x' nobody"), -1);
	assert_int_equal(check(none, deny, "busybox rm x"), -1);
	assert_int_equal(check(none, deny, "busybox sh -c 'rm x'"), -1);
	assert_int_equal(check(none, deny, "alias x='rm -rf'"), -1);
	assert_int_equal(check(none, deny, "alias ll='ls -l'"), 0);
	assert_int_equal(check(none, deny, "trap 'rm x' EXIT"), -1);
	assert_int_equal(check(none, deny, "trap - EXIT"), 0);
	assert_int_equal(check(none, deny, "parallel -j 2 rm ::: a b"), -1);
	assert_int_equal(check(none, deny, "systemd-run --unit x rm y"), -1);
	assert_int_equal(check(none, deny, "echo $CMD"), 0);
	assert_int_equal(check(none, none, "$CMD x"), 0);	/* no list: nothing to verify */
	assert_int_equal(check(allow, none, "ls && make -j2"), 0);
	assert_int_equal(check(allow, none, "cd x && ls"), 0);
	assert_int_equal(check(allow, none, "git status"), 0);
	assert_int_equal(check(allow, none, "git commit"), -1);
	assert_int_equal(check(allow, none, "ls | cat"), -1);
	assert_int_equal(check(allow, none, "source x.sh"), -1);
	/* an allow entry overrides a deny entry in one rule set */
	{
		const char *a2[] = { "rm", NULL };
		assert_int_equal(check(a2, deny, "rm x"), 0);
	}
}

static void test_message(void **state)
{
	const char *deny[] = { "rm", NULL };
	struct wap_cmdrules r = { NULL, (char *const *)deny, false, "allowedCommands",
				  "restrictedCommands" };
	struct wap_err err = { 0 };
	char *argv[] = { "/bin/rm", "-rf", "x", NULL };

	(void)state;
	assert_int_equal(wap_cmd_check(&r, "ls; rm -rf x", NULL, &err), -1);
	assert_string_equal(err.msg, "Command not allowed: rm -rf x (matches restrictedCommands entry 'rm')");
	assert_string_equal(json_string_value(json_object_get(err.details, "program")), "rm");
	wap_err_release(&err);
	assert_int_equal(wap_cmd_check(&r, NULL, argv, &err), -1);
	assert_string_equal(err.msg, "Command not allowed: /bin/rm -rf x (matches restrictedCommands entry 'rm')");
	wap_err_release(&err);
}

static void test_deep(void **state)
{
	struct wap_cmdlist cl = { 0 };
	struct wap_err err = { 0 };
	char line[1000];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		n += snprintf(line + n, sizeof(line) - n, "$(");
	snprintf(line + n, sizeof(line) - n, "rm");
	assert_int_equal(wap_cmd_split(line, &cl, &err), -1);
	wap_cmdlist_release(&cl);
	wap_err_release(&err);
	/* unterminated constructs end at the end of the line */
	SPLIT("echo \"abc", "echo abc");
	SPLIT("echo $(rm x", "rm x | echo $");
	SPLIT("echo 'x", "echo x");
}

/* random lines built from shell fragments: the splitter must never crash,
 * overrun or leak (this runs under ASan in `make check ASAN=1`), and a
 * deny-listed rm placed at a command position is always found */
static void test_random(void **state)
{
	static const char *const frag[] = {
		" ", "\t", "\n", ";", "&", "&&", "|", "||", "(", ")", "{", "}", "$(", "`", "'",
		"\"", "\\", "$", "${", "$((", "<", ">", "<<", "<<-", "<<<", "EOF", "#", "*",
		"?", "[", "]", ",", "..", "=", "x", "echo", "if", "then", "fi", "case", "in",
		"esac", "for", "do", "done", "sudo", "env", "bash", "-c", "eval", "$'", "\\x41",
		"2>&1", "<(", ">(", "a=b", "function", "time", "!", "~", "find", "-exec", "xargs",
	};
	const size_t nf = sizeof(frag) / sizeof(frag[0]);
	const char *deny[] = { "rm", NULL };
	unsigned seed = 12345;

	(void)state;
	for (int it = 0; it < 20000; it++) {
		char line[512];
		size_t n = 0;
		int parts = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 24;
		struct wap_cmdlist cl = { 0 };
		struct wap_err err = { 0 };
		struct wap_cmdrules r = { NULL, (char *const *)deny, false, "a", "d" };
		for (int k = 0; k < parts; k++) {
			const char *f = frag[((seed = seed * 1103515245 + 12345) >> 16) % nf];
			size_t l = strlen(f);
			if (n + l + 1 >= sizeof(line))
				break;
			memcpy(line + n, f, l);
			n += l;
		}
		line[n] = 0;
		(void)wap_cmd_split(line, &cl, &err);
		wap_cmdlist_release(&cl);
		wap_err_release(&err);
		(void)wap_cmd_check(&r, line, NULL, &err);
		wap_err_release(&err);
		/* "rm" on a line of its own is always found, unless what came
		 * before leaves a quote, an expansion or a here-document open */
		{
			char l2[600];
			bool open_quote = false;
			for (size_t k = 0; k < n; k++)
				if (strchr("'\"\\$<", line[k]))
					open_quote = true;
			if (!open_quote) {
				snprintf(l2, sizeof(l2), "%s\nrm x", line);
				if (wap_cmd_check(&r, l2, NULL, &err) != -1)
					fail_msg("not caught: [%s]", l2);
				wap_err_release(&err);
			}
		}
	}
}

/* the kernel's view: a program file, no arguments */
static void test_prog(void **state)
{
	char *deny[] = { "curl", "git push", "python*", "/usr/bin/wget", NULL };
	char *allow[] = { "ls", "git status", NULL };
	char *allow2[] = { "python3", NULL };
	struct wap_cmdrules d = { NULL, deny, true, "a", "d" };
	struct wap_cmdrules a = { allow, NULL, true, "a", "d" };
	struct wap_cmdrules both = { allow2, deny, true, "a", "d" };
	struct wap_cmdrules both_strict = { allow2, deny, false, "a", "d" };
	struct wap_cmdrules none = { NULL, NULL, true, "a", "d" };
	(void)state;

	assert_int_equal(wap_cmd_prog(&d, "curl"), WAP_CMD_DENIED);
	assert_int_equal(wap_cmd_prog(&d, "git"), WAP_CMD_ALLOWED);	/* only "git push" */
	assert_int_equal(wap_cmd_prog(&d, "python3.11"), WAP_CMD_DENIED);
	assert_int_equal(wap_cmd_prog(&d, "wget"), WAP_CMD_DENIED);
	assert_int_equal(wap_cmd_prog(&d, "ls"), WAP_CMD_ALLOWED);
	assert_int_equal(wap_cmd_prog(&a, "ls"), WAP_CMD_ALLOWED);
	assert_int_equal(wap_cmd_prog(&a, "git"), WAP_CMD_ALLOWED);	/* "git status" */
	assert_int_equal(wap_cmd_prog(&a, "cat"), WAP_CMD_NOT_LISTED);
	assert_int_equal(wap_cmd_prog(&both, "python3"), WAP_CMD_ALLOWED);	/* allow beats deny */
	assert_int_equal(wap_cmd_prog(&both_strict, "python3"), WAP_CMD_DENIED);
	assert_int_equal(wap_cmd_prog(&both, "python2"), WAP_CMD_DENIED);
	assert_int_equal(wap_cmd_prog(&none, "anything"), WAP_CMD_ALLOWED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separators),
		cmocka_unit_test(test_quotes),
		cmocka_unit_test(test_substitutions),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_redirections),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_prog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
