/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The integer types of the structs shared by the BPF programs (clang
 * -target bpf) and user space (rqstat-abi.h, refused-abi.h): bw_u64 and
 * bw_u32 are __u64 and __u32 for the BPF target, uint64_t and uint32_t in
 * user space (the same bytes either way). */

#ifdef __bpf__
#include <linux/types.h>
typedef __u64 bw_u64;
typedef __u32 bw_u32;
#else
#include <stdint.h>
typedef uint64_t bw_u64;
typedef uint32_t bw_u32;
_Static_assert(sizeof(bw_u64) == 8, "bw_u64 is 8 bytes");
#endif
