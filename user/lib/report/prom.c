// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <math.h>
#include <string.h>

#include "cm.h"
#include "counters.h"
#include "congestion.h"
#include "latency.h"
#include "mirrors.h"
#include "prom.h"
#include "rule_names.h"
#include "version.h"

void prom_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	/* HELP text escapes only backslash and newline; ours has neither. */
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{interface="..." and the caller closes the braces after any further labels. */
static void sample_start(FILE *f, const char *name, const char *ifname)
{
	fprintf(f, "%s{interface=\"", name);
	prom_label_value(f, ifname);
	fputc('"', f);
}

#define FAMILY_ROW(name, help) { name, help },
static const struct {
	const char *name, *help;
} families[] = { ROCEVAL_METRIC_FAMILIES(FAMILY_ROW) };

/* What runs where: the build, the exporter, each attachment and its flow table. */
static void write_info(FILE *f, const struct prom_iface *ifs, int n, double start_time)
{
	family(f, "roceval_build_info", "gauge", "roceval version; always 1");
	fprintf(f, "roceval_build_info{version=\"%s\"} 1\n", ROCEVAL_VERSION);
	family(f, "roceval_start_time_seconds", "gauge",
	       "when this exporter started, in seconds since the epoch");
	fprintf(f, "roceval_start_time_seconds %.3f\n", start_time);

	family(f, "roceval_attached_info", "gauge",
	       "the roceval program attached to the interface (or a feed): mode, hook (xdp, tc or feed) and program id; always 1");
	for (int i = 0; i < n; i++) {
		sample_start(f, "roceval_attached_info", ifs[i].ifname);
		fputs(",mode=\"", f);
		prom_label_value(f, ifs[i].mode);
		fputs("\",hook=\"", f);
		prom_label_value(f, ifs[i].hook);
		fprintf(f, "\",prog_id=\"%u\"} 1\n", ifs[i].prog_id);
	}
	family(f, "roceval_attached_since_seconds", "gauge",
	       "when the program was attached to the interface, in seconds since the epoch");
	for (int i = 0; i < n; i++) {
		sample_start(f, "roceval_attached_since_seconds", ifs[i].ifname);
		fprintf(f, "} %lld\n", (long long)ifs[i].attached_since);
	}
	family(f, "roceval_flows", "gauge", "flows (source, destination, DestQP) in the flow table");
	for (int i = 0; i < n; i++) {
		if (ifs[i].flows < 0)
			continue;
		sample_start(f, "roceval_flows", ifs[i].ifname);
		fprintf(f, "} %lld\n", ifs[i].flows);
	}
	family(f, "roceval_flows_max", "gauge",
	       "slots in the flow table; a new flow whose two sets are full evicts the oldest flow of one");
	for (int i = 0; i < n; i++) {
		if (ifs[i].flows_max < 0)
			continue;
		sample_start(f, "roceval_flows_max", ifs[i].ifname);
		fprintf(f, "} %lld\n", ifs[i].flows_max);
	}
}

/* One family per metric of the totals table, with its labels. */
static void write_totals(FILE *f, const struct prom_iface *ifs, int n)
{
	char name[96];

	for (size_t fam = 0; fam < sizeof(families) / sizeof(families[0]); fam++) {
		snprintf(name, sizeof(name), "roceval_%s_total", families[fam].name);
		family(f, name, "counter", families[fam].help);
		for (int t = 0; t < TOTAL__COUNT; t++) {
			if (strcmp(total_metrics[t], families[fam].name))
				continue;
			for (int i = 0; i < n; i++) {
				if (!ifs[i].c)
					continue;
				sample_start(f, name, ifs[i].ifname);
				fprintf(f, "%s%s} %llu\n", *total_labels[t] ? "," : "", total_labels[t],
					(unsigned long long)ifs[i].c->total[t]);
			}
		}
	}
}

static void write_cm_rejections(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_cm_rejections_total", "counter",
	       "RDMA CM connection rejections (REJ) by reason, as IBA 12.6 numbers them; "
	       "a reason appears once it has been seen");
	for (int i = 0; i < n; i++) {
		char buf[32];

		for (unsigned int r = 0; ifs[i].cm_rej && r < ROCEVAL_CM_REJ_SLOTS; r++) {
			if (!ifs[i].cm_rej[r])
				continue;
			sample_start(f, "roceval_cm_rejections_total", ifs[i].ifname);
			fprintf(f, ",reason=\"%s\"} %llu\n", cm_rej_reason_name(r, buf, sizeof(buf)),
				(unsigned long long)ifs[i].cm_rej[r]);
		}
	}
}

