/* gssapi-stub.c - GSS-API without Kerberos, for `make static`.
 *
 * libgit2 offers HTTP "Negotiate" (Kerberos/SPNEGO) authentication through
 * GSS-API, and Debian ships MIT Kerberos's libgssapi_krb5 only as a shared
 * library: there is no libgssapi_krb5.a (nor libkrb5.a, libk5crypto.a,
 * libcom_err.a, libkrb5support.a) to link.  So the static wap links these
 * instead: every call fails with GSS_S_UNAVAILABLE, and libgit2, finding no
 * mechanism (gss_indicate_mechs fails), never offers Negotiate.  Basic
 * authentication (tokens) and SSH keys are unaffected.  The prototypes are
 * those of RFC 2744 (gssapi.h is not installed without libkrb5-dev).
 */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t OM_uint32;
typedef struct { OM_uint32 length; void *elements; } gss_OID_desc, *gss_OID;
typedef struct { size_t count; gss_OID elements; } gss_OID_set_desc, *gss_OID_set;
typedef struct { size_t length; void *value; } gss_buffer_desc, *gss_buffer_t;
typedef void *gss_ctx_id_t, *gss_name_t, *gss_cred_id_t, *gss_channel_bindings_t;

#define GSS_S_UNAVAILABLE (16u << 16)
#define FAIL(m) do { if (m) *(m) = 0; return GSS_S_UNAVAILABLE; } while (0)

/* a gss_OID constant libgit2 takes the address of */
static gss_OID_desc hostbased = { 10, (void *)"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04" };
gss_OID GSS_C_NT_HOSTBASED_SERVICE = &hostbased;

OM_uint32 gss_indicate_mechs(OM_uint32 *minor, gss_OID_set *mechs)
{
	if (mechs)
		*mechs = NULL;
	FAIL(minor);
}

OM_uint32 gss_import_name(OM_uint32 *minor, gss_buffer_t in, gss_OID type, gss_name_t *out)
{
	(void)in; (void)type;
	if (out)
		*out = NULL;
	FAIL(minor);
}

OM_uint32 gss_init_sec_context(OM_uint32 *minor, gss_cred_id_t cred, gss_ctx_id_t *ctx,
			       gss_name_t target, gss_OID mech, OM_uint32 flags, OM_uint32 time,
			       gss_channel_bindings_t cb, gss_buffer_t in, gss_OID *actual,
			       gss_buffer_t out, OM_uint32 *ret_flags, OM_uint32 *ret_time)
{
	(void)cred; (void)ctx; (void)target; (void)mech; (void)flags; (void)time;
	(void)cb; (void)in; (void)actual; (void)ret_flags; (void)ret_time;
	if (out)
		out->length = 0, out->value = NULL;
	FAIL(minor);
}

OM_uint32 gss_delete_sec_context(OM_uint32 *minor, gss_ctx_id_t *ctx, gss_buffer_t out)
{
	if (ctx)
		*ctx = NULL;
	if (out)
		out->length = 0, out->value = NULL;
	if (minor)
		*minor = 0;
	return 0;
}

OM_uint32 gss_release_buffer(OM_uint32 *minor, gss_buffer_t b)
{
	if (b)
		b->length = 0, b->value = NULL;
	if (minor)
		*minor = 0;
	return 0;
}

OM_uint32 gss_release_name(OM_uint32 *minor, gss_name_t *name)
{
	if (name)
		*name = NULL;
	if (minor)
		*minor = 0;
	return 0;
}

OM_uint32 gss_release_oid_set(OM_uint32 *minor, gss_OID_set *set)
{
	if (set)
		*set = NULL;
	if (minor)
		*minor = 0;
	return 0;
}

OM_uint32 gss_display_status(OM_uint32 *minor, OM_uint32 status, int type, gss_OID mech,
			     OM_uint32 *more, gss_buffer_t out)
{
	static char msg[] = "GSS-API (Kerberos) is not in the static wap";

	(void)status; (void)type; (void)mech;
	if (more)
		*more = 0;
	if (out)
		out->length = sizeof(msg) - 1, out->value = msg;
	if (minor)
		*minor = 0;
	return 0;
}
