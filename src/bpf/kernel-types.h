/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The few kernel types rqstat.bpf.c and refused.bpf.c read, with only the fields it reads.
 * preserve_access_index makes every access a CO-RE relocation: libbpf finds
 * each field by name in the running kernel's BTF at load time, so no
 * vmlinux.h of one kernel is built in. Fields that only some kernels have are
 * read behind bpf_core_field_exists(); "___suffix" types are the older
 * shapes of a type (libbpf ignores the suffix when matching). */

#include <linux/types.h>

#ifndef __bpf_kernel_types
#define __bpf_kernel_types

typedef _Bool bool;
#define true 1
#define false 0
typedef __u64 u64;
typedef __u32 u32;
typedef __s64 s64;

#define __kt __attribute__((preserve_access_index))

struct kernfs_node {
        u64 id;
} __kt;

struct cgroup;

struct cgroup_subsys_state {
        struct cgroup *cgroup;
        struct cgroup_subsys_state *parent;
} __kt;

struct cgroup {
        struct cgroup_subsys_state self;
        struct kernfs_node *kn;
} __kt;

struct task_group {
        struct cgroup_subsys_state css;
} __kt;

struct css_set {
        struct cgroup *dfl_cgrp;
} __kt;

struct rq {
        u64 clock;
        u64 clock_pelt;
        unsigned long lost_idle_time;
        int cpu;
} __kt;

struct cfs_rq {
        struct rq *rq;
        int runtime_enabled;
        int throttle_count;
        u64 throttled_clock_pelt;
        u64 throttled_clock_pelt_time;
        u64 throttled_clock_self;       /* 6.6 and later */
        u64 throttled_clock_self_time;  /* 6.6 and later */
} __kt;

struct sched_entity {
        struct cfs_rq *cfs_rq;
} __kt;

struct sched_info {
        unsigned long long last_queued; /* CONFIG_SCHED_INFO: rq clock at enqueue, 0 when not queued */
} __kt;

struct task_struct {
        int pid;
        unsigned int policy;
        struct sched_entity se;
        struct sched_info sched_info;
        struct task_group *sched_task_group;
        struct css_set *cgroups;
        bool throttled;                 /* 6.18's task-based throttling */
} __kt;

#endif
