/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The varlink transport's messages (see varlink-dispatch.h): replies, the
 * envelope of a call, dispatch by the interface's method table with access
 * levels and parameter checks, and org.varlink.service. Knows no socket
 * and no governor. */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "varlink/org.varlink.service.varlink.h"
#include "varlink-dispatch.h"

#define UID_FMT "%" PRIu32
#define PID_FMT "%" PRIi32

#define SERVICE_INTERFACE "org.varlink.service"

/* ---- replies ------------------------------------------------------------ */

json_t *varlink_reply(json_t *parameters) {
        if (!parameters)
                return NULL;
        return json_pack("{s:o}", "parameters", parameters);
}

json_t *varlink_reply_error(const char *error, json_t *parameters) {
        return json_pack("{s:s, s:o}", "error", error, "parameters", parameters ? parameters : json_object());
}

static json_t *reply_invalid_parameter(const char *name) {
        return varlink_reply_error(SERVICE_INTERFACE ".InvalidParameter", json_pack("{s:s}", "parameter", name));
}

json_t *varlink_reply_transport_error(const struct varlink_service *service, const char *error, json_t *parameters) {
        _cleanup_free_ char *name = NULL;

        if (asprintf(&name, "%s.%s", service->interface->name, error) < 0) {
                json_decref(parameters);
                return NULL;
        }
        return varlink_reply_error(name, parameters);
}

/* ---- org.varlink.service ------------------------------------------------ */

static json_t *service_get_info(VarlinkCall *c, json_t *params, void *userdata) {
        const struct varlink_service *v = userdata;

        return varlink_reply(json_pack("{s:s, s:s, s:s, s:s, s:[s, s]}",
                                       "vendor", v->vendor,
                                       "product", v->product,
                                       "version", v->version,
                                       "url", v->url,
                                       "interfaces", SERVICE_INTERFACE, v->interface->name));
}

static json_t *service_get_interface_description(VarlinkCall *c, json_t *params, void *userdata) {
        const struct varlink_service *v = userdata;
        const char *name = json_string_value(json_object_get(params, "interface"));

        if (strcmp(name, v->interface->name) == 0)
                return varlink_reply(json_pack("{s:s}", "description", v->interface->description));
        if (strcmp(name, SERVICE_INTERFACE) == 0)
                return varlink_reply(json_pack("{s:s}", "description", org_varlink_service_varlink));
        return varlink_reply_error(SERVICE_INTERFACE ".InterfaceNotFound", json_pack("{s:s}", "interface", name));
}

static const struct varlink_param no_params[] = { { NULL, 0, false } };
static const struct varlink_param interface_params[] = { { "interface", JSON_STRING, false }, { NULL, 0, false } };

static const struct varlink_method service_methods[] = {
        { "GetInfo",                 VARLINK_ACCESS_NONE, no_params,        service_get_info },
        { "GetInterfaceDescription", VARLINK_ACCESS_NONE, interface_params, service_get_interface_description },
};

/* ---- dispatch ----------------------------------------------------------- */

/* NULL when the parameters match the spec, else the error reply. */
static json_t *check_params(const struct varlink_param *spec, json_t *params) {
        const char *key;
        json_t *value;

        json_object_foreach(params, key, value) {
                const struct varlink_param *p;
                for (p = spec; p->name; p++)
                        if (strcmp(p->name, key) == 0)
                                break;
                if (!p->name)
                        return reply_invalid_parameter(key);
        }
        for (const struct varlink_param *p = spec; p->name; p++) {
                value = json_object_get(params, p->name);
                if ((!value || json_is_null(value)) && p->optional)
                        continue;
                if (!value || json_typeof(value) != p->type)
                        return reply_invalid_parameter(p->name);
        }
        return NULL;
}


/* The method a call names. Returns 0 with *ret_method and *ret_userdata, or
 * -ENOENT with the error reply in *ret_reply (NULL when out of memory):
 * InterfaceNotFound for an interface other than ours, else MethodNotFound. */
static int find_method(const struct varlink_service *v, const char *name, const struct varlink_method **ret_method,
                       void **ret_userdata, json_t **ret_reply) {
        const struct varlink_interface *iface = v->interface;
        const char *dot = strrchr(name, '.');
        const struct varlink_method *methods;
        size_t n_methods, n;
        void *userdata;

        n = dot ? (size_t) (dot - name) : strlen(name);
        if (n == strlen(SERVICE_INTERFACE) && strncmp(name, SERVICE_INTERFACE, n) == 0) {
                methods = service_methods;
                n_methods = ELEMENTSOF(service_methods);
                userdata = (void *) v;
        } else if (n == strlen(iface->name) && strncmp(name, iface->name, n) == 0) {
                methods = iface->methods;
                n_methods = iface->n_methods;
                userdata = v->userdata;
        } else
                methods = NULL, n_methods = 0, userdata = NULL;

        if (!dot || !methods) {
                _cleanup_free_ char *unknown = strndup(name, n);
                *ret_reply = unknown ? varlink_reply_error(SERVICE_INTERFACE ".InterfaceNotFound",
                                                           json_pack("{s:s}", "interface", unknown)) : NULL;
                return -ENOENT;
        }
        for (size_t i = 0; i < n_methods; i++)
                if (strcmp(methods[i].name, dot + 1) == 0) {
                        *ret_method = &methods[i];
                        *ret_userdata = userdata;
                        return 0;
                }
        *ret_reply = varlink_reply_error(SERVICE_INTERFACE ".MethodNotFound", json_pack("{s:s}", "method", name));
        return -ENOENT;
}

