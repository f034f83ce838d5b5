/* libmicrohttpd through dlopen (mhd.h says why): one pointer per function
 * the service calls, found once; the MHD_* definitions below forward to
 * them. A function the service starts to call is added to PM_SVC_MHD_FNS,
 * and a definition below it (the link fails without one). */
#include "mhd.h"

#include <stdarg.h>
#include <microhttpd.h>

#include "dl.h"

#ifndef PM_SVC_MHD_SONAME
#define PM_SVC_MHD_SONAME "libmicrohttpd.so.12"
#endif

#define PM_SVC_MHD_FNS(X)                                                                     \
    X(MHD_start_daemon_va) X(MHD_stop_daemon) X(MHD_add_connection)                          \
    X(MHD_get_connection_info) X(MHD_get_connection_values)                                   \
    X(MHD_lookup_connection_value) X(MHD_suspend_connection) X(MHD_resume_connection)       \
    X(MHD_queue_response) X(MHD_create_response_from_buffer)                                 \
    X(MHD_create_response_from_buffer_with_free_callback_cls) X(MHD_add_response_header)     \
    X(MHD_destroy_response) X(MHD_get_reason_phrase_for)

PM_SVC_DL_LIBRARY(PM_SVC_MHD_FNS, PM_SVC_MHD_SONAME, pm_svc__fn, pm_svc__mhd);

int pm_svc_mhd_load(char *err, size_t errcap) {
    return pm_svc_dl_load(&pm_svc__mhd, err, errcap);
}

#define pm_svc__need() pm_svc_dl_need(&pm_svc__mhd)

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
                                    MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
    pm_svc__need();
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = pm_svc__fn.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) {
    pm_svc__need();
    pm_svc__fn.MHD_stop_daemon(daemon);
}

enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket,
                                   const struct sockaddr *addr, socklen_t addrlen) {
    pm_svc__need();
    return pm_svc__fn.MHD_add_connection(daemon, client_socket, addr, addrlen);
}

/* The info function's variadic arguments are unused by every info type
 * (libmicrohttpd reads none): none are passed on. */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type,
                                                        ...) {
    pm_svc__need();
    return pm_svc__fn.MHD_get_connection_info(connection, info_type);
}

int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                              MHD_KeyValueIterator iterator, void *iterator_cls) {
    pm_svc__need();
    return pm_svc__fn.MHD_get_connection_values(connection, kind, iterator, iterator_cls);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection,
                                        enum MHD_ValueKind kind, const char *key) {
    pm_svc__need();
    return pm_svc__fn.MHD_lookup_connection_value(connection, kind, key);
}

void MHD_suspend_connection(struct MHD_Connection *connection) {
    pm_svc__need();
    pm_svc__fn.MHD_suspend_connection(connection);
}

void MHD_resume_connection(struct MHD_Connection *connection) {
    pm_svc__need();
    pm_svc__fn.MHD_resume_connection(connection);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    pm_svc__need();
    return pm_svc__fn.MHD_queue_response(connection, status_code, response);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode) {
    pm_svc__need();
    return pm_svc__fn.MHD_create_response_from_buffer(size, buffer, mode);
}

struct MHD_Response *MHD_create_response_from_buffer_with_free_callback_cls(
    size_t size, void *buffer, MHD_ContentReaderFreeCallback crfc, void *crfc_cls) {
    pm_svc__need();
    return pm_svc__fn.MHD_create_response_from_buffer_with_free_callback_cls(size, buffer, crfc,
                                                                            crfc_cls);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
                                        const char *content) {
    pm_svc__need();
    return pm_svc__fn.MHD_add_response_header(response, header, content);
}

void MHD_destroy_response(struct MHD_Response *response) {
    pm_svc__need();
    pm_svc__fn.MHD_destroy_response(response);
}

const char *MHD_get_reason_phrase_for(unsigned int code) {
    pm_svc__need();
    return pm_svc__fn.MHD_get_reason_phrase_for(code);
}
