/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The run-time settings, one typed row each.  The row is the setting's only
 * definition: its field in struct roceval_settings (roceval.h), its default,
 * what it accepts, how it is printed back, and its help.  The CLI options,
 * `roceval config`, the daemon's config file, `status` and the docs all come
 * from this table; a new setting is a row here and its use in BPF.
 *
 * Each row is one of five kinds, a macro the includer defines:
 *
 *   NUMBER(key, field, default, min, max, word, word_value, check, syntax, help, expect)
 *	a __u32 from min to max; `word` (or 0) is a name for word_value
 *	(latency_sample=flow)
 *   DURATION(key, field, unit_ns, default, max, syntax, help, expect)
 *	a __u32 count of unit_ns: a bare number is in that unit, or one of
 *	ns, us, ms, s with it (a whole number of units); printed in the
 *	largest of those that divides it
 *   WORDS(key, field, words, help, expect)
 *	a __u32 index into "first|second|...", the first the default
 *   SWITCH(key, field, default, help, expect)
 *	a __u32 0 or 1: on/off, yes/no, true/false, 1/0
 *   LIST(key, field, capacity, lo, hi, empty, hex, check, syntax, help, expect)
 *	up to `capacity` (even, so that no padding follows) comma-separated
 *	numbers from lo to hi in __u16 field[capacity], their count in
 *	__u32 n_<field>; the word `empty` for none, the default; printed in
 *	hex when `hex`
 *
 * `check` (or 0) names a userspace function `const char *check(__u32 v)`
 * that gives the reason a value in range is still refused, or NULL.
 * `expect` is what an error says after "KEY=VALUE: ".  `help` continues on
 * the next line of help output after SETTING_BREAK.
 */
#ifndef ROCEVAL_SETTINGS_H
#define ROCEVAL_SETTINGS_H

/* Where a description continues on the next line of help output. */
#define SETTING_BREAK "\n      "

#define ROCEVAL_DEFAULT_TRACE_RATE 100
#define ROCEVAL_DEFAULT_TRACE_BURST 100
#define ROCEVAL_DEFAULT_CONN_IDLE 600
#define ROCEVAL_MAX_PORTS 4  /* extra UDP ports validated besides 4791 */
#define ROCEVAL_MAX_PKEYS 16 /* allowed P_Key list */
/* latency_sample=flow: a flow's new request is timed when none of its timed ones awaits its answer */
#define ROCEVAL_LATENCY_PER_FLOW 0xFFFFFFFFu
/* reorder_window: the bitmap a request flow's window is kept in has a bit for the PSN past it */
#define ROCEVAL_REORDER_MAX 127
#define ROCEVAL_REORDER_DEFAULT 127
#define ROCEVAL_REORDER_TIME 1000 /* us */
/* cnp_dscp, pcp, cnp_pcp: any value passes */
#define ROCEVAL_SETTING_ANY 0xFFFFFFFFu
#define ROCEVAL_MAX_DSCPS 8 /* the dscp list */

