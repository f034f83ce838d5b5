#ifndef PM_SVC_MHD_H
#define PM_SVC_MHD_H
/* libmicrohttpd is opened by the server when it starts (dlopen), not by the
 * dynamic loader at every start of the executable: Debian builds it with
 * gnutls, whose chain of eight libraries and constructors cost every
 * `procmesh generate` run about 3.7 M instructions (~2 ms) it never uses.
 * mhd.c defines the MHD_* functions the service calls (the declarations
 * of <microhttpd.h>), each forwarding to the library's own, so the
 * callers are written as with a linked library. docs/svc.md "Start-up". */
#include <stddef.h>


/* Opens the library and finds every function the service calls (once per
 * process; later calls give the first answer). 0, or -1 with the reason in
 * err. Calling an MHD_* function when this fails aborts, so the server
 * calls it before starting a daemon. */
int pm_svc_mhd_load(char *err, size_t errcap);
#endif