/* One message being answered. */
struct message {
        const struct varlink_service *service;
        VarlinkCall *call;
        VarlinkAccess access;
        uid_t uid;
        pid_t pid;
        bool close;                     /* close the connection after the reply */
};

static json_t *invalid_message(struct message *m, const char *fmt, ...) _printf_(2, 3);
static json_t *invalid_message(struct message *m, const char *fmt, ...) {
        _cleanup_free_ char *reason = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (n < 0)
                return NULL;
        log_debug("Varlink: invalid message from pid " PID_FMT ": %s, closing", m->pid, reason);
        m->close = true;
        return varlink_reply_transport_error(m->service, "InvalidMessage", json_pack("{s:s}", "reason", reason));
}

/* The envelope of a message: an object with a "method" string and booleans
 * (or nothing) for "oneway", "more" and "upgrade". Returns 0, or -EBADMSG
 * with the InvalidMessage reply in *ret_reply (NULL when out of memory).
 * *ret_oneway is set as soon as it is known. */
static int check_envelope(struct message *c, json_t *msg, const char **ret_name, bool *ret_oneway, bool *ret_upgrade,
                          json_t **ret_reply) {
        json_t *v;

        if (!json_is_object(msg)) {
                *ret_reply = invalid_message(c, "not a JSON object");
                return -EBADMSG;
        }
        *ret_name = json_string_value(json_object_get(msg, "method"));
        if (!*ret_name) {
                *ret_reply = invalid_message(c, "no \"method\" string");
                return -EBADMSG;
        }
        v = json_object_get(msg, "oneway");
        if (v && !json_is_boolean(v)) {
                *ret_reply = invalid_message(c, "\"oneway\" is not a boolean");
                return -EBADMSG;
        }
        *ret_oneway = json_is_true(v);
        v = json_object_get(msg, "more");
        if (v && !json_is_boolean(v)) {
                *ret_reply = invalid_message(c, "\"more\" is not a boolean");
                return -EBADMSG;
        }
        v = json_object_get(msg, "upgrade");
        if (v && !json_is_boolean(v)) {
                *ret_reply = invalid_message(c, "\"upgrade\" is not a boolean");
                return -EBADMSG;
        }
        *ret_upgrade = json_is_true(v);
        return 0;
}

/* Check a call against its method and run it. Returns the reply, NULL when
 * out of memory. */
static json_t *dispatch(struct message *c, json_t *msg, const char *name, bool upgrade) {
        const struct varlink_method *method;
        json_t *ret = NULL, *params;
        void *userdata;

        if (find_method(c->service, name, &method, &userdata, &ret) < 0)
                return ret;
        if (upgrade)
                return varlink_reply_error(SERVICE_INTERFACE ".MethodNotImplemented",
                                           json_pack("{s:s}", "method", name));

        if (c->access < method->access) {
                log_debug("Varlink: %s refused to uid " UID_FMT " (pid " PID_FMT ")", name, c->uid, c->pid);
                return varlink_reply_transport_error(c->service, "PermissionDenied", NULL);
        }

        params = json_object_get(msg, "parameters");
        if (params && json_is_null(params))
                params = NULL;
        if (params && !json_is_object(params))
                return reply_invalid_parameter("parameters");
        if (!params) {
                params = json_object();
                if (!params)
                        return NULL;
                json_object_set_new(msg, "parameters", params);
        }
        ret = check_params(method->params, params);
        if (ret)
                return ret;

        return method->run(c->call, params, userdata);
}

json_t *varlink_dispatch_message(const struct varlink_service *service, VarlinkCall *call, VarlinkAccess access,
                                 uid_t uid, pid_t pid, const char *buf, size_t len, bool *ret_oneway,
                                 bool *ret_close) {
        struct message c = { .service = service, .call = call, .access = access, .uid = uid, .pid = pid };
        json_t *msg, *ret = NULL;
        json_error_t jerr;
        const char *name;
        bool oneway = false, upgrade = false;

        *ret_oneway = false;
        msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!msg) {
                ret = invalid_message(&c, "not JSON: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
                *ret_close = c.close;
                return ret;
        }

        if (check_envelope(&c, msg, &name, &oneway, &upgrade, &ret) >= 0)
                ret = dispatch(&c, msg, name, upgrade);

        json_decref(msg);
        *ret_close = c.close;
        if (oneway && !c.close) {
                json_decref(ret);
                *ret_oneway = true;
                return NULL;
        }
        return ret;
}

VarlinkAccess varlink_dispatch_access(const struct varlink_service *service, const char *buf, size_t len) {
        const struct varlink_method *method;
        VarlinkAccess access = VARLINK_ACCESS_NONE;
        json_t *msg, *reply = NULL;
        const char *name;
        void *userdata;

        msg = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
        name = json_string_value(json_object_get(msg, "method"));
        if (name && find_method(service, name, &method, &userdata, &reply) >= 0)
                access = method->access;
        json_decref(reply);
        json_decref(msg);
        return access;
}
