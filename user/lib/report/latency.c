// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>

#include "counters.h"
#include "json.h"
#include "latency.h"

#define LAT_ID(e, id, desc) id,
const char *const latency_ids[LAT__COUNT] = { ROCEVAL_LATENCIES(LAT_ID) };
#undef LAT_ID
#define LAT_DESC(e, id, desc) desc,
const char *const latency_descs[LAT__COUNT] = { ROCEVAL_LATENCIES(LAT_DESC) };
#undef LAT_DESC

int latency_read(int map_fd, struct roceval_latency_hist *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out) * LAT__COUNT);
	for (__u32 k = 0; k < LAT__COUNT && !err; k++)
		err = percpu_sum(map_fd, k, (__u64 *)&out[k], sizeof(*out) / sizeof(__u64));
	return err;
}

unsigned long long latency_le_ns(unsigned int b)
{
	return 1ULL << (ROCEVAL_LAT_SHIFT + b);
}

static unsigned long long quantile(const __u64 *b64, const __u16 *b16, double q)
{
	unsigned long long total = 0, run = 0;

	for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++)
		total += b64 ? b64[b] : b16[b];
	if (!total)
		return 0;
	for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++) {
		run += b64 ? b64[b] : b16[b];
		/* the sample of rank ceil(q * total) */
		if ((double)run >= q * (double)total)
			return latency_le_ns(b);
	}
	return latency_le_ns(ROCEVAL_LAT_BUCKETS - 1);
}

unsigned long long latency_quantile_ns(const __u64 *buckets, double q)
{
	return quantile(buckets, NULL, q);
}

unsigned long long latency_quantile16_ns(const __u16 *buckets, double q)
{
	return quantile(NULL, buckets, q);
}

static unsigned long long hist_count(const struct roceval_latency_hist *h)
{
	unsigned long long n = 0;

	for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++)
		n += h->bucket[b];
	return n;
}

void latency_json(struct json_writer *w, const struct roceval_latency_hist *h)
{
	json_object_begin(w, "latency");
	for (int k = 0; k < LAT__COUNT; k++) {
		json_object_begin(w, latency_ids[k]);
		json_u64(w, "count", hist_count(&h[k]));
		json_u64(w, "sum_ns", h[k].sum_ns);
		json_u64(w, "p50_ns", latency_quantile_ns(h[k].bucket, 0.5));
		json_u64(w, "p99_ns", latency_quantile_ns(h[k].bucket, 0.99));
		json_array_begin(w, "buckets");
		for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++) {
			if (!h[k].bucket[b])
				continue;
			json_object_begin(w, NULL);
			json_u64(w, "le_ns", latency_le_ns(b));
			json_u64(w, "count", h[k].bucket[b]);
			json_object_end(w);
		}
		json_array_end(w);
		json_object_end(w);
	}
	json_object_end(w);
}

/* The retransmission accounting: names for the counters that make it up. */
static const struct {
	const char *key;
	int total; /* a TOTAL_*, or -1 */
	int rule;  /* else a RULE_* */
} retx_fields[] = {
	{ "packets", TOTAL_RETX_PACKETS, -1 },
	{ "episodes", -1, RULE_RETX_EPISODE },
	{ "episodes_after_timeout", -1, RULE_RETX_TIMEOUT },
	{ "changed", -1, RULE_RETX_CHANGED },
	{ "uncompared", -1, RULE_RETX_UNCOMPARED },
	{ "nak_psn_wrong", -1, RULE_NAK_PSN_WRONG },
	{ "go_back_early", -1, RULE_GO_BACK_EARLY },
	{ "go_back_late", -1, RULE_GO_BACK_LATE },
	{ "timeout_early", -1, RULE_RETX_TIMEOUT_EARLY },
	{ "rnr_retry_early", -1, RULE_RNR_RETRY_EARLY },
	{ "read_rerequest", -1, RULE_READ_REREQUEST },
};

void retransmission_json(struct json_writer *w, const struct roceval_counters *c)
{
	json_object_begin(w, "retransmission");
	for (size_t i = 0; i < sizeof(retx_fields) / sizeof(retx_fields[0]); i++)
		json_u64(w, retx_fields[i].key,
			 retx_fields[i].total >= 0 ? c->total[retx_fields[i].total] : c->rule[retx_fields[i].rule]);
	/* the rest were after a NAK */
	json_u64(w, "episodes_after_nak", c->rule[RULE_RETX_EPISODE] - c->rule[RULE_RETX_TIMEOUT]);
	json_object_end(w);
}

const char *latency_text(unsigned long long ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.1f s", ns / 1e9);
	return buf;
}

void latency_print(FILE *f, const struct roceval_latency_hist *h)
{
	bool any = false;

	for (int k = 0; k < LAT__COUNT; k++) {
		unsigned long long n = hist_count(&h[k]);
		char p50[32], p99[32], mean[32];

		if (!n)
			continue;
		if (!any)
			fprintf(f, "\n  %-12s %10s %12s %12s %12s\n", "latency", "samples", "p50 <=", "p99 <=", "mean");
		any = true;
		fprintf(f, "  %-12s %10llu %12s %12s %12s\n", latency_ids[k], n,
			latency_text(latency_quantile_ns(h[k].bucket, 0.5), p50, sizeof(p50)),
			latency_text(latency_quantile_ns(h[k].bucket, 0.99), p99, sizeof(p99)),
			latency_text(h[k].sum_ns / n, mean, sizeof(mean)));
	}
}

const char *latency_clock(const __u64 *total)
{
	return total[TOTAL_TIMED_NIC] ? "nic" : "kernel";
}

void latency_clock_text(FILE *f, const __u64 *total, bool nic_capable, const char *ifname)
{
	if (total[TOTAL_TIMED_NIC])
		fprintf(f, "nic: the NIC's receive timestamps (%llu frames timed, %llu it did not stamp left untimed)\n",
			(unsigned long long)total[TOTAL_TIMED_NIC], (unsigned long long)total[TOTAL_UNTIMED]);
	else if (nic_capable)
		fprintf(f, "kernel: the NIC has stamped no frame (its receive timestamping is off? "
			   "hwstamp_ctl -i %s -r 1)\n", ifname);
	else
		fprintf(f, "kernel: when the program sees each frame (the NIC's timestamps need native mode, "
			   "kernel 6.3+)\n");
}
