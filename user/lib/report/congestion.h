/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Congestion as reported beside the rules (roceval_cc.h): PFC pause frames
 * per priority, and the cnp_reaction histogram of how senders' rates follow
 * CNPs, as JSON, text, Prometheus and top's lines.
 */
#ifndef ROCEVAL_CONGESTION_H
#define ROCEVAL_CONGESTION_H

#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"

/* Sums the per-CPU entry of the congestion map into *out; 0 or -errno. */
int congestion_read(int map_fd, struct roceval_congestion *out);
/* How long `quanta` pause quanta (512 bit times each) last at `mbps`, in ns; 0 when the speed is unknown. */
double pfc_pause_ns(__u64 quanta, __u32 mbps);
/* Bucket b's upper bound as a ratio of after to before (the last bucket's is infinite). */
double reaction_le(unsigned int b);
/* The upper bound of the bucket the q-quantile falls in; 0 without samples. */
double reaction_quantile(const struct roceval_congestion *c, double q);
__u64 reaction_count(const struct roceval_congestion *c);

struct json_writer;
/*
 * "pfc": [{"priority", "frames", "xoff", "xon", "quanta"[, "pause_ns"]} x 8]
 * (pause_ns with a link_speed), and "cnp_reaction": {"window_ns", "count",
 * "sum", "p50", "p99", "buckets": [{"le", "count"}], "within_window",
 * "unmeasured", "unpaired"} into the object being written.
 */
void congestion_json(struct json_writer *w, const struct roceval_congestion *c, const struct roceval_settings *cfg);
/* A few lines of what is not zero: the priorities paused, the reaction ratios. */
void congestion_print(FILE *f, const struct roceval_congestion *c, const struct roceval_settings *cfg);
/*
 * top's congestion lines, each handed to line(ctx, text): CNPs and CE
 * marks, the ce_cnp latency, the reaction ratios and each priority paused.
 */
void congestion_lines(const struct roceval_counters *cnt, const struct roceval_latency_hist *ce_cnp,
		      const struct roceval_congestion *c, const struct roceval_settings *cfg,
		      void (*line)(void *ctx, const char *text), void *ctx);

#endif
