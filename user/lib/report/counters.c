// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "counters.h"
#include "json.h"
#include "rule_names.h"

int percpu_sum(int map_fd, __u32 key, __u64 *sum, size_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *per_cpu;
	int err = 0;

	if (ncpu < 1)
		return -EINVAL;
	per_cpu = calloc((size_t)ncpu * n, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, per_cpu))
		err = -errno;
	for (int c = 0; c < ncpu && !err; c++)
		for (size_t i = 0; i < n; i++)
			sum[i] += per_cpu[(size_t)c * n + i];
	free(per_cpu);
	return err;
}

int counters_read(int map_fd, struct roceval_counters *sum)
{
	memset(sum, 0, sizeof(*sum));
	return percpu_sum(map_fd, 0, (__u64 *)sum, sizeof(*sum) / sizeof(__u64));
}

void counters_json(struct json_writer *w, const struct roceval_counters *c)
{
	for (int i = 0; i < TOTAL__COUNT; i++)
		json_u64(w, total_ids[i], c->total[i]);
	json_object_begin(w, "rules");
	for (int i = 0; i < RULE__COUNT; i++)
		json_u64(w, rule_ids[i], c->rule[i]);
	json_object_end(w);
}

void counters_rates_json(struct json_writer *w, const char *key, const double *total_rates,
			 const double *rule_rates)
{
	json_object_begin(w, key);
	for (int i = 0; i < TOTAL__COUNT; i++)
		json_double(w, total_ids[i], total_rates[i], 3);
	json_object_begin(w, "rules");
	for (int i = 0; i < RULE__COUNT; i++)
		json_double(w, rule_ids[i], rule_rates[i], 3);
	json_object_end(w);
	json_object_end(w);
}

void counters_rates(const struct roceval_counters *prev, const struct roceval_counters *cur,
		    double secs, double *total_rates, double *rule_rates)
{
	for (int i = 0; i < TOTAL__COUNT; i++)
		total_rates[i] = secs > 0 ? (double)(cur->total[i] - prev->total[i]) / secs : 0;
	for (int i = 0; i < RULE__COUNT; i++)
		rule_rates[i] = secs > 0 ? (double)(cur->rule[i] - prev->rule[i]) / secs : 0;
}

void counters_print_table(FILE *f, const struct roceval_counters *c, const double *total_rates,
			  const double *rule_rates, int all_rules)
{
	for (int i = 0; i < TOTAL__COUNT; i++) {
		fprintf(f, "  %-18s %14llu", total_ids[i], (unsigned long long)c->total[i]);
		if (total_rates)
			fprintf(f, " %12.1f/s", total_rates[i]);
		fputc('\n', f);
	}
	fprintf(f, "\n  %-18s %14s%s  %-8s %s\n", "rule", "count", total_rates ? "         rate" : "",
		"severity", "description");
	for (int i = 0; i < RULE__COUNT; i++) {
		if (!all_rules && !c->rule[i])
			continue;
		fprintf(f, "  %-18s %14llu", rule_ids[i], (unsigned long long)c->rule[i]);
		if (rule_rates)
			fprintf(f, " %10.1f/s", rule_rates[i]);
		fprintf(f, "  %-8s %s\n", severity_name(rule_sevs[i]), rule_descs[i]);
	}
}

unsigned int reorder_le(unsigned int b)
{
	return 1u << b;
}

/* The distance of the reordered packet of rank ceil(q * count): its bucket's bound. */
unsigned int reorder_quantile(const struct roceval_counters *c, double q)
{
	unsigned long long total = 0, run = 0;

	for (int b = 0; b < ROCEVAL_REORDER_BUCKETS; b++)
		total += c->reorder[b];
	for (int b = 0; b < ROCEVAL_REORDER_BUCKETS && total; b++) {
		run += c->reorder[b];
		if ((double)run >= q * (double)total)
			return reorder_le(b);
	}
	return 0;
}

void reorder_json(struct json_writer *w, const struct roceval_counters *c)
{
	unsigned long long n = 0;

	for (int b = 0; b < ROCEVAL_REORDER_BUCKETS; b++)
		n += c->reorder[b];
	json_object_begin(w, "reorder");
	json_u64(w, "count", n);
	json_u64(w, "sum_psns", c->reorder_sum);
	json_u64(w, "p50_psns", reorder_quantile(c, 0.5));
	json_u64(w, "p99_psns", reorder_quantile(c, 0.99));
	json_array_begin(w, "buckets");
	for (int b = 0; b < ROCEVAL_REORDER_BUCKETS; b++) {
		if (!c->reorder[b])
			continue;
		json_object_begin(w, NULL);
		json_u64(w, "le_psns", reorder_le(b));
		json_u64(w, "count", c->reorder[b]);
		json_object_end(w);
	}
	json_array_end(w);
	json_object_end(w);
}

void reorder_print(FILE *f, const struct roceval_counters *c)
{
	unsigned long long n = c->rule[RULE_PSN_REORDER];

	if (!n)
		return;
	fprintf(f, "\n  %-12s %10s %12s %12s %12s\n", "reordered", "packets", "p50 <=", "p99 <=", "mean");
	fprintf(f, "  %-12s %10llu %7u PSNs %7u PSNs %7.1f PSNs\n", "distance", n, reorder_quantile(c, 0.5),
		reorder_quantile(c, 0.99), (double)c->reorder_sum / (double)n);
}
