/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Mirror sessions (roceval_mirror.h): frames a switch or a cloud mirrored
 * to this host inside ERSPAN, GRE, VXLAN or Geneve.
 */
#ifndef ROCEVAL_MIRROR_BPF_H
#define ROCEVAL_MIRROR_BPF_H

#include "frame.bpf.h"

/* A session's slot in mirror_stats; created on its first frame, never removed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCEVAL_MIRROR_SESSIONS);
	__type(key, struct roceval_mirror_key);
	__type(value, __u32);
} mirror_sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCEVAL_MIRROR_SESSIONS);
	__type(key, __u32);
	__type(value, struct roceval_mirror_stats);
} mirror_stats SEC(".maps");

/* Slots handed out so far: one past the last session's. */
__u32 mirror_slots;

#endif /* ROCEVAL_MIRROR_BPF_H */
