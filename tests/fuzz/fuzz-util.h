/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the fuzz targets share: a NUL-terminated copy of the input, a
 * checked property that aborts (so libFuzzer and the replay driver both see
 * it), reading fixed-width numbers off the input, and scratch directories
 * that are made and removed within one run. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's entry point, defined by each target; the replay driver
 * (fuzz-main.c) calls it too. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the code under test: on failure, say which and abort(). */
#define fuzz_check(expr)                                                        \
        do {                                                                    \
                if (!(expr))                                                    \
                        fuzz_fail(__FILE__, __LINE__, #expr);                   \
        } while (0)

_Noreturn void fuzz_fail(const char *file, int line, const char *what);

/* data[0..size) plus a NUL, malloc'd; aborts when out of memory (the
 * input's fault under -rss_limit_mb, not the code's). Free with free(). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* The input as a stream of numbers for generated values: each call takes
 * the next bytes (zeros once the input is used up). */
struct fuzz_bytes {
        const uint8_t *data;
        size_t size;
};

uint64_t fuzz_take_u64(struct fuzz_bytes *b);
uint8_t fuzz_take_u8(struct fuzz_bytes *b);

/* A fresh directory "/tmp/bwgov-fuzz-NAME-XXXXXX" (malloc'd path), or NULL
 * with errno. */
char *fuzz_mkdtemp(const char *name);

/* Remove PATH and everything below it, never following a symlink. Returns
 * 0 or a negative errno. */
int fuzz_rm_rf(const char *path);

/* Create the file PATH (relative to dirfd) with CONTENT[0..len), replacing
 * one that is there. Returns 0 or a negative errno. */
int fuzz_write_file_at(int dirfd, const char *path, const void *content, size_t len);
