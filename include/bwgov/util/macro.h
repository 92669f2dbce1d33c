/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by every module: cleanup attributes in the style of
 * systemd's macro.h, so that fds, FILE* and heap memory are released on every
 * return path. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _unused_ __attribute__((unused))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _pure_ __attribute__((pure))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* free(p); p = NULL in one expression: p = mfree(p). */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline void freep(void *p) {
        free(*(void **) p);
}

/* Close FD when it is one, keeping errno; returns -EBADF, so that
 * "fd = safe_close(fd);" leaves no stale number behind. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

/* Close each of FDS[0..N) once: an fd that appears more than once (one
 * directory held under two roles) is closed at its first appearance only. */
static inline void close_distinct(const int *fds, size_t n) {
        for (size_t i = 0; i < n; i++) {
                bool seen = false;

                for (size_t j = 0; j < i && !seen; j++)
                        seen = fds[j] == fds[i];
                if (!seen)
                        safe_close(fds[i]);
        }
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

/* free() each of N pointers (NULL ones included): the body of a destructor
 * whose struct owns several strings. See free_many(). */
static inline void free_many_n(void *const *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(p[i]);
}

/* free_many(a, b, c): free(a); free(b); free(c); in that order. */
#define free_many(...)                                                  \
        free_many_n((void *const[]) { __VA_ARGS__ },                    \
                    sizeof((void *const[]) { __VA_ARGS__ }) / sizeof(void *))

/* Tear down a heap array of N elements that own memory: DONE(&ARRAY[i]) for
 * each element, free(ARRAY), then ARRAY = NULL and N = 0. ARRAY and N are
 * lvalues (a struct's pointer and count); ARRAY may be NULL when N is 0. */
#define array_done_and_free(array, n, done)                             \
        do {                                                            \
                for (size_t _i = 0; _i < (n); _i++)                     \
                        done(&(array)[_i]);                             \
                free(array);                                            \
                (array) = NULL;                                         \
                (n) = 0;                                                \
        } while (0)

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* The next capacity of a full array of ALLOCATED elements, one per
 * governed cgroup or so: an eighth more from 128 on, not twice (ten
 * thousand cgroups in arrays for 16 384 left a third of them empty; a large
 * array grows by mremap(), not a copy), at least FIRST. */
static inline size_t grow_capacity(size_t allocated, size_t first) {
        size_t n = allocated >= 128 ? allocated + allocated / 8 : allocated * 2;

        return n > first ? n : first;
}

/* Hand ownership of a pointer or fd to the caller: returns the value and
 * clears the variable so the cleanup attribute does nothing. */
#define TAKE_PTR(p) __extension__ ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define TAKE_FD(fd) __extension__ ({ int _t = (fd); (fd) = -1; _t; })

#define USEC_PER_SEC  UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define NSEC_PER_USEC UINT64_C(1000)
