/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The frame's time: a replayed frame's capture time, which the batch walk
 * reads into batch_hdr with the record, or the kernel's clock live.  Every
 * part that ages state or times an answer reads it here.
 */
#ifndef ROCEVAL_CLOCK_BPF_H
#define ROCEVAL_CLOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/*
 * The record header being read: captured length, wire length and the
 * capture time in nanoseconds since the epoch.  In map memory, not on the
 * stack: the replay program's stack is part of the deepest call chain's 512
 * bytes.  The time stays here for the frame's validation to read.
 */
struct {
	__u32 len;
	__u32 wire;
	__u64 time_ns;
} batch_hdr;

/* Set by the replay program, so its frames are timed by the capture, not by when they run. */
bool replay_clock;

/* Now, for what ages with time: the frame's capture time in a replay, the kernel's clock live. */
static __always_inline __u64 frame_time_ns(void)
{
	return replay_clock ? batch_hdr.time_ns : bpf_ktime_get_ns();
}

#endif /* ROCEVAL_CLOCK_BPF_H */
