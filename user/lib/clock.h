/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_CLOCK_H
#define ROCEVAL_CLOCK_H

#include <signal.h>

/*
 * Commands that run until interrupted: stop_on_signals() makes SIGINT,
 * SIGTERM and SIGHUP set stop_requested (and interrupt a nap()) instead of
 * killing the process, so it can clean up.
 */
extern volatile sig_atomic_t stop_requested;
void stop_on_signals(void);
/* Sleeps secs, returning early once stop_requested is set. */
void nap(double secs);
/* CLOCK_MONOTONIC in seconds, for intervals; CLOCK_BOOTTIME in ns, as the attach time is kept. */
double mono_now(void);
double boot_now_ns(void);

#endif
