// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <math.h>
#include <string.h>

#include "congestion.h"
#include "counters.h"
#include "json.h"
#include "latency.h"

int congestion_read(int map_fd, struct roceval_congestion *out)
{
	memset(out, 0, sizeof(*out));
	return percpu_sum(map_fd, 0, (__u64 *)out, sizeof(*out) / sizeof(__u64));
}

double pfc_pause_ns(__u64 quanta, __u32 mbps)
{
	/* a quantum is 512 bit times: 512 / (mbps * 1e6) s */
	return mbps ? (double)quanta * 512e3 / mbps : 0;
}

double reaction_le(unsigned int b)
{
	return b + 1 < ROCEVAL_REACTION_BUCKETS ? (b + 1) / 8.0 : INFINITY;
}

__u64 reaction_count(const struct roceval_congestion *c)
{
	__u64 n = 0;

	for (int b = 0; b < ROCEVAL_REACTION_BUCKETS; b++)
		n += c->reaction[b];
	return n;
}

double reaction_quantile(const struct roceval_congestion *c, double q)
{
	__u64 total = reaction_count(c), run = 0;

	for (int b = 0; total && b < ROCEVAL_REACTION_BUCKETS; b++) {
		run += c->reaction[b];
		if ((double)run >= q * (double)total)
			return reaction_le(b);
	}
	return 0;
}

static void pfc_json(struct json_writer *w, const struct roceval_congestion *c, __u32 mbps)
{
	json_array_begin(w, "pfc");
	for (int p = 0; p < ROCEVAL_PFC_PRIOS; p++) {
		json_object_begin(w, NULL);
		json_u64(w, "priority", p);
		json_u64(w, "frames", c->pfc[p].frames);
		json_u64(w, "xoff", c->pfc[p].xoff);
		json_u64(w, "xon", c->pfc[p].xon);
		json_u64(w, "quanta", c->pfc[p].quanta);
		if (mbps)
			json_u64(w, "pause_ns", llround(pfc_pause_ns(c->pfc[p].quanta, mbps)));
		json_object_end(w);
	}
	json_array_end(w);
}

/* A ratio for JSON: the last bucket's bound has no number. */
static void ratio_json(struct json_writer *w, const char *key, double v)
{
	if (isinf(v))
		json_null(w, key);
	else
		json_double(w, key, v, 3);
}

void congestion_json(struct json_writer *w, const struct roceval_congestion *c, const struct roceval_settings *cfg)
{
	pfc_json(w, c, cfg->link_speed);
	json_object_begin(w, "cnp_reaction");
	json_u64(w, "window_ns", (__u64)cfg->cnp_reaction * 1000);
	json_u64(w, "count", reaction_count(c));
	json_double(w, "sum", (double)c->reaction_sum / ROCEVAL_REACTION_ONE, 3);
	ratio_json(w, "p50", reaction_quantile(c, 0.5));
	ratio_json(w, "p99", reaction_quantile(c, 0.99));
	json_array_begin(w, "buckets");
	for (int b = 0; b < ROCEVAL_REACTION_BUCKETS; b++) {
		if (!c->reaction[b])
			continue;
		json_object_begin(w, NULL);
		ratio_json(w, "le", reaction_le(b));
		json_u64(w, "count", c->reaction[b]);
		json_object_end(w);
	}
	json_array_end(w);
	json_u64(w, "within_window", c->reaction_within);
	json_u64(w, "unmeasured", c->reaction_unmeasured);
	json_u64(w, "unpaired", c->reaction_unpaired);
	json_object_end(w);
}

