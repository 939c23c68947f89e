/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_FLOWS_H
#define ROCEVAL_FLOWS_H

#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"
#include "roceval_cm.h"

struct flow_entry {
	struct roceval_flow val;
	struct roceval_flow_cold cold; /* its counters and latencies (flow_cold[val.cold]) */
	struct roceval_cm_end cm; /* the connection end this flow goes to, if CM announced it */
	bool has_cm;
};

/*
 * Reads the whole flow table and each flow's cold part, sorted by
 * violations then packets (most first).  Returns the number of flows (*out
 * to be freed) or -errno.
 */
int flows_collect(int flows_fd, int sets_fd, int cold_fd, struct flow_entry **out);
/* Every set of the flow table (*out to be freed): their count, or -errno. */
int flow_sets_read(int sets_fd, struct roceval_flow_set **out);
/* The flow of `key`, found where the program would look for it (`seed`: the table's hash key). */
int flow_lookup(int flows_fd, int sets_fd, __u64 seed, const struct roceval_flow_key *key,
		struct roceval_flow *out);
struct json_writer;

/* Samples in the flow's latency histogram: its answers timed, until the first halving (roceval.h). */
unsigned long long flow_latency_count(const struct roceval_flow_cold *f);
/*
 * An object: "src", "dst", "dqpn", "packets", "bytes", "violations", "rules":
 * {non-zero ids}; "latency": {"count", "p50_ns", "p99_ns"} of the answers to
 * its requests when there were any; and for a CM-learned flow "service" and
 * "peer_qpn".
 */
void flow_json(struct json_writer *w, const struct flow_entry *e);
/* "flows": [...] with at most `top` flows, into the object being written. */
void flows_json(struct json_writer *w, const struct flow_entry *e, int n, int top);
void flows_print_table(FILE *f, const struct flow_entry *e, int n, int top);
/*
 * A flow (into e[]) between two hosts whose frames failed the ICRC in both
 * directions, or NULL when there is none.
 */
const struct flow_entry *flows_icrc_bad_both_ways(const struct flow_entry *e, int n);
/* "192.0.2.1 and 192.0.2.2": the two hosts of a flow */
const char *flow_hosts(const struct roceval_flow_key *k, char *buf, size_t len);
/* "192.0.2.1 > 192.0.2.2 qp 0x45" */
const char *flow_name(const struct roceval_flow_key *k, char *buf, size_t len);
/* flow_name(), then for a CM-learned flow " [tcp/4420 (NVMe-oF) peer qp 0x8d]" */
const char *flow_entry_name(const struct flow_entry *e, char *buf, size_t len);
/* Room for the longest flow_entry_name(): two IPv6 addresses and a CM service. */
#define FLOW_NAME_MAX 192
/* The flow column's width in tables: past it come the numbers, each at its place. */
#define FLOW_NAME_W 52
/*
 * How much of a flow's name goes on a line `width` columns wide: all of it
 * when it fits, else up to a space, the CM annotation ("[service peer qp N]")
 * starting a line of its own when what comes before it fits.  A name longer
 * than its column would push the numbers after it out of line.  A word wider
 * than the column (none of an address, QP or service is) is cut.
 */
int flow_name_line(const char *s, int width);
#endif
