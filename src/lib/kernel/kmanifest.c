/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel patch-set manifest as data: the names of its enumerations, its
 * lifetime, the error list, and the SHA-256 check of the files it lists.
 * The parser, and loading a manifest from a file, are kmanifest-parse.c,
 * which calls this file; this file never calls it. */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/child.h"
#include "bwgov/kernel/kmanifest.h"
#include "bwgov/util/macro.h"
#include "bwgov/util/parse-util.h"
#include "config.h"

static const char *const kind_table[_BW_KITEM_KIND_MAX] = {
        [BW_KITEM_UPSTREAM_FIX] = "upstream-fix",
        [BW_KITEM_OUT_OF_TREE] = "out-of-tree",
        [BW_KITEM_FEATURE] = "feature",
};

static const char *const importance_table[_BW_KIMPORTANCE_MAX] = {
        [BW_KIMPORTANCE_REQUIRED] = "required",
        [BW_KIMPORTANCE_RECOMMENDED] = "recommended",
        [BW_KIMPORTANCE_OPTIONAL] = "optional",
};

static const char *const effect_table[_BW_KEFFECT_MAX] = {
        [BW_KEFFECT_NONE] = "none",
        [BW_KEFFECT_NO_BURST] = "no-burst",
        [BW_KEFFECT_BURST_REPAIR] = "burst-repair",
        [BW_KEFFECT_NO_PSI] = "no-psi",
        [BW_KEFFECT_NO_PSI_FULL] = "no-psi-full",
        [BW_KEFFECT_NO_PSI_TRIGGERS] = "no-psi-triggers",
        [BW_KEFFECT_NO_BURST_STATS] = "no-burst-stats",
        [BW_KEFFECT_AVOID_IDENTICAL_WRITES] = "avoid-identical-writes",
        [BW_KEFFECT_ORDER_WRITES] = "order-writes",
};

static const char *const method_table[_BW_KDETECT_MAX] = {
        [BW_KDETECT_VERSION] = "version",
        [BW_KDETECT_FILE] = "file",
        [BW_KDETECT_PROC_FILE] = "proc-file",
        [BW_KDETECT_CPUSTAT_FIELD] = "cpustat-field",
        [BW_KDETECT_PSI_FULL] = "psi-full",
        [BW_KDETECT_KCONFIG] = "kconfig",
        [BW_KDETECT_BTF_MEMBER] = "btf-member",
        [BW_KDETECT_BEHAVIOUR] = "behaviour",
};

static const char *const behaviour_table[_BW_KBEHAVIOUR_MAX] = {
        [BW_KBEHAVIOUR_BURST_SURVIVES_CPUMAX_WRITE] = "burst-survives-cpumax-write",
        [BW_KBEHAVIOUR_IDENTICAL_UPDATE_NOOP] = "identical-update-noop",
        [BW_KBEHAVIOUR_ACCOUNTING_SLACK] = "accounting-slack",
        [BW_KBEHAVIOUR_ATOMIC_RUNTIME_POOL] = "atomic-runtime-pool",
        [BW_KBEHAVIOUR_WRITE_ORDER] = "write-order",
        [BW_KBEHAVIOUR_NESTED_SIBLINGS] = "nested-siblings",
};

BW_DEFINE_STRING_TABLE(bw_kitem_kind, enum bw_kitem_kind, kind_table, _BW_KITEM_KIND_MAX, int, -EINVAL)
BW_DEFINE_STRING_TABLE(bw_kimportance, enum bw_kimportance, importance_table, _BW_KIMPORTANCE_MAX, int, -EINVAL)
BW_DEFINE_STRING_TABLE(bw_keffect, enum bw_keffect, effect_table, _BW_KEFFECT_MAX, int, -EINVAL)
BW_DEFINE_STRING_TABLE(bw_kdetect_method, enum bw_kdetect_method, method_table, _BW_KDETECT_MAX, int, -EINVAL)
BW_DEFINE_STRING_TABLE(bw_kbehaviour, enum bw_kbehaviour, behaviour_table, _BW_KBEHAVIOUR_MAX, int, -EINVAL)

static void kerror_done(struct bw_kerror *e) {
        free_many(e->path, e->message);
}

void bw_kerrors_done(struct bw_kerrors *e) {
        if (!e)
                return;
        array_done_and_free(e->errors, e->n_errors, kerror_done);
}

