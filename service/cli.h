#ifndef PM_SVC_CLI_H
#define PM_SVC_CLI_H
/* `procmesh generate ROUTE …`: one request through the same reader,
 * validation, cache key, generator and encoder as the HTTP route, with no
 * server. argv[0] is "generate". Returns the process exit code:
 *   0 written; 2 bad command line; 3 the request was refused (400/422:
 *   problem+json on stderr); 4 the generator failed or ran out of memory
 *   (problem+json on stderr); 5 the output could not be written. */
int pm_svc_cli_generate(int argc, char **argv);
void pm_svc_cli_usage(FILE *out);

/* Ends the process after pm_svc_cli_generate with its code: standard
 * streams flushed, then _exit, so the libraries' destructors (gnutls's
 * deinit, about 0.16 M instructions) are not run for a process that is
 * gone anyway. Sanitizer builds exit normally, so leak checks still run. */
_Noreturn void pm_svc_cli_exit(int code);
#endif
