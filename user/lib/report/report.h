/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What status and stats print about a live attachment, as text for people
 * and as JSON (through the json_writer) for programs; and, for the rest of
 * roceval, everything report/ offers: the counters, flows, latencies and
 * connections read from the maps, the exporter, trace samples, top's view.
 */
#ifndef ROCEVAL_REPORT_H
#define ROCEVAL_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "live/live.h"
#include "roceval.h"

#include "cm.h"
#include "congestion.h"
#include "counters.h"
#include "flows.h"
#include "latency.h"
#include "mirrors.h"
#include "prom.h"
#include "sample.h"
#include "trace_slot.h"
#include "view.h"

struct json_writer;

/*
 * Opens what status shows: IFACE, this namespace's attachments (stale ones
 * too), or with all every namespace's.  Returns the count opened or -1,
 * the reason printed.
 */
int status_open(const char *ifname, bool all, struct live_iface *li, int max);
/*
 * One attachment: hook, mode, program, attach time, stale or not, enforce,
 * frames, memory and settings.  Text (first: no blank line before it; all:
 * name its namespace) or, with w, one object of the status array.
 */
int status_report(const struct live_iface *li, struct json_writer *w, bool first, bool all);

/* One stats report: counters and rates over `window` seconds, at most `top` flows. */
struct stats_report {
	const struct roceval_counters *c;
	const double *total_rates, *rule_rates;
	double window;
	bool since_attach; /* the rates are averages since attach */
	__u32 top;
};

/* Text, or with json one object on one line. */
int stats_report(const struct live_iface *li, const struct stats_report *r, bool json);

#endif
