/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_COMMON_H
#define ROCEVAL_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"

/*
 * Exit codes, the same for every command: 1 a runtime failure (no such
 * interface, not attached, no privileges, a failed read or write), 2 bad
 * usage (an unknown option, a bad value, a malformed file).
 */
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

extern int verbose;

void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Routes libbpf's messages through pr_warn/pr_debug. */
void libbpf_setup_logging(void);
/*
 * Fails with one clear line unless the effective capabilities cover what BPF
 * and XDP need (CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON), and with pins, what
 * opening root's pins takes from another uid (CAP_DAC_OVERRIDE).
 */
int require_caps(bool pins);

/*
 * Option and setting values: each returns true and stores the value only when
 * the whole string is one (numbers in C notation, at most max; booleans as
 * on/off, yes/no, true/false, 1/0, any case).
 */
bool parse_u32(const char *s, unsigned long max, __u32 *out);
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
bool parse_bool(const char *s, bool *out);

/*
 * Lock files that do not pile up: lockfile_lock() creates and flocks path
 * (and its directory), waiting or not; lockfile_unlock() removes it and lets
 * go.  A locker that finds the file it locked removed retries on a new one.
 * Returns the fd, -EWOULDBLOCK when held elsewhere and !wait, or -errno.
 */
int lockfile_lock(const char *path, bool wait);
void lockfile_unlock(const char *path, int fd);

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

/* Opcode names from the opcode table in roceval_proto.h, e.g. "RC SEND_ONLY". */
const char *roce_opcode_name(unsigned int opcode, char *buf, size_t len);
const char *roce_transport_name(unsigned int transport);

#endif
