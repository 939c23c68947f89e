/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A trace's slot on a live attachment.  Sampling is off in the program
 * unless settings.trace_on has a bit set.  Each trace takes a free slot of
 * the interface (ROCEVAL_MAX_TRACES), puts its filters and a ring buffer of
 * its own there and sets its bit, for as long as it runs; several traces on
 * one interface each get what matches their filters.  A killed trace
 * (SIGKILL) leaves its slot taken; the next one to arm notices its owner is
 * gone and frees it.
 */
#ifndef ROCEVAL_TRACE_SLOT_H
#define ROCEVAL_TRACE_SLOT_H

#include <stdbool.h>
#include <linux/types.h>

#include "live/live.h"
#include "roceval.h"

struct trace_slot {
	__u32 slot;	/* ours in trace_filters and trace_rbs */
	int rb_fd;	/* our ring buffer, which trace_arm() creates */
	__u64 skipped0; /* trace_skipped when the trace started */
	bool armed;	/* the slot is ours and must be given back */
};

/* Takes a slot of li for the filters `want`, with a ring buffer; 0 or -errno, the reason printed. */
int trace_arm(const struct live_iface *li, struct trace_slot *ts, const struct roceval_trace_filter *want);
/* Gives the slot back, if taken; the other traces on the interface go on. */
int trace_disarm(const struct live_iface *li, struct trace_slot *ts);

#endif
