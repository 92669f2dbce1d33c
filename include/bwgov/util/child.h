/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A call made in a forked child, its result brought back through a pipe:
 * whatever the call maps or touches (libcrypto, which cannot be unloaded;
 * libcgroup's static tables, 800 KiB once initialised) stays out of the
 * caller, a daemon that runs for months. */

#include <stddef.h>

/* fn(userdata, out) in a child; its int result and the out_size bytes it
 * left in out come back to the caller. Without a pipe or a child (a limit,
 * a seccomp filter), fn runs in this process. Returns fn's result, or -EIO
 * when the child ended without answering (out is then untouched). */
int bw_call_in_child(int (*fn)(void *userdata, void *out), void *userdata, void *out, size_t out_size);
