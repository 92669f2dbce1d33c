/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A test's input on a TAP comment line: cmocka's print_message() under
 * CMOCKA_MESSAGE_OUTPUT=TAP is read line by line, and an input with a
 * newline in it would start a line that is not TAP. */
#pragma once

#include <stdio.h>

/* S in C escapes (\n, \t, \\, \", \xHH for the other control bytes) into
 * BUF of N bytes, cut short to fit; "(null)" for NULL. Returns BUF. */
static inline const char *tap_quote(const char *s, char *buf, size_t n) {
        size_t k = 0;

        if (!s)
                return "(null)";
        for (; *s && k + 5 < n; s++) {
                unsigned char c = (unsigned char) *s;

                if (c == '\n' || c == '\t' || c == '\\' || c == '"') {
                        buf[k++] = '\\';
                        buf[k++] = c == '\n' ? 'n' : c == '\t' ? 't' : (char) c;
                } else if (c < 0x20 || c == 0x7f)
                        k += (size_t) snprintf(buf + k, n - k, "\\x%02x", c);
                else
                        buf[k++] = (char) c;
        }
        buf[k] = '\0';
        return buf;
}