int bw_kerrors_add(struct bw_kerrors *e, const char *path, const char *fmt, ...) {
        _cleanup_free_ char *p = NULL, *m = NULL;
        struct bw_kerror *n;

        if (!e)
                return 0;
        va_list ap;
        int r;

        p = strdup(path);
        if (!p)
                return -ENOMEM;
        va_start(ap, fmt);
        r = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (r < 0) {
                m = NULL;
                return -ENOMEM;
        }
        n = realloc(e->errors, (e->n_errors + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        e->errors = n;
        e->errors[e->n_errors++] = (struct bw_kerror) { .path = TAKE_PTR(p), .message = TAKE_PTR(m) };
        return 0;
}


/* ------------------------------------------------------------------------ */

static void strv_free(char **v, size_t n) {
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

void bw_kdetect_done(struct bw_kdetect *d) {
        strv_free(d->any, d->n_any);
        free(d->path);
        free(d->option);
        free(d->struct_name);
        free(d->member);
}

void bw_kitem_done(struct bw_kitem *it) {
        free(it->id);
        free(it->title);
        free(it->upstream_commit);
        free(it->stable);
        strv_free(it->patches, it->n_patches);
        for (size_t i = 0; i < it->n_detect; i++)
                bw_kdetect_done(&it->detect[i]);
        free(it->detect);
        free(it->fallback);
        free(it->note);
}

void bw_kmanifest_free(struct bw_kmanifest *m) {
        if (!m)
                return;
        free(m->patchset_version);
        for (size_t i = 0; i < m->n_branches; i++) {
                free(m->branches[i].name);
                free(m->branches[i].base);
                strv_free(m->branches[i].series, m->branches[i].n_series);
        }
        free(m->branches);
        for (size_t i = 0; i < m->n_files; i++)
                free(m->files[i].path);
        free(m->files);
        for (size_t i = 0; i < m->n_items; i++)
                bw_kitem_done(&m->items[i]);
        free(m->items);
        free(m);
}

const struct bw_kitem *bw_kmanifest_find_item(const struct bw_kmanifest *m, const char *id) {
        for (size_t i = 0; i < m->n_items; i++)
                if (strcmp(m->items[i].id, id) == 0)
                        return &m->items[i];
        return NULL;
}


int bw_kmanifest_open_dir(const char *path) {
        _cleanup_free_ char *dir = NULL;
        const char *slash = strrchr(path, '/');
        int fd;

        if (!slash)
                dir = strdup(".");
        else if (slash == path)
                dir = strdup("/");
        else
                dir = strndup(path, (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* OpenSSL's SHA-256, loaded the first time a file is checked: linked,
 * libcrypto's relocations alone kept 1.4 MiB resident in every bwgovd,
 * which needs it only for the kernel check. Loaded, it stays (OpenSSL pins
 * itself against dlclose()) with 3.4 MiB resident: bwgovd hashes in a
 * child process instead (bw_kmanifest_set_hash_in_child()). */
static struct {
        void *handle;
        EVP_MD_CTX *(*md_ctx_new)(void);
        void (*md_ctx_free)(EVP_MD_CTX *ctx);
        const EVP_MD *(*sha256)(void);
        int (*digest_init)(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl);
        int (*digest_update)(EVP_MD_CTX *ctx, const void *d, size_t cnt);
        int (*digest_final)(EVP_MD_CTX *ctx, unsigned char *md, unsigned *s);
} crypto;

static int crypto_load(void) {
        static const char *const sonames[] = { "libcrypto.so.3", "libcrypto.so" };
        void *h = NULL;

        if (crypto.handle)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(sonames) && !h; i++)
                h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return -EOPNOTSUPP;
        /* POSIX's way to a function pointer from dlsym() under -Wpedantic. */
        *(void **) &crypto.md_ctx_new = dlsym(h, "EVP_MD_CTX_new");
        *(void **) &crypto.md_ctx_free = dlsym(h, "EVP_MD_CTX_free");
        *(void **) &crypto.sha256 = dlsym(h, "EVP_sha256");
        *(void **) &crypto.digest_init = dlsym(h, "EVP_DigestInit_ex");
        *(void **) &crypto.digest_update = dlsym(h, "EVP_DigestUpdate");
        *(void **) &crypto.digest_final = dlsym(h, "EVP_DigestFinal_ex");
        if (!crypto.md_ctx_new || !crypto.md_ctx_free || !crypto.sha256 || !crypto.digest_init ||
            !crypto.digest_update || !crypto.digest_final) {
                dlclose(h);
                crypto.md_ctx_new = NULL;
                return -EOPNOTSUPP;
        }
        crypto.handle = h;
        return 0;
}

static bool hash_in_child = false;

void bw_kmanifest_set_hash_in_child(bool b) {
        hash_in_child = b;
}

static int sha256_fd(int fd, char ret_hex[static 65]);

static int sha256_call(void *userdata, void *out) {
        return sha256_fd(*(int *) userdata, out);
}

/* sha256_fd() in a child process (bw_call_in_child()). */
static int sha256_fd_child(int fd, char ret_hex[static 65]) {
        char hex[65] = { 0 };
        int r = bw_call_in_child(sha256_call, &fd, hex, sizeof(hex));

        if (r < 0)
                return r;
        memcpy(ret_hex, hex, 64);
        ret_hex[64] = '\0';
        return 0;
}

static int sha256_fd(int fd, char ret_hex[static 65]) {
        EVP_MD_CTX *ctx;
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned md_len = 0;
        char buf[16384];
        ssize_t n;
        int r = 0;

        r = crypto_load();
        if (r < 0)
                return r;
        ctx = crypto.md_ctx_new();
        if (!ctx)
                return -ENOMEM;
        if (crypto.digest_init(ctx, crypto.sha256(), NULL) != 1) {
                r = -EIO;
                goto finish;
        }
        for (;;) {
                n = read(fd, buf, sizeof buf);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto finish;
                }
                if (n == 0)
                        break;
                if (crypto.digest_update(ctx, buf, (size_t) n) != 1) {
                        r = -EIO;
                        goto finish;
                }
        }
        if (crypto.digest_final(ctx, md, &md_len) != 1 || md_len != 32) {
                r = -EIO;
                goto finish;
        }
        for (unsigned i = 0; i < md_len; i++)
                snprintf(ret_hex + 2 * i, 3, "%02x", md[i]);
finish:
        crypto.md_ctx_free(ctx);
        return r;
}

int bw_kmanifest_verify_files(const struct bw_kmanifest *m, int dir_fd, struct bw_kerrors *ret_errors) {
        bool bad = false;
        int r;

        for (size_t i = 0; i < m->n_files; i++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ char *p = NULL;
                char hex[65];
                struct stat st;

                if (asprintf(&p, "$.files[%zu]", i) < 0)
                        return -ENOMEM;

                fd = openat(dir_fd, m->files[i].path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0) {
                        r = bw_kerrors_add(ret_errors, p, "%s: %s", m->files[i].path,
                                        errno == ENOENT ? "missing" : strerror(errno));
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                        r = bw_kerrors_add(ret_errors, p, "%s: not a regular file", m->files[i].path);
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                r = hash_in_child ? sha256_fd_child(fd, hex) : sha256_fd(fd, hex);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = bw_kerrors_add(ret_errors, p, "%s: cannot read: %s", m->files[i].path, strerror(-r));
                        if (r < 0)
                                return r;
                        bad = true;
                        continue;
                }
                if (strcmp(hex, m->files[i].sha256) != 0) {
                        r = bw_kerrors_add(ret_errors, p, "%s: sha256 mismatch: manifest has %s, file has %s",
                                        m->files[i].path, m->files[i].sha256, hex);
                        if (r < 0)
                                return r;
                        bad = true;
                }
        }
        return bad ? -EBADMSG : 0;
}

const char *bw_kmanifest_default_path(void) {
#if defined(BWGOV_MANIFEST_PATH) && defined(BWGOV_MANIFEST_BUILD)
        if (access(BWGOV_MANIFEST_PATH, F_OK) < 0 && access(BWGOV_MANIFEST_BUILD, F_OK) >= 0)
                return BWGOV_MANIFEST_BUILD;
#endif
#ifdef BWGOV_MANIFEST_PATH
        return BWGOV_MANIFEST_PATH;
#else
        return BWGOV_DATADIR "/kernel-patches/manifest.json";
#endif
}
