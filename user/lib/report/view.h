/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * roceval top: a screen of counters, rates, the rules that fire and the
 * flows that break them, for live attachments, redrawn until interrupted.
 */
#ifndef ROCEVAL_TOP_H
#define ROCEVAL_TOP_H

#include <stdbool.h>
#include <linux/types.h>

#include "live/live.h"

enum top_sort { TOP_SORT_RATE, TOP_SORT_COUNT, TOP_SORT_NAME, TOP_SORT__COUNT };

struct top_view {
	enum top_sort sort;
	bool paused;
	double delay;  /* seconds between refreshes */
	int flow_rows; /* of each flow list */
};

/* "rate", "count" or "name"; false for anything else. */
bool top_sort_parse(const char *s, enum top_sort *out);
/*
 * Shows li[0..n) every view->delay seconds: full screen with keys when stdin
 * and stdout are a terminal, else each refresh printed after the last.
 * Stops after `iterations` refreshes (0: none), on 'q' or a signal; the exit
 * status, the reason printed.
 */
int top_run(const struct live_iface *li, int n, struct top_view *view, __u32 iterations);

#endif
