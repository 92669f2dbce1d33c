/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One varlink message: dispatched by the method table, org.varlink.service
 * answered, replies and errors written (varlink-dispatch.c). Knows no
 * governor. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct VarlinkCall VarlinkCall;

typedef enum VarlinkAccess {
        VARLINK_ACCESS_NONE,            /* org.varlink.service only */
        VARLINK_ACCESS_READ,            /* + the read methods */
        VARLINK_ACCESS_ALL,             /* + the methods that change something */
} VarlinkAccess;

/* One parameter a method takes; a table ends with a NULL name. Parameters
 * not in the table, a missing required one and a wrong type are answered
 * with org.varlink.service.InvalidParameter before the method runs. */
struct varlink_param {
        const char *name;
        json_type type;
        bool optional;                  /* absent or null allowed */
};

/* Returns the reply (varlink_reply() or varlink_reply_error()), or NULL when
 * out of memory: the connection is then dropped. params is an object that
 * matches the method's table. */
typedef json_t *(*varlink_method_fn)(VarlinkCall *call, json_t *params, void *userdata);

struct varlink_method {
        const char *name;               /* without the interface: "GetStatus" */
        VarlinkAccess access;
        const struct varlink_param *params;
        varlink_method_fn run;
};

struct varlink_interface {
        const char *name;               /* reverse-domain name, also the socket's name */
        const char *description;        /* served by org.varlink.service.GetInterfaceDescription */
        const struct varlink_method *methods;
        size_t n_methods;
};

/* What GetInfo says, and the interface served with its userdata. */
struct varlink_service {
        const char *vendor;
        const char *product;
        const char *version;
        const char *url;
        const struct varlink_interface *interface;
        void *userdata;                 /* passed to the interface's methods */
};

/* {"parameters": parameters}. Steals parameters; NULL gives NULL (out of
 * memory). */
json_t *varlink_reply(json_t *parameters);

/* {"error": error, "parameters": parameters}. Steals parameters; NULL
 * means none ({}). */
json_t *varlink_reply_error(const char *error, json_t *parameters);

/* An error of the transport (InvalidMessage, MessageTooLarge,
 * PermissionDenied) in the interface's namespace. Steals parameters; NULL
 * when out of memory. */
json_t *varlink_reply_transport_error(const struct varlink_service *service, const char *error, json_t *parameters);

/* Answer one message (buf[0..len), without its NUL) of call's peer, which
 * has the given access: the envelope checked, the method found (the
 * interface's or org.varlink.service's), its access and parameters
 * checked, and run. Returns the reply to send; NULL with *ret_oneway for
 * none; NULL without it when out of memory. *ret_close: an invalid
 * message, close the connection once the reply is sent. */
json_t *varlink_dispatch_message(const struct varlink_service *service, VarlinkCall *call, VarlinkAccess access,
                                 uid_t uid, pid_t pid, const char *buf, size_t len, bool *ret_oneway,
                                 bool *ret_close);

/* The access the method a message (buf[0..len), without its NUL) calls
 * needs; VARLINK_ACCESS_NONE for a message that calls no method there is
 * (its answer is an error). */
VarlinkAccess varlink_dispatch_access(const struct varlink_service *service, const char *buf, size_t len);
