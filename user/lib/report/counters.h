/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_COUNTERS_H
#define ROCEVAL_COUNTERS_H

#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"

/*
 * Adds every CPU's value of `key` in a per-CPU map whose values are n
 * 64-bit counters (all of roceval's are) to sum[0..n-1].  0 or -errno.
 */
int percpu_sum(int map_fd, __u32 key, __u64 *sum, size_t n);
/* Sums the per-CPU values of the counters map into *sum. */
int counters_read(int map_fd, struct roceval_counters *sum);
struct json_writer;

/* Into the object being written: every frame total, then "rules": {every rule}. */
void counters_json(struct json_writer *w, const struct roceval_counters *c);
/* key: {the same names, per second, 3 decimals}. */
void counters_rates_json(struct json_writer *w, const char *key, const double *total_rates,
			 const double *rule_rates);
/* Aligned table; rates (per second) are printed when not NULL. */
void counters_print_table(FILE *f, const struct roceval_counters *c, const double *total_rates,
			  const double *rule_rates, int all_rules);
/*
 * The psn_reorder packets by how far behind the newest PSN of their flow
 * they came: bucket b holds distances up to reorder_le(b) PSNs.
 */
unsigned int reorder_le(unsigned int b);
/* The bucket bound the q-th quantile of the distances falls in; 0 when none was counted. */
unsigned int reorder_quantile(const struct roceval_counters *c, double q);
/* "reorder": {"count", "sum_psns", "p50_psns", "p99_psns", "buckets": [{"le_psns", "count"}]} */
void reorder_json(struct json_writer *w, const struct roceval_counters *c);
/* Under a counters table: the distances' p50, p99 and mean, when any packet was reordered. */
void reorder_print(FILE *f, const struct roceval_counters *c);
/* Per-second rates from two readings `secs` apart. */
void counters_rates(const struct roceval_counters *prev, const struct roceval_counters *cur,
		    double secs, double *total_rates, double *rule_rates);

#endif