static void write_violations(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_violations_total", "counter",
	       "frames that broke the rule (info severity: telemetry such as CNPs and NAKs); "
	       "'roceval rules' describes each");
	for (int r = 0; r < RULE__COUNT; r++) {
		for (int i = 0; i < n; i++) {
			if (!ifs[i].c)
				continue;
			sample_start(f, "roceval_violations_total", ifs[i].ifname);
			fprintf(f, ",rule=\"%s\",severity=\"%s\"} %llu\n", rule_ids[r],
				severity_name(rule_sevs[r]), (unsigned long long)ifs[i].c->rule[r]);
		}
	}
}

/*
 * A histogram's series for one interface: its buckets cumulative, as Prometheus
 * wants them, then +Inf, _sum and _count. A bucket whose bound is infinite is
 * the +Inf bucket itself; otherwise +Inf repeats the last bucket's count.
 */
struct hist {
	const char *name; /* the family; the series add _bucket, _sum and _count */
	const char *kind; /* the kind label's value, or NULL for none */
	const __u64 *bucket;
	int buckets;
	double (*le)(unsigned int b); /* bucket b's bound, in the family's unit */
	double sum;
	int sum_decimals;
};

static void hist_sample(FILE *f, const struct hist *h, const char *ifname, const char *suffix)
{
	char name[96];

	snprintf(name, sizeof(name), "%s_%s", h->name, suffix);
	sample_start(f, name, ifname);
	if (h->kind)
		fprintf(f, ",kind=\"%s\"", h->kind);
}

static void write_hist(FILE *f, const struct hist *h, const char *ifname)
{
	unsigned long long run = 0;

	for (int b = 0; b < h->buckets; b++) {
		run += h->bucket[b];
		if (isinf(h->le(b)))
			continue;
		hist_sample(f, h, ifname, "bucket");
		fprintf(f, ",le=\"%.12g\"} %llu\n", h->le(b), run);
	}
	hist_sample(f, h, ifname, "bucket");
	fprintf(f, ",le=\"+Inf\"} %llu\n", run);
	hist_sample(f, h, ifname, "sum");
	fprintf(f, "} %.*f\n", h->sum_decimals, h->sum);
	hist_sample(f, h, ifname, "count");
	fprintf(f, "} %llu\n", run);
}

static double latency_le_s(unsigned int b)
{
	return latency_le_ns(b) / 1e9;
}

static double reorder_le_psns(unsigned int b)
{
	return reorder_le(b);
}

/* One histogram per interface and latency kind. */
static void write_latency(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_latency_seconds", "histogram",
	       "latencies between requests and their answers on reliable connections, by kind "
	       "(ack, read, nak_retx, rnr_retry, ce_cnp: see 'roceval rules'), timed by the frames' own clock");
	for (int i = 0; i < n; i++) {
		for (int k = 0; ifs[i].latency && k < LAT__COUNT; k++) {
			const struct roceval_latency_hist *l = &ifs[i].latency[k];
			struct hist h = { "roceval_latency_seconds", latency_ids[k], l->bucket,
					  ROCEVAL_LAT_BUCKETS, latency_le_s, l->sum_ns / 1e9, 9 };

			write_hist(f, &h, ifs[i].ifname);
		}
	}
}

/* The psn_reorder packets by distance in PSNs, one histogram per interface. */
static void write_reorder(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_reorder_distance_psns", "histogram",
	       "how many PSNs behind the newest of their flow reordered packets came (psn_reorder), "
	       "within reorder_window");
	for (int i = 0; i < n; i++) {
		const struct roceval_counters *c = ifs[i].c;

		if (c)
			write_hist(f, &(struct hist){ "roceval_reorder_distance_psns", NULL, c->reorder,
						      ROCEVAL_REORDER_BUCKETS, reorder_le_psns,
						      c->reorder_sum, 0 }, ifs[i].ifname);
	}
}

/* Per interface and priority, every priority always, so that a query finds a series before the first pause. */
static void write_pfc(FILE *f, const struct prom_iface *ifs, int n)
{
	static const char *const kinds[] = { "xoff", "xon" };

	family(f, "roceval_pfc_frames_total", "counter",
	       "PFC pause frames naming the priority, by kind: xoff (a pause time above 0) or xon (0: resume)");
	for (int i = 0; i < n; i++)
		for (int p = 0; ifs[i].cc && p < ROCEVAL_PFC_PRIOS; p++)
			for (int k = 0; k < 2; k++) {
				sample_start(f, "roceval_pfc_frames_total", ifs[i].ifname);
				fprintf(f, ",priority=\"%d\",kind=\"%s\"} %llu\n", p, kinds[k],
					(unsigned long long)(k ? ifs[i].cc->pfc[p].xon : ifs[i].cc->pfc[p].xoff));
			}
	family(f, "roceval_pfc_pause_quanta_total", "counter",
	       "pause times PFC frames asked for on the priority, in quanta of 512 bit times");
	for (int i = 0; i < n; i++)
		for (int p = 0; ifs[i].cc && p < ROCEVAL_PFC_PRIOS; p++) {
			sample_start(f, "roceval_pfc_pause_quanta_total", ifs[i].ifname);
			fprintf(f, ",priority=\"%d\"} %llu\n", p, (unsigned long long)ifs[i].cc->pfc[p].quanta);
		}
	family(f, "roceval_pfc_pause_seconds_total", "counter",
	       "the same pause times in seconds, at the link_speed setting (absent while it is unknown)");
	for (int i = 0; i < n; i++)
		for (int p = 0; ifs[i].cc && ifs[i].link_speed && p < ROCEVAL_PFC_PRIOS; p++) {
			sample_start(f, "roceval_pfc_pause_seconds_total", ifs[i].ifname);
			fprintf(f, ",priority=\"%d\"} %.9f\n", p,
				pfc_pause_ns(ifs[i].cc->pfc[p].quanta, ifs[i].link_speed) / 1e9);
		}
}

