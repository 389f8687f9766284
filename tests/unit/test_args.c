/* test_args.c - option tables, usage texts and argv parsing agree. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "applet.h"
#include "config.h"

/* every option in a table is described in the usage text */
static void test_opts_documented(void **state)
{
	(void)state;
	for (int i = 0; wap_applets[i]; i++) {
		const struct wap_applet *a = wap_applets[i];
		for (const struct wap_opt *o = a->opts; o->name; o++) {
			char *h = wap_opt_help(a, o);
			if (!h)
				fail_msg("applet %s: option %s is not in its usage text", a->name, o->name);
			free(h);
		}
	}
}

/* every --flag in a usage text is in the option table or global */
static void test_usage_flags_exist(void **state)
{
	(void)state;
	for (int i = 0; wap_applets[i]; i++) {
		const struct wap_applet *a = wap_applets[i];
		const char *p = a->usage;
		while ((p = strstr(p, "--"))) {
			char name[64];
			size_t n = 0;
			bool found = false;
			p += 2;
			while (n + 1 < sizeof(name) && (p[n] == '-' || (p[n] >= 'a' && p[n] <= 'z') ||
							(p[n] >= '0' && p[n] <= '9')))
				n++;
			memcpy(name, p, n);
			name[n] = 0;
			if (!n)
				continue;
			for (const struct wap_opt *o = a->opts; o->name; o++)
				if (!(o->flags & WAP_OPT_POS) && !strcmp(o->name, name))
					found = true;
			for (const struct wap_global *g = wap_globals; g->name; g++)
				if (!strcmp(g->name, name))
					found = true;
			if (!found)
				fail_msg("applet %s: usage mentions --%s, which it does not take", a->name, name);
		}
	}
}

/* the global options are taken out of argv before an applet's own: an
 * option of the same spelling would never reach the applet */
static void test_globals_not_shadowed(void **state)
{
	(void)state;
	for (int i = 0; wap_applets[i]; i++)
		for (const struct wap_opt *o = wap_applets[i]->opts; o->name; o++)
			for (const struct wap_global *g = wap_globals; g->name; g++) {
				if (o->flags & WAP_OPT_POS)
					continue;
				if (!strcmp(o->name, g->name) || (o->shrt && o->shrt == g->shrt))
					fail_msg("applet %s: option %s is spelled as the global --%s",
						 wap_applets[i]->name, o->name, g->name);
			}
}

/* globals before the name stop at it; after it, they stop at "--", at a
 * command that takes the rest, and are not an option's value */
static void test_globals(void **state)
{
	const struct wap_applet *grep = wap_applet_find("grep"), *exec = wap_applet_find("exec");
	struct wap_err err = { 0 };
	(void)state;
	{
		char *av[] = { "--json", "--root", "/r", "--restrict=*.key", "grep", "--read-only", NULL };
		struct wap_gopts g = { 0 };
		assert_int_equal(wap_args_globals(NULL, 6, av, &g, &err), 2);
		assert_string_equal(av[0], "grep");
		assert_string_equal(av[1], "--read-only");
		assert_true(g.json);
		assert_false(g.read_only);
		assert_string_equal(g.root, "/r");
		assert_string_equal(g.restrict_globs[0], "*.key");
		wap_strv_free(g.restrict_globs);
	}
	{
		char *av[] = { "-e", "--json", "--root", "/r", "-ie", "--help", "x", "--", "--json", NULL };
		struct wap_gopts g = { 0 };
		assert_int_equal(wap_args_globals(grep, 9, av, &g, &err), 7);
		assert_string_equal(av[1], "--json");
		assert_string_equal(av[3], "--help");
		assert_string_equal(av[5], "--");
		assert_string_equal(av[6], "--json");
		assert_false(g.json);
		assert_false(g.help);
		assert_string_equal(g.root, "/r");
	}
	{
		char *av[] = { "--json", "echo", "--root", "/", NULL };
		struct wap_gopts g = { 0 };
		assert_int_equal(wap_args_globals(exec, 4, av, &g, &err), 3);
		assert_true(g.json);
		assert_null(g.root);
	}
	{
		char *av[] = { "x", "--config", NULL };
		struct wap_gopts g = { 0 };
		assert_int_equal(wap_args_globals(grep, 2, av, &g, &err), -1);
		assert_int_equal(err.kind, WAP_E_INVALID);
	}
	{
		char *av[] = { "--read-only=yes", NULL };
		struct wap_gopts g = { 0 };
		assert_int_equal(wap_args_globals(NULL, 1, av, &g, &err), -1);
		assert_int_equal(err.kind, WAP_E_INVALID);
	}
}

