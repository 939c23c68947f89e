// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <string.h>

#include "rule_names.h"

#define RULE_FIELD_ID(e, id, sev, ref, desc) [RULE_##e] = id,
#define RULE_FIELD_DESC(e, id, sev, ref, desc) [RULE_##e] = desc,
#define RULE_FIELD_REF(e, id, sev, ref, desc) [RULE_##e] = ref,
#define RULE_FIELD_SEV(e, id, sev, ref, desc) [RULE_##e] = sev,
#define TOTAL_FIELD_ID(e, id, metric, label, desc) [TOTAL_##e] = id,
#define TOTAL_FIELD_METRIC(e, id, metric, label, desc) [TOTAL_##e] = metric,
#define TOTAL_FIELD_LABEL(e, id, metric, label, desc) [TOTAL_##e] = label,
#define TOTAL_FIELD_DESC(e, id, metric, label, desc) [TOTAL_##e] = desc,

const char *const rule_ids[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_ID) };
const char *const rule_descs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_DESC) };
const char *const rule_refs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_REF) };
const int rule_sevs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_SEV) };
const char *const total_ids[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_ID) };
const char *const total_metrics[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_METRIC) };
const char *const total_labels[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_LABEL) };
const char *const total_descs[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_DESC) };

const char *severity_name(int sev)
{
	static const char *const names[] = { [SEV_INFO] = "info", [SEV_WARNING] = "warning",
					     [SEV_ERROR] = "error" };

	return sev >= 0 && sev <= SEV_ERROR ? names[sev] : "?";
}

int rule_lookup(const char *id)
{
	for (int i = 0; i < RULE__COUNT; i++)
		if (!strcmp(rule_ids[i], id))
			return i;
	return -1;
}
