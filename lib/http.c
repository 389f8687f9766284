#include "http.h"
int wap_http_serve(struct wap_mcp_server *srv, const struct wap_http_opts *o, struct wap_err *err)
{ (void)srv; (void)o; return wap_err_set(err, WAP_E_FAILED, "todo"); }
