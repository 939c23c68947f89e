/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The latency histograms (kinds and buckets: roceval.h) and the
 * retransmission accounting, as JSON, Prometheus and text show them.
 */
#ifndef ROCEVAL_LATENCY_H
#define ROCEVAL_LATENCY_H

#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"

/*
 * What a live attachment's latencies are timed by, from its counters:
 * "nic" once the NIC has stamped a frame (the program then times by its
 * stamps alone), else "kernel".  A replay uses the capture's timestamps.
 */
const char *latency_clock(const __u64 *total);
/* One line saying which clock, why, and what to change for the NIC's; `nic_capable`: roceval_xdp_nic attached. */
void latency_clock_text(FILE *f, const __u64 *total, bool nic_capable, const char *ifname);

extern const char *const latency_ids[LAT__COUNT];
extern const char *const latency_descs[LAT__COUNT];

/* Sums the per-CPU histograms of the latency map into out[LAT__COUNT]. */
int latency_read(int map_fd, struct roceval_latency_hist *out);
/* Bucket b's upper bound in ns (the last bucket's: the most a latency can be). */
unsigned long long latency_le_ns(unsigned int b);
/*
 * The upper bound of the bucket the q-quantile (0 < q <= 1) falls in, in
 * ns; 0 when there are no samples.  From counts of any width.
 */
unsigned long long latency_quantile_ns(const __u64 *buckets, double q);
unsigned long long latency_quantile16_ns(const __u16 *buckets, double q);

struct json_writer;
/*
 * "latency": {kind: {"count", "sum_ns", "p50_ns", "p99_ns", "buckets":
 * [{"le_ns", "count"} for every non-empty bucket]}} into the object being
 * written.
 */
void latency_json(struct json_writer *w, const struct roceval_latency_hist *h);
/* "retransmission": {"packets", "episodes", ...}, from the counters. */
struct roceval_counters;
void retransmission_json(struct json_writer *w, const struct roceval_counters *c);
/* "840 ns", "12.3 us", "1.5 ms" */
const char *latency_text(unsigned long long ns, char *buf, size_t len);
/* A few lines: each kind with samples, its count, p50, p99 and mean. */
void latency_print(FILE *f, const struct roceval_latency_hist *h);

#endif
