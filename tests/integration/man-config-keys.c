/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Print every configuration key the parser accepts, one "Section.Key" per
 * line, for the test that checks bwgov.conf(5) documents them all
 * (man-pages.py config-keys). */

#include <stdio.h>
#include <stdlib.h>

#include "bwgov/config/config.h"

int main(void) {
        const char *const *keys = bw_config_known_keys();

        if (!keys || !keys[0]) {
                fprintf(stderr, "man-config-keys: the parser lists no keys\n");
                return EXIT_FAILURE;
        }
        for (size_t i = 0; keys[i]; i++)
                printf("%s\n", keys[i]);
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
