// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "common.h"
#include "json.h"
#include "flows.h"

#ifndef BPF_F_LOCK
#define BPF_F_LOCK 4
#endif

static int by_violations_then_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	if (x->val.violations != y->val.violations)
		return x->val.violations < y->val.violations ? 1 : -1;
	if (x->val.packets != y->val.packets)
		return x->val.packets < y->val.packets ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

int flows_collect(int flows_fd, struct flow_entry **out)
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
		/* BPF_F_LOCK copies the value under its spin lock: no torn counters. */
		if (!bpf_map_lookup_elem_flags(flows_fd, &next, &v[n].val, BPF_F_LOCK)) {
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

static const char *addr_str(const __u8 *a, bool ipv6, char *buf, size_t len)
{
	return inet_ntop(ipv6 ? AF_INET6 : AF_INET, a, buf, len) ? buf : "?";
}

const char *flow_name(const struct roceval_flow_key *k, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s > %s qp 0x%x", addr_str(k->saddr, k->ipv6, s, sizeof(s)),
		 addr_str(k->daddr, k->ipv6, d, sizeof(d)), k->dqpn);
	return buf;
}

void flow_print_json(FILE *f, const struct flow_entry *e)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	bool first = true;

	fputs("{\"src\": ", f);
	json_str(f, addr_str(e->key.saddr, e->key.ipv6, s, sizeof(s)));
	fputs(", \"dst\": ", f);
	json_str(f, addr_str(e->key.daddr, e->key.ipv6, d, sizeof(d)));
	fprintf(f, ", \"dqpn\": %u, \"packets\": %llu, \"bytes\": %llu, \"violations\": %llu, \"rules\": {",
		e->key.dqpn, (unsigned long long)e->val.packets, (unsigned long long)e->val.bytes,
		(unsigned long long)e->val.violations);
	for (int i = 0; i < RULE__COUNT; i++) {
		if (!e->val.rule[i])
			continue;
		fprintf(f, "%s\"%s\": %u", first ? "" : ", ", rule_ids[i], e->val.rule[i]);
		first = false;
	}
	fputs("}}", f);
}

void flows_print_json_array(FILE *f, const struct flow_entry *e, int n, int top)
{
	fputs("\"flows\": [", f);
	for (int i = 0; i < n && i < top; i++) {
		if (i)
			fputs(", ", f);
		flow_print_json(f, &e[i]);
	}
	fputc(']', f);
}

void flows_print_table(FILE *f, const struct flow_entry *e, int n, int top)
{
	char name[128];

	if (!n)
		return;
	fprintf(f, "\n  %-52s %10s %12s %10s  %s\n", "flow", "packets", "bytes", "violations", "rules");
	for (int i = 0; i < n && i < top; i++) {
		bool first = true;

		fprintf(f, "  %-52s %10llu %12llu %10llu  ", flow_name(&e[i].key, name, sizeof(name)),
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].val.violations);
		for (int r = 0; r < RULE__COUNT; r++) {
			if (!e[i].val.rule[r])
				continue;
			fprintf(f, "%s%s=%u", first ? "" : " ", rule_ids[r], e[i].val.rule[r]);
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
