/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Prometheus text exposition (format 0.0.4) of the counters.
 *
 * One counter family per rule, roceval_rule_<id>_total{interface, severity},
 * rather than one roceval_violations_total{rule=...}: each family then carries
 * its rule's own HELP text from the rule table, which is what someone reading
 * the metric needs, and an alert on one rule names one metric.  The rule ids
 * are a closed public set, so this adds no cardinality; the constant severity
 * label lets `sum by (severity)` over {__name__=~"roceval_rule_.+_total"}
 * aggregate them.  Frame totals are roceval_<id>_total{interface}.
 */
#ifndef ROCEVAL_PROM_H
#define ROCEVAL_PROM_H

#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "roceval.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_iface {
	const char *ifname;
	const char *mode; /* "native", "generic", "tc" */
	const char *hook; /* "xdp", or "tc" where the XDP hook is another program's */
	__u32 prog_id;
	time_t attached_since;
	const struct roceval_counters *c; /* NULL: counters unreadable, no samples */
};

/* Writes every family, each interface a sample in it. */
void prom_write(FILE *f, const struct prom_iface *ifs, int n);
/* A label value with \\, \" and \n escaped, without the quotes. */
void prom_label_value(FILE *f, const char *v);

#endif