static void write_reaction(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_cnp_reaction_ratio", "histogram",
	       "a flow's sending rate in the cnp_reaction window after a CNP over its rate before it "
	       "(near 1: a sender that ignores CNPs)");
	for (int i = 0; i < n; i++) {
		const struct roceval_congestion *cc = ifs[i].cc;

		if (cc)
			write_hist(f, &(struct hist){ "roceval_cnp_reaction_ratio", NULL, cc->reaction,
						      ROCEVAL_REACTION_BUCKETS, reaction_le,
						      (double)cc->reaction_sum / ROCEVAL_REACTION_ONE, 6 },
				   ifs[i].ifname);
	}
}

static __u64 session_frames(const struct mirror_entry *e)
{
	return e->frames;
}

static __u64 session_bytes(const struct mirror_entry *e)
{
	return e->bytes;
}

static __u64 session_lost(const struct mirror_entry *e)
{
	return e->lost;
}

/* The mirror session series of one family: name{interface,source,encap,session} value. */
static void write_mirror_family(FILE *f, const struct prom_iface *ifs, int n, const char *name, const char *help,
				__u64 (*value)(const struct mirror_entry *e))
{
	char src[INET6_ADDRSTRLEN];

	family(f, name, "counter", help);
	for (int i = 0; i < n; i++) {
		for (int s = 0; s < ifs[i].nmirrors; s++) {
			const struct mirror_entry *e = &ifs[i].mirrors[s];

			if (!inet_ntop(e->key.ipv6 ? AF_INET6 : AF_INET, e->key.source, src, sizeof(src)))
				snprintf(src, sizeof(src), "?");
			sample_start(f, name, ifs[i].ifname);
			fprintf(f, ",source=\"%s\",encap=\"%s\",session=\"%u\"} %llu\n", src,
				mirror_encap_id(e->key.encap), e->key.session,
				(unsigned long long)value(e));
		}
	}
}

/*
 * Per mirror session, as many series as sessions are listed: at most
 * ROCEVAL_MIRROR_SESSIONS an interface, and a listed session stays.
 */
static void write_mirrors(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_mirror_sessions", "gauge",
	       "mirror sessions (outer source, encapsulation, session ID, VNI or GRE key) listed");
	for (int i = 0; i < n; i++) {
		if (ifs[i].nmirrors < 0)
			continue;
		sample_start(f, "roceval_mirror_sessions", ifs[i].ifname);
		fprintf(f, "} %d\n", ifs[i].nmirrors);
	}
	family(f, "roceval_mirror_sessions_max", "gauge",
	       "mirror sessions that can be listed; the frames of more count as mirror_unlisted_frames");
	for (int i = 0; i < n; i++) {
		if (ifs[i].nmirrors < 0)
			continue;
		sample_start(f, "roceval_mirror_sessions_max", ifs[i].ifname);
		fprintf(f, "} %d\n", ROCEVAL_MIRROR_SESSIONS);
	}
	write_mirror_family(f, ifs, n, "roceval_mirror_session_frames_total",
			    "frames the mirror session brought, taken out of their encapsulation",
			    session_frames);
	write_mirror_family(f, ifs, n, "roceval_mirror_session_bytes_total",
			    "bytes of the mirror session's frames, their encapsulation included",
			    session_bytes);
	write_mirror_family(f, ifs, n, "roceval_mirror_session_lost_frames_total",
			    "frames the mirror session's sequence numbers skipped: lost before this host "
			    "(0 for a session whose numbers never advance)",
			    session_lost);
}

void prom_write(FILE *f, const struct prom_iface *ifs, int n, double start_time)
{
	write_info(f, ifs, n, start_time);
	write_totals(f, ifs, n);
	write_cm_rejections(f, ifs, n);
	write_violations(f, ifs, n);
	write_latency(f, ifs, n);
	write_reorder(f, ifs, n);
	write_pfc(f, ifs, n);
	write_reaction(f, ifs, n);
	write_mirrors(f, ifs, n);
}
