/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Prometheus text exposition (format 0.0.4) of the counters, in the
 * node_exporter manner: one family per kind of thing, told apart by labels.
 *
 *   roceval_violations_total{interface, rule, severity}   one series per rule
 *   roceval_<family>_total{interface[, label]}            frame totals, as the
 *       totals table in roceval_rules.h maps them (e.g. icrc_frames{result})
 *   roceval_flows{interface}, roceval_flows_max{interface} flow table occupancy
 *   roceval_attached_info{interface, mode, prog_id}       1 per attachment
 *   roceval_attached_since_seconds{interface}
 *   roceval_latency_seconds{interface, kind}               histograms, log2 buckets
 *   roceval_pfc_frames_total{interface, priority, kind}    PFC pause frames, xoff or xon
 *   roceval_pfc_pause_quanta_total{interface, priority}    their pause times, in quanta
 *   roceval_pfc_pause_seconds_total{interface, priority}   the same as time, given link_speed
 *   roceval_cnp_reaction_ratio{interface}                  histogram: rate after a CNP over before
 *   roceval_mirror_sessions{interface}, roceval_mirror_sessions_max{interface}
 *       the mirror sessions listed and how many can be: the bound of the
 *       per-session series below, as the flow table's slots bound the flows
 *   roceval_mirror_session_{frames,bytes,lost_frames}_total{interface, source, encap, session}
 *   roceval_start_time_seconds, roceval_build_info{version}
 *
 * rate() drops the metric name, so series that differ only by name collide
 * in a query; keeping the rule a label is what lets sum by (severity)
 * (rate(roceval_violations_total[5m])) work.
 */
#ifndef ROCEVAL_PROM_H
#define ROCEVAL_PROM_H

#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "roceval.h"

struct mirror_entry;

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_iface {
	const char *ifname;
	const char *mode; /* "native", "generic", "tc" */
	const char *hook; /* "xdp", or "tc" where the XDP hook is another program's */
	__u32 prog_id;
	time_t attached_since;
	const struct roceval_counters *c; /* NULL: counters unreadable, no samples */
	long long flows, flows_max;	  /* flows in the flow table and its slots; -1: unknown */
	const __u64 *cm_rej;		  /* ROCEVAL_CM_REJ_SLOTS counts; NULL: unreadable, no samples */
	const struct roceval_latency_hist *latency; /* LAT__COUNT histograms; NULL: none */
	const struct roceval_congestion *cc;	    /* PFC and cnp_reaction; NULL: none */
	__u32 link_speed;			    /* Mb/s, 0 unknown: PFC pauses as quanta only */
	const struct mirror_entry *mirrors;	    /* the mirror sessions listed */
	int nmirrors;				    /* -1: the object has none, or they are unreadable */
};

/* Writes every family, each interface a sample in it; start_time is the exporter's. */
void prom_write(FILE *f, const struct prom_iface *ifs, int n, double start_time);
/* A label value with \\, \" and \n escaped, without the quotes. */
void prom_label_value(FILE *f, const char *v);

#endif
