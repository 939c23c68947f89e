/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_SETTINGS_H
#define ROCEVAL_SETTINGS_H

#include <stdio.h>
#include <linux/types.h>
#include "roceval.h"

/* Where a description continues on the next line of help output. */
#define SETTING_BREAK "\n      "

/*
 * The run-time settings, one row each: the CLI options, `roceval config`,
 * the daemon's config file, `status` and the docs all come from this table.
 * X(key, value syntax, description)
 */
#define ROCEVAL_SETTINGS(X)                                                                     \
	X(pmtu, "0|256|512|1024|2048|4096",                                                     \
	  "path MTU: FIRST/MIDDLE payloads must equal it, LAST/ONLY may not exceed it;"         \
	  SETTING_BREAK "0 (default) accepts any legal PMTU and limits LAST/ONLY to 4096")      \
	X(pkeys, "any|P_KEY[,P_KEY...]",                                                        \
	  "allowed P_Keys (up to 16, compared on the low 15 bits); default any valid P_Key")    \
	X(ports, "none|PORT[,PORT...]",                                                         \
	  "UDP destination ports validated as RoCEv2 besides 4791 (up to 4); default none")     \
	X(enforce, "on|off",                                                                    \
	  "drop RoCEv2 frames that break an error-severity rule; default off (observe only)")   \
	X(resv6, "ignore|check",                                                                \
	  "count non-zero BTH Resv6 bits under 'reserved'; default ignore: the byte is"         \
	  SETTING_BREAK "outside the ICRC, so the path may rewrite it, and some NICs set bit 4" \
	  SETTING_BREAK "on every request")                                                     \
	X(rd, "dc|strict",                                                                     \
	  "how RD-range opcodes (0x40-0x5F) are parsed; default dc: as mlx5 DC, the only"      \
	  SETTING_BREAK "RoCE traffic that uses them (a 20-byte header after the BTH, see the"  \
	  SETTING_BREAK "README); strict: as IBA RD (RDETH, DETH on requests)")                \
	X(icrc_sample, "N",                                                                     \
	  "check the ICRC on 1 of every N RoCEv2 frames per CPU; default 1 (all)")              \
	X(latency_sample, "N|flow",                                                             \
	  "time 1 of every N new reliable-connection requests per CPU for the latencies"        \
	  SETTING_BREAK "where the kernel's clock times them (a clock read each, live); the"    \
	  SETTING_BREAK "others give no latency and no retx_timeout_early judgement; default 1" \
	  SETTING_BREAK "(all).  flow: time a flow's new request only when none of its timed"   \
	  SETTING_BREAK "ones awaits its answer, as TCP samples its round trip.  Replayed and"  \
	  SETTING_BREAK "NIC-stamped frames are always timed: their time costs nothing")        \
	X(trace_rate, "N",                                                                      \
	  "trace samples per second at most, per CPU (token bucket); default 100")              \
	X(trace_burst, "N", "trace samples allowed in a burst, per CPU; default 100")              \
	X(conn_idle, "SECONDS",                                                                 \
	  "a CM-learned connection whose two ends both idle this long expires, and its"         \
	  SETTING_BREAK "traffic is judged as if no CM was seen (conn_expired counts them);"    \
	  SETTING_BREAK "0 never; default 600.  A replay ages them by the capture's time")

/* Help text of the whole table, as command-line and as config-file assignments. */
#define SETTING_HELP_ARG(key, syntax, desc) "  " #key "=" syntax SETTING_BREAK desc "\n"
#define SETTING_HELP_CONF(key, syntax, desc) "  " #key " = " syntax SETTING_BREAK desc "\n"

void settings_defaults(struct roceval_settings *s);
/* 0, or -EINVAL with the reason in err. */
int settings_set(struct roceval_settings *s, const char *key, const char *value, char *err,
		 size_t errlen);
/* "key=value" form of settings_set(). */
int settings_assign(struct roceval_settings *s, const char *assignment, char *err, size_t errlen);
/* Writes the value of `key` as settings_set() would accept it. */
int settings_format(const struct roceval_settings *s, const char *key, char *buf, size_t len);
void settings_print(FILE *f, const struct roceval_settings *s, const char *indent);
struct json_writer;
/* key: {every setting: its value as settings_format() writes it}. */
void settings_json(struct json_writer *w, const char *key, const struct roceval_settings *s);
void settings_usage(FILE *f);
extern const char *const settings_keys[];

#endif
