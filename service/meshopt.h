#ifndef PM_SVC_MESHOPT_H
#define PM_SVC_MESHOPT_H
/* meshoptimizer is opened on first use (dlopen), not by the dynamic
 * loader at every start of the executable: Debian's library is C++ and
 * brings libstdc++, whose loading and constructors cost every `procmesh
 * generate` run about 0.4 ms (a C program that links it starts in 0.75 ms
 * instead of 0.35 ms), for compression and vertex-cache order that most
 * runs never ask for. meshopt.c defines the meshopt_* functions api/
 * calls (the declarations of <meshoptimizer.h>), each forwarding to the
 * library's own, so api/ is written as with a linked library; programs
 * that link meshoptimizer itself (tests, tools) never use it. The server
 * opens it when it starts. docs/svc.md "Start-up". */
#include <stddef.h>


/* Opens the library and finds every function api/ calls (once per
 * process; later calls give the first answer). 0, or -1 with the reason
 * in err. Calling a meshopt_* function when this fails aborts, naming
 * the library. */
int pm_svc_meshopt_load(char *err, size_t errcap);
#endif
