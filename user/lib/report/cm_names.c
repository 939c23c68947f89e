// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Names of RDMA CM values, apart from cm.c so that code without BPF maps (the exporter) can use them. */
#include <stdio.h>
#include <linux/types.h>
#include "cm.h"

const char *cm_rej_reason_name(unsigned int slot, char *buf, size_t len)
{
	switch (slot) {
#define CM_REJ_CASE(c, id) \
	case c:            \
		return id;
		ROCEVAL_CM_REJ_REASONS(CM_REJ_CASE)
#undef CM_REJ_CASE
	}
	snprintf(buf, len, "reason_%u%s", slot, slot == ROCEVAL_CM_REJ_SLOTS - 1 ? "_or_more" : "");
	return buf;
}