#define ROCEVAL_SETTINGS(NUMBER, DURATION, WORDS, SWITCH, LIST)                                 \
	NUMBER(pmtu, pmtu, 0, 0, 4096, 0, 0, setting_pmtu_check, "0|256|512|1024|2048|4096",    \
	       "path MTU: FIRST/MIDDLE payloads must equal it, LAST/ONLY may not exceed it;"    \
	       SETTING_BREAK "0 (default) accepts any legal PMTU and limits LAST/ONLY to 4096", \
	       "must be 0, 256, 512, 1024, 2048 or 4096")                                        \
	LIST(pkeys, pkeys, ROCEVAL_MAX_PKEYS, 1, 0xFFFF, "any", 1, setting_pkey_check,          \
	     "any|P_KEY[,P_KEY...]",                                                            \
	     "allowed P_Keys (up to 16, compared on the low 15 bits); default any valid P_Key", \
	     "expected 'any' or up to 16 P_Keys 0x0001-0xffff")                                 \
	LIST(ports, ports, ROCEVAL_MAX_PORTS, 1, 0xFFFF, "none", 0, 0, "none|PORT[,PORT...]",   \
	     "UDP destination ports validated as RoCEv2 besides 4791 (up to 4); default none",  \
	     "expected 'none' or up to 4 UDP ports 1-65535")                                    \
	SWITCH(enforce, enforce, 0,                                                             \
	       "drop RoCEv2 frames that break an error-severity rule; default off (observe only)", \
	       "expected on or off")                                                            \
	WORDS(resv6, check_resv6, "ignore|check",                                               \
	      "count non-zero BTH Resv6 bits under 'reserved'; default ignore: the byte is"     \
	      SETTING_BREAK "outside the ICRC, so the path may rewrite it, and some NICs set bit 4" \
	      SETTING_BREAK "on every request",                                                 \
	      "expected ignore or check")                                                       \
	WORDS(rd, rd_strict, "dc|strict",                                                       \
	      "how RD-range opcodes (0x40-0x5F) are parsed; default dc: as mlx5 DC, the only"   \
	      SETTING_BREAK "RoCE traffic that uses them (a 20-byte header after the BTH, see" \
	      SETTING_BREAK "docs/protocol.md); strict: as IBA RD (RDETH, DETH on requests)",             \
	      "expected dc or strict")                                                          \
	NUMBER(icrc_sample, icrc_sample, 1, 1, 1000000000, "off", 0, 0, "N|off",                \
	       "check the ICRC on 1 of every N RoCEv2 frames per CPU; default 1 (all); off:"    \
	       SETTING_BREAK "none (a feed whose copies are not the wire's bytes sets it)",     \
	       "expected off, or a whole number from 1 (check every frame) up")                 \
	NUMBER(latency_sample, latency_sample, ROCEVAL_LATENCY_PER_FLOW, 1, 1000000000, "flow",  \
	       ROCEVAL_LATENCY_PER_FLOW, 0, "N|flow",                                           \
	       "which new reliable-connection requests the kernel's clock times (a clock read"  \
	       SETTING_BREAK "each, live); default flow: a flow's new request only when none of its" \
	       SETTING_BREAK "timed ones awaits its answer, as TCP samples its round trip (about one" \
	       SETTING_BREAK "a round trip per flow).  N: 1 of every N per CPU (1: all).  A request" \
	       SETTING_BREAK "not timed gives no latency, and its timeout retransmission no" \
	       SETTING_BREAK "retx_timeout_early judgement: under flow, only the flow's timed request" \
	       SETTING_BREAK "of each round trip is judged, so a window of requests resent early" \
	       SETTING_BREAK "counts once at most.  Replayed and NIC-stamped frames are always timed:" \
	       SETTING_BREAK "their time costs nothing",                                         \
	       "expected flow, or a whole number from 1 (time every request) up")               \
	NUMBER(reorder_window, reorder_window, ROCEVAL_REORDER_DEFAULT, 0, ROCEVAL_REORDER_MAX, 0, 0, 0, \
	       "N",                                                                             \
	       "request PSNs behind the newest within which a request never seen is taken for"  \
	       SETTING_BREAK "reordered (psn_reorder) rather than lost, and responses overtaking" \
	       SETTING_BREAK "each other are neither msn_regress nor opcode_sequence; a hole is a" \
	       SETTING_BREAK "psn_gap once it leaves it.  0: a request ahead of the expected PSN is" \
	       SETTING_BREAK "a psn_gap at once and one behind it a psn_duplicate; default 127 (one" \
	       SETTING_BREAK "bandwidth-delay product of 4 KB packets at 400 Gb/s: docs/sequence.md)", \
	       "expected a number of PSNs, 0-127")                                              \
	DURATION(reorder_time, reorder_time, 1000ull, ROCEVAL_REORDER_TIME, 1000000000u, "USECS", \
		 "a hole in the reorder window that opened longer ago than this is a loss: the" \
		 SETTING_BREAK "request that fills it is a retransmission, not reordered; 0 never;"  \
		 SETTING_BREAK "default 1000 us (reordering lasts microseconds, retransmission"      \
		 SETTING_BREAK "timers milliseconds).  A replay times it by the capture",             \
		 "expected microseconds (or a time with ns, us, ms or s), 0 to 1000 s")        \
	NUMBER(trace_rate, trace_rate, ROCEVAL_DEFAULT_TRACE_RATE, 1, 1000000, 0, 0, 0, "N",    \
	       "trace samples per second at most, per CPU (token bucket); default 100",         \
	       "expected samples per second, 1-1000000")                                        \
	NUMBER(trace_burst, trace_burst, ROCEVAL_DEFAULT_TRACE_BURST, 1, 1000000, 0, 0, 0, "N", \
	       "trace samples allowed in a burst, per CPU; default 100",                        \
	       "expected a whole number, 1-1000000")                                            \
	DURATION(conn_idle, conn_idle, 1000000000ull, ROCEVAL_DEFAULT_CONN_IDLE, 100u * 365 * 86400, \
		 "DURATION",                                                                    \
		 "a CM-learned connection whose two ends both idle this long expires, and its"  \
		 SETTING_BREAK "traffic is judged as if no CM was seen (conn_expired counts them);" \
		 SETTING_BREAK "whole seconds (90s; a bare number is s); 0 never; default 600s."  \
		 SETTING_BREAK "A replay ages them by the capture's time",                      \
		 "expected whole seconds (or a time with ns, us, ms or s), 0 (never) to 3153600000 s") \
	LIST(dscp, dscp, ROCEVAL_MAX_DSCPS, 0, 63, "any", 0, 0, "any|DSCP[,DSCP...]",          \
	     "the DSCP values RoCEv2 data may carry (up to 8): a data frame with another"       \
	     SETTING_BREAK "counts under 'dscp'; CNPs and RDMA CM MADs (QP1) are not data;"    \
	     SETTING_BREAK "default any",                                                      \
	     "expected 'any' or up to 8 DSCP values 0-63")                                     \
	NUMBER(cnp_dscp, cnp_dscp, ROCEVAL_SETTING_ANY, 0, 63, "any", ROCEVAL_SETTING_ANY, 0,  \
	       "any|DSCP",                                                                     \
	       "the DSCP RoCEv2 CNPs must carry (NVIDIA's default is 48): another counts"      \
	       SETTING_BREAK "under 'cnp_dscp'; default any",                                  \
	       "expected 'any' or a DSCP value 0-63")                                          \
	NUMBER(pcp, pcp, ROCEVAL_SETTING_ANY, 0, 7, "any", ROCEVAL_SETTING_ANY, 0, "any|PCP",  \
	       "the 802.1Q priority RoCE data must carry when tagged (the outer tag): a"       \
	       SETTING_BREAK "tagged data frame with another counts under 'pcp'; default any", \
	       "expected 'any' or a priority 0-7")                                             \
	NUMBER(cnp_pcp, cnp_pcp, ROCEVAL_SETTING_ANY, 0, 7, "any", ROCEVAL_SETTING_ANY, 0,     \
	       "any|PCP",                                                                      \
	       "the 802.1Q priority tagged CNPs must carry: another counts under 'cnp_pcp';"   \
	       SETTING_BREAK "default any",                                                    \
	       "expected 'any' or a priority 0-7")                                             \
	WORDS(ect, ect_required, "any|required",                                               \
	      "required: a RoCEv2 data frame that is Not-ECT (ECN 00), which a switch can"     \
	      SETTING_BREAK "only drop, never mark, counts under 'not_ect'; ECT(0), ECT(1) and" \
	      SETTING_BREAK "CE pass, and CNPs are exempt; default any",                       \
	      "expected any or required")                                                      \
	DURATION(cnp_gap, cnp_gap, 1000ull, 0, 60000000, "DURATION",                           \
		 "the least time a notification point leaves between two CNPs of one pacing"   \
		 SETTING_BREAK "scope (cnp_pacing): a CNP sooner after the last counts under"  \
		 SETTING_BREAK "'cnp_gap'; whole microseconds (4us, 50us, 1ms; a bare number is" \
		 SETTING_BREAK "us); 0 (default) off",                                         \
		 "expected whole microseconds, 0 (off) to 60s: 4us, 50us, 1ms")                \
	WORDS(cnp_pacing, cnp_pacing_ip, "qp|ip",                                              \
	      "the scope CNPs are paced in, for cnp_gap and cnp_delay: qp (default), per"      \
	      SETTING_BREAK "destination QP of the CNP; ip, per pair of IP addresses",         \
	      "expected qp or ip")                                                             \
	DURATION(cnp_delay, cnp_delay, 1000ull, 0, 60000000, "DURATION",                       \
		 "a CE-marked request or READ response must be answered within this time by"  \
		 SETTING_BREAK "a CNP from its destination back to its sender's QP: a pacing"  \
		 SETTING_BREAK "window of them left unanswered counts once under"               \
		 SETTING_BREAK "'ce_unanswered', and each answer's delay goes into the ce_cnp"  \
		 SETTING_BREAK "latency; whole microseconds; 0 (default) off",                 \
		 "expected whole microseconds, 0 (off) to 60s: 50us, 1ms")                     \
	DURATION(cnp_reaction, cnp_reaction, 1000ull, 0, 10000, "DURATION",                    \
		 "the window before and after each CNP over which the sending rate of the"     \
		 SETTING_BREAK "flow it slows is measured (the cnp_reaction histogram: after"  \
		 SETTING_BREAK "over before); whole microseconds; 0 (default) off: live it"    \
		 SETTING_BREAK "reads the clock on every request",                             \
		 "expected whole microseconds, 0 (off) to 10ms: 50us, 200us")                    \
	NUMBER(link_speed, link_speed, 0, 0, 1600000, "unknown", 0, 0, "MBITS|unknown",         \
	       "the link's speed in Mb/s as ethtool shows it (25000 for 25 Gb/s): PFC pause"   \
	       SETTING_BREAK "quanta (512 bit times each) are then also reported as time;"     \
	       SETTING_BREAK "default unknown: quanta only",                                   \
	       "expected unknown or a speed in Mb/s, 1-1600000")                               \
	LIST(vxlan_ports, vxlan_ports, ROCEVAL_MAX_PORTS, 1, 0xFFFF, "none", 0, 0,             \
	     "none|PORT[,PORT...]",                                                             \
	     "UDP ports whose VXLAN packets are mirrors to take apart besides 4789 (up to 4;"  \
	     SETTING_BREAK "Linux's own VXLAN port is 8472); default none",                     \
	     "expected 'none' or up to 4 UDP ports 1-65535")                                    \
	LIST(geneve_ports, geneve_ports, ROCEVAL_MAX_PORTS, 1, 0xFFFF, "none", 0, 0,           \
	     "none|PORT[,PORT...]",                                                             \
	     "UDP ports whose Geneve packets are mirrors to take apart (up to 4; Geneve's own"  \
	     SETTING_BREAK "is 6081); default none: Geneve also carries traffic that is no mirror", \
	     "expected 'none' or up to 4 UDP ports 1-65535")

/* The fields of struct roceval_settings, one or two a row. */
#define SETTING_FIELD_U32(key, field, ...) __u32 field;
#define SETTING_FIELD_LIST(key, field, capacity, ...) \
	__u32 n_##field;                              \
	__u16 field[capacity];
#define ROCEVAL_SETTINGS_FIELDS                                                              \
	ROCEVAL_SETTINGS(SETTING_FIELD_U32, SETTING_FIELD_U32, SETTING_FIELD_U32, SETTING_FIELD_U32, \
			 SETTING_FIELD_LIST)

#endif
