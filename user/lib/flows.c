// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "common.h"
#include "cm.h"
#include "json.h"
#include "flows.h"
#include "latency.h"

static int by_violations_then_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	if (x->cold.violations != y->cold.violations)
		return x->cold.violations < y->cold.violations ? 1 : -1;
	if (x->val.packets != y->val.packets)
		return x->val.packets < y->val.packets ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int flows_collect(int flows_fd, int cold_fd, struct flow_entry **out)
{
	struct roceval_flow_key key, next;
	struct flow_entry *v = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(flows_fd, prev, &next)) {
		if (n == cap) {
			struct flow_entry *grown;

			cap = cap ? cap * 2 : 256;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			v = grown;
		}
		/* a flow evicted between the two reads is left out */
		if (!bpf_map_lookup_elem(flows_fd, &next, &v[n].val) &&
		    !bpf_map_lookup_elem(cold_fd, &v[n].val.cold, &v[n].cold)) {
			v[n].key = next;
			n++;
		}
		key = next;
		prev = &key;
	}
	if (errno != ENOENT) {
		int err = -errno;

		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_violations_then_packets);
	*out = v;
	return (int)n;
}

/* Orders flows by (family, source, destination), so the reverse direction can be searched for. */
static int by_addresses(const void *a, const void *b)
{
	const struct roceval_flow_key *x = &(*(const struct flow_entry *const *)a)->key;
	const struct roceval_flow_key *y = &(*(const struct flow_entry *const *)b)->key;
	int d = (int)x->ipv6 - (int)y->ipv6;

	if (!d)
		d = memcmp(x->saddr, y->saddr, sizeof(x->saddr));
	if (!d)
		d = memcmp(x->daddr, y->daddr, sizeof(x->daddr));
	return d;
}

const struct flow_entry *flows_icrc_bad_both_ways(const struct flow_entry *e, int n)
{
	const struct flow_entry **bad, *found = NULL;
	struct flow_entry want;
	const struct flow_entry *want_p = &want;
	int nbad = 0;

	if (n <= 0 || !(bad = calloc(n, sizeof(*bad))))
		return NULL;
	for (int i = 0; i < n; i++)
		if (e[i].cold.rule[RULE_ICRC])
			bad[nbad++] = &e[i];
	qsort(bad, nbad, sizeof(*bad), by_addresses);
	for (int i = 0; i < nbad && !found; i++) {
		want.key.ipv6 = bad[i]->key.ipv6;
		memcpy(want.key.saddr, bad[i]->key.daddr, sizeof(want.key.saddr));
		memcpy(want.key.daddr, bad[i]->key.saddr, sizeof(want.key.daddr));
		if (bsearch(&want_p, bad, nbad, sizeof(*bad), by_addresses))
			found = bad[i];
	}
	free(bad);
	return found;
}

static const char *addr_str(const __u8 *a, bool ipv6, char *buf, size_t len)
{
	return inet_ntop(ipv6 ? AF_INET6 : AF_INET, a, buf, len) ? buf : "?";
}

const char *flow_hosts(const struct roceval_flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s and %s", addr_str(k->saddr, k->ipv6, s, sizeof(s)),
		 addr_str(k->daddr, k->ipv6, d, sizeof(d)));
	return buf;
}

const char *flow_name(const struct roceval_flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s > %s qp 0x%x", addr_str(k->saddr, k->ipv6, s, sizeof(s)),
		 addr_str(k->daddr, k->ipv6, d, sizeof(d)), k->dqpn);
	return buf;
}

const char *flow_entry_name(const struct flow_entry *e, char *buf, size_t len)
{
	char svc[64];
	size_t n;

	flow_name(&e->key, buf, len);
	n = strlen(buf);
	if (e->has_cm && n < len)
		snprintf(buf + n, len - n, " [%s peer qp 0x%x]", cm_service_name(e->cm.service_id, svc, sizeof(svc)),
			 e->cm.peer_qpn);
	return buf;
}

unsigned long long flow_latency_count(const struct roceval_flow_cold *f)
{
	unsigned long long n = 0;

	for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++)
		n += f->latency[b];
	return n;
}

/* "latency": the answers to the flow's requests, when it had any. */
static void flow_latency_json(struct json_writer *w, const struct roceval_flow_cold *f)
{
	unsigned long long n = flow_latency_count(f);

	if (!n)
		return;
	json_object_begin(w, "latency");
	json_u64(w, "count", n);
	json_u64(w, "p50_ns", latency_quantile16_ns(f->latency, 0.5));
	json_u64(w, "p99_ns", latency_quantile16_ns(f->latency, 0.99));
	json_object_end(w);
}

void flow_json(struct json_writer *w, const struct flow_entry *e)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	json_object_begin(w, NULL);
	json_string(w, "src", addr_str(e->key.saddr, e->key.ipv6, s, sizeof(s)));
	json_string(w, "dst", addr_str(e->key.daddr, e->key.ipv6, d, sizeof(d)));
	json_u64(w, "dqpn", e->key.dqpn);
	json_u64(w, "packets", e->val.packets);
	json_u64(w, "bytes", e->val.bytes);
	json_u64(w, "violations", e->cold.violations);
	json_object_begin(w, "rules");
	for (int i = 0; i < RULE__COUNT; i++)
		if (e->cold.rule[i])
			json_u64(w, rule_ids[i], e->cold.rule[i]);
	json_object_end(w);
	flow_latency_json(w, &e->cold);
	if (e->has_cm) {
		char svc[64];

		json_string(w, "service", cm_service_name(e->cm.service_id, svc, sizeof(svc)));
		json_u64(w, "peer_qpn", e->cm.peer_qpn);
	}
	json_object_end(w);
}

void flows_json(struct json_writer *w, const struct flow_entry *e, int n, int top)
{
	json_array_begin(w, "flows");
	for (int i = 0; i < n && i < top; i++)
		flow_json(w, &e[i]);
	json_array_end(w);
}

void flows_print_table(FILE *f, const struct flow_entry *e, int n, int top)
{
	char name[128];

	if (!n)
		return;
	fprintf(f, "\n  %-52s %10s %12s %10s  %s\n", "flow", "packets", "bytes", "violations", "rules");
	for (int i = 0; i < n && i < top; i++) {
		bool first = true;

		fprintf(f, "  %-52s %10llu %12llu %10llu  ", flow_entry_name(&e[i], name, sizeof(name)),
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].cold.violations);
		for (int r = 0; r < RULE__COUNT; r++) {
			if (!e[i].cold.rule[r])
				continue;
			fprintf(f, "%s%s=%u", first ? "" : " ", rule_ids[r], e[i].cold.rule[r]);
			first = false;
		}
		fputc('\n', f);
	}
	if (n > top)
		fprintf(f, "  (%d more flow%s)\n", n - top, n - top == 1 ? "" : "s");
}

bool parse_flow_entries(const char *s, __u32 *out)
{
	return parse_u32(s, ROCEVAL_MAX_FLOW_ENTRIES, out) && *out > 0;
}
