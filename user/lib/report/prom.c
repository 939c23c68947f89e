// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>

#include "cm.h"
#include "counters.h"
#include "congestion.h"
#include "latency.h"
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

/* One histogram per interface and latency kind; its buckets are cumulative, as Prometheus wants. */
static void write_latency(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_latency_seconds", "histogram",
	       "latencies between requests and their answers on reliable connections, by kind "
	       "(ack, read, nak_retx, rnr_retry, ce_cnp: see 'roceval rules'), timed by the frames' own clock");
	for (int i = 0; i < n; i++) {
		for (int k = 0; ifs[i].latency && k < LAT__COUNT; k++) {
			const struct roceval_latency_hist *h = &ifs[i].latency[k];
			unsigned long long run = 0;

			for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++) {
				run += h->bucket[b];
				sample_start(f, "roceval_latency_seconds_bucket", ifs[i].ifname);
				fprintf(f, ",kind=\"%s\",le=\"%.12g\"} %llu\n", latency_ids[k], latency_le_ns(b) / 1e9, run);
			}
			sample_start(f, "roceval_latency_seconds_bucket", ifs[i].ifname);
			fprintf(f, ",kind=\"%s\",le=\"+Inf\"} %llu\n", latency_ids[k], run);
			sample_start(f, "roceval_latency_seconds_sum", ifs[i].ifname);
			fprintf(f, ",kind=\"%s\"} %.9f\n", latency_ids[k], h->sum_ns / 1e9);
			sample_start(f, "roceval_latency_seconds_count", ifs[i].ifname);
			fprintf(f, ",kind=\"%s\"} %llu\n", latency_ids[k], run);
		}
	}
}

/* The psn_reorder packets by distance in PSNs, one histogram per interface, cumulative buckets. */
static void write_reorder(FILE *f, const struct prom_iface *ifs, int n)
{
	family(f, "roceval_reorder_distance_psns", "histogram",
	       "how many PSNs behind the newest of their flow reordered packets came (psn_reorder), "
	       "within reorder_window");
	for (int i = 0; i < n; i++) {
		unsigned long long run = 0;

		if (!ifs[i].c)
			continue;
		for (int b = 0; b < ROCEVAL_REORDER_BUCKETS; b++) {
			run += ifs[i].c->reorder[b];
			sample_start(f, "roceval_reorder_distance_psns_bucket", ifs[i].ifname);
			fprintf(f, ",le=\"%u\"} %llu\n", reorder_le(b), run);
		}
		sample_start(f, "roceval_reorder_distance_psns_bucket", ifs[i].ifname);
		fprintf(f, ",le=\"+Inf\"} %llu\n", run);
		sample_start(f, "roceval_reorder_distance_psns_sum", ifs[i].ifname);
		fprintf(f, "} %llu\n", (unsigned long long)ifs[i].c->reorder_sum);
		sample_start(f, "roceval_reorder_distance_psns_count", ifs[i].ifname);
		fprintf(f, "} %llu\n", run);
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
		unsigned long long run = 0;

		for (int b = 0; ifs[i].cc && b < ROCEVAL_REACTION_BUCKETS; b++) {
			run += ifs[i].cc->reaction[b];
			sample_start(f, "roceval_cnp_reaction_ratio_bucket", ifs[i].ifname);
			if (b + 1 < ROCEVAL_REACTION_BUCKETS)
				fprintf(f, ",le=\"%g\"} %llu\n", reaction_le(b), run);
			else
				fprintf(f, ",le=\"+Inf\"} %llu\n", run);
		}
		if (!ifs[i].cc)
			continue;
		sample_start(f, "roceval_cnp_reaction_ratio_sum", ifs[i].ifname);
		fprintf(f, "} %.6f\n", (double)ifs[i].cc->reaction_sum / ROCEVAL_REACTION_ONE);
		sample_start(f, "roceval_cnp_reaction_ratio_count", ifs[i].ifname);
		fprintf(f, "} %llu\n", run);
	}
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
}