static const struct wap_opt t_opts[] = {
	{ "limit", 'n', WAP_OPT_INT, 0, NULL },
	{ "all", 'a', WAP_OPT_BOOL, 0, NULL },
	{ "include", 0, WAP_OPT_STRS, 0, NULL },
	{ "max-results", 0, WAP_OPT_INT, 0, NULL },
	{ "pattern", 0, WAP_OPT_STR, WAP_OPT_POS | WAP_OPT_REQ, NULL },
	{ "paths", 0, WAP_OPT_STRS, WAP_OPT_POS, NULL },
	{ NULL }
};
static const struct wap_applet t_applet = {
	.name = "t", .usage = "usage: wap t\n  -n, --limit N  lines\n", .opts = t_opts,
};

static void test_parse(void **state)
{
	char *argv[] = { "-an5", "--include", "*.c", "--include=*.h", "pat", "a", "b",
			 "--max-results", "7", "--", "-x" };
	struct wap_err err = { 0 };
	json_t *r = wap_args_parse(&t_applet, NULL, 11, argv, &err);

	(void)state;
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "all")));
	assert_int_equal(json_integer_value(json_object_get(r, "limit")), 5);
	assert_int_equal(json_integer_value(json_object_get(r, "max_results")), 7);
	assert_int_equal(json_array_size(json_object_get(r, "include")), 2);
	assert_string_equal(json_string_value(json_object_get(r, "pattern")), "pat");
	assert_int_equal(json_array_size(json_object_get(r, "paths")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "paths"), 2)), "-x");
	json_decref(r);
}

static void test_parse_errors(void **state)
{
	char *bad_int[] = { "--limit", "x", "p" };
	char *unknown[] = { "--nope", "p" };
	char *missing[] = { "-a" };
	char *noval[] = { "p", "--limit" };
	struct wap_err err = { 0 };

	(void)state;
	assert_null(wap_args_parse(&t_applet, NULL, 3, bad_int, &err));
	assert_int_equal(err.kind, WAP_E_INVALID);
	assert_null(wap_args_parse(&t_applet, NULL, 2, unknown, &err));
	assert_non_null(strstr(err.msg, "--nope"));
	assert_null(wap_args_parse(&t_applet, NULL, 1, missing, &err));
	assert_non_null(strstr(err.msg, "PATTERN"));
	assert_null(wap_args_parse(&t_applet, NULL, 2, noval, &err));
	assert_non_null(strstr(err.msg, "needs a value"));
}

static void test_check_and_schema(void **state)
{
	struct wap_err err = { 0 };
	json_t *ok = json_pack("{s:s, s:i, s:[s]}", "pattern", "x", "limit", 3, "include", "*.c");
	json_t *badtype = json_pack("{s:s, s:s}", "pattern", "x", "limit", "3");
	json_t *unknown = json_pack("{s:s, s:b}", "pattern", "x", "bogus", 1);
	json_t *missing = json_pack("{s:i}", "limit", 3);
	json_t *schema = wap_applet_input_schema(&t_applet);

	(void)state;
	assert_int_equal(wap_args_check(&t_applet, ok, &err), 0);
	assert_int_equal(wap_args_check(&t_applet, badtype, &err), -1);
	assert_int_equal(wap_args_check(&t_applet, unknown, &err), -1);
	assert_int_equal(wap_args_check(&t_applet, missing, &err), -1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
		json_object_get(schema, "properties"), "limit"), "description")), "lines");
	assert_string_equal(json_string_value(json_array_get(json_object_get(schema, "required"), 0)),
			    "pattern");
	json_decref(ok);
	json_decref(badtype);
	json_decref(unknown);
	json_decref(missing);
	json_decref(schema);
}

/* a huge or fractional real is not an integer (and casting it would be
 * undefined behaviour, which UBSan aborts on) */
static void test_real_ints(void **state)
{
	struct wap_err err = { 0 };
	long long n = 0;
	json_t *r = json_loads("{\"a\": 1e30, \"b\": 2.5, \"c\": 7.0, \"d\": -1e300}", 0, NULL);

	(void)state;
	assert_int_equal(wap_req_int(r, "a", &n, &err), -1);
	assert_int_equal(err.kind, WAP_E_INVALID);
	assert_int_equal(wap_req_int(r, "b", &n, &err), -1);
	assert_int_equal(wap_req_int(r, "c", &n, &err), 1);
	assert_int_equal(n, 7);
	assert_int_equal(wap_req_int(r, "d", &n, &err), -1);
	json_decref(r);
	r = json_loads("{\"pattern\": \"x\", \"limit\": 1e300}", 0, NULL);
	assert_int_equal(wap_args_check(&t_applet, r, &err), -1);
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_documented),
		cmocka_unit_test(test_usage_flags_exist),
		cmocka_unit_test(test_globals_not_shadowed),
		cmocka_unit_test(test_globals),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_check_and_schema),
		cmocka_unit_test(test_real_ints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
