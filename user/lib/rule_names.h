/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_RULE_NAMES_H
#define ROCEVAL_RULE_NAMES_H

#include <linux/types.h>

#include "roceval.h"

/* Rule and total names, from the tables in roceval_rules.h. */
extern const char *const rule_ids[RULE__COUNT];
extern const char *const rule_descs[RULE__COUNT];
extern const char *const rule_refs[RULE__COUNT];
extern const int rule_sevs[RULE__COUNT];
extern const char *const total_ids[TOTAL__COUNT];
extern const char *const total_descs[TOTAL__COUNT];
/* Prometheus family (roceval_<metric>_total, "" = not exported) and label of each total. */
extern const char *const total_metrics[TOTAL__COUNT];
extern const char *const total_labels[TOTAL__COUNT];
const char *severity_name(int sev);
int rule_lookup(const char *id);

#endif
