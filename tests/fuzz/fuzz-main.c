/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The replay driver: a main() for the fuzz targets without libFuzzer. Each
 * argument is a file, run as one input, or a directory, whose regular files
 * are run one by one in name order. A crash is the target's (abort() or a
 * sanitizer's report); the driver itself fails when it was given nothing to
 * run, a directory without inputs, or a file it cannot read.
 *
 *   fuzz-NAME PATH...
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "fuzz-util.h"

/* As libFuzzer's -max_len for a replay: the corpora hold small files. */
#define INPUT_MAX (1024U * 1024U)

static int run_file(int dirfd, const char *name, const char *shown) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        r = bw_read_full_at(dirfd, name, 0, INPUT_MAX, &buf, &len);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", shown, strerror(-r));
                return r;
        }
        printf("%s (%zu bytes)\n", shown, len);
        fflush(stdout);
        /* A copy of exactly len bytes, so ASan sees a read past the end. */
        {
                _cleanup_free_ uint8_t *exact = malloc(len ? len : 1);

                if (!exact)
                        return -ENOMEM;
                memcpy(exact, buf, len);
                (void) LLVMFuzzerTestOneInput(exact, len);
        }
        return 0;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The regular files of PATH, each once. Returns how many ran, or a
 * negative errno. */
static int run_dir(const char *path) {
        _cleanup_close_ int fd = -1;
        char **names = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(dup(fd));
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' || fstatat(fd, de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (n == allocated) {
                        char **p = realloc(names, (allocated = allocated ? allocated * 2 : 16) * sizeof(*names));

                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        names = p;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);

        if (r >= 0)
                qsort(names, n, sizeof(*names), name_cmp);
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *shown = NULL;

                if (asprintf(&shown, "%s/%s", path, names[i]) < 0)
                        r = -ENOMEM;
                else
                        r = run_file(fd, names[i], shown);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r < 0 ? r : (int) n;
}

int main(int argc, char *argv[]) {
        size_t total = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIRECTORY...\n", argv[0]);
                return EXIT_FAILURE;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                int r;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode)) {
                        r = run_dir(argv[i]);
                        if (r == 0) {
                                fprintf(stderr, "%s: no inputs in this directory\n", argv[i]);
                                return EXIT_FAILURE;
                        }
                } else
                        r = run_file(AT_FDCWD, argv[i], argv[i]) < 0 ? -EIO : 1;
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
                total += (size_t) r;
        }
        printf("%zu inputs, no crash\n", total);
        return EXIT_SUCCESS;
}