static const char *ratio_text(double v, char *buf, size_t len)
{
	if (isinf(v))
		snprintf(buf, len, "> 2");
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

/* One priority's line, or nothing when it saw no PFC frame. */
static bool pfc_line(const struct roceval_congestion *c, int p, __u32 mbps, char *buf, size_t len)
{
	const struct roceval_pfc_prio *q = &c->pfc[p];
	char t[32];
	int n;

	if (!q->frames)
		return false;
	n = snprintf(buf, len, "  pfc priority %d: %llu frames, %llu xoff, %llu xon, %llu quanta", p,
		     (unsigned long long)q->frames, (unsigned long long)q->xoff, (unsigned long long)q->xon,
		     (unsigned long long)q->quanta);
	if (mbps && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " (%s paused at %u Mb/s)",
			 latency_text(llround(pfc_pause_ns(q->quanta, mbps)), t, sizeof(t)), mbps);
	return true;
}

/* The reaction ratios' line, or nothing before any CNP was measured or missed. */
static bool reaction_line(const struct roceval_congestion *c, char *buf, size_t len)
{
	__u64 n = reaction_count(c);
	char p50[16], p99[16];

	if (!n && !c->reaction_within && !c->reaction_unmeasured && !c->reaction_unpaired)
		return false;
	snprintf(buf, len, "  cnp_reaction: %llu CNPs measured, rate after/before p50 <= %s, p99 <= %s, mean %.3g; "
			   "%llu within a window, %llu unmeasured, %llu unpaired",
		 (unsigned long long)n, ratio_text(reaction_quantile(c, 0.5), p50, sizeof(p50)),
		 ratio_text(reaction_quantile(c, 0.99), p99, sizeof(p99)),
		 n ? (double)c->reaction_sum / ROCEVAL_REACTION_ONE / n : 0.0,
		 (unsigned long long)c->reaction_within, (unsigned long long)c->reaction_unmeasured,
		 (unsigned long long)c->reaction_unpaired);
	return true;
}

void congestion_print(FILE *f, const struct roceval_congestion *c, const struct roceval_settings *cfg)
{
	char line[256];
	bool any = false;

	for (int p = 0; p < ROCEVAL_PFC_PRIOS; p++) {
		if (!pfc_line(c, p, cfg->link_speed, line, sizeof(line)))
			continue;
		fprintf(f, "%s%s\n", any ? "" : "\n", line);
		any = true;
	}
	if (reaction_line(c, line, sizeof(line)))
		fprintf(f, "%s%s\n", any ? "" : "\n", line);
}

void congestion_lines(const struct roceval_counters *cnt, const struct roceval_latency_hist *ce_cnp,
		      const struct roceval_congestion *c, const struct roceval_settings *cfg,
		      void (*line)(void *ctx, const char *text), void *ctx)
{
	unsigned long long n = 0;
	char text[256], p50[32], p99[32];

	for (int b = 0; ce_cnp && b < ROCEVAL_LAT_BUCKETS; b++)
		n += ce_cnp->bucket[b];
	snprintf(text, sizeof(text), "  congestion: cnp %llu, ecn_ce %llu, ce_unanswered %llu, cnp_gap %llu, pfc frames %llu",
		 (unsigned long long)cnt->rule[RULE_CNP], (unsigned long long)cnt->rule[RULE_ECN_CE],
		 (unsigned long long)cnt->rule[RULE_CE_UNANSWERED], (unsigned long long)cnt->rule[RULE_CNP_GAP],
		 (unsigned long long)cnt->total[TOTAL_PFC_FRAMES]);
	line(ctx, text);
	if (n) {
		snprintf(text, sizeof(text), "  ce_cnp latency: %llu answers, p50 <= %s, p99 <= %s", n,
			 latency_text(latency_quantile_ns(ce_cnp->bucket, 0.5), p50, sizeof(p50)),
			 latency_text(latency_quantile_ns(ce_cnp->bucket, 0.99), p99, sizeof(p99)));
		line(ctx, text);
	}
	if (c && reaction_line(c, text, sizeof(text)))
		line(ctx, text);
	for (int p = 0; c && p < ROCEVAL_PFC_PRIOS; p++)
		if (pfc_line(c, p, cfg->link_speed, text, sizeof(text)))
			line(ctx, text);
}
