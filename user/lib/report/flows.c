// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "cm.h"
#include "flows.h"
#include "json.h"
#include "latency.h"
#include "numbers.h"
#include "rule_names.h"

static int by_violations_then_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	if (x->cold.violations != y->cold.violations)
		return x->cold.violations < y->cold.violations ? 1 : -1;
	if (x->val.packets != y->val.packets)
		return x->val.packets < y->val.packets ? 1 : -1;
	return memcmp(&x->val.key, &y->val.key, sizeof(x->val.key));
}

/*
 * The sets through their mapping: a replay reads them after each of its
 * files, and a batch lookup copies them to user space one at a time.
 */
static int flow_sets_mapped(int sets_fd, const struct bpf_map_info *info, struct roceval_flow_set *sets)
{
	size_t size = (size_t)info->max_entries * sizeof(*sets);
	void *mem;

	if (info->value_size != sizeof(*sets))
		return -EINVAL;
	mem = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_POPULATE, sets_fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	memcpy(sets, mem, size);
	munmap(mem, size);
	return 0;
}

static int flow_sets_batch(int sets_fd, const struct bpf_map_info *info, struct roceval_flow_set *sets)
{
	__u32 *keys = malloc(info->max_entries * sizeof(*keys)), n = 0, batch = 0;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	while (n < info->max_entries) {
		__u32 count = info->max_entries - n;

		err = bpf_map_lookup_batch(sets_fd, n ? &batch : NULL, &batch, keys + n, sets + n, &count, NULL);
		n += count;
		if (err) {
			/* the last batch ends the array with ENOENT */
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
	}
	free(keys);
	return !err && n != info->max_entries ? -EIO : err;
}

int flow_sets_read(int sets_fd, struct roceval_flow_set **out)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct roceval_flow_set *sets;
	int err;

	if (bpf_obj_get_info_by_fd(sets_fd, &info, &len))
		return -errno;
	sets = malloc((size_t)info.max_entries * sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	err = info.map_flags & BPF_F_MMAPABLE ? flow_sets_mapped(sets_fd, &info, sets)
					      : flow_sets_batch(sets_fd, &info, sets);
	if (err) {
		free(sets);
		return err;
	}
	*out = sets;
	return (int)info.max_entries;
}

int flows_collect(int flows_fd, int sets_fd, int cold_fd, struct flow_entry **out)
{
	struct roceval_flow_set *sets;
	struct flow_entry *v = NULL;
	size_t n = 0, cap = 0;
	int nsets = flow_sets_read(sets_fd, &sets);

	if (nsets < 0)
		return nsets;
	for (__u32 slot = 0; slot < (__u32)nsets * ROCEVAL_FLOW_WAYS; slot++) {
		if (!sets[slot / ROCEVAL_FLOW_WAYS].tag[slot % ROCEVAL_FLOW_WAYS])
			continue;
		if (n == cap) {
			struct flow_entry *grown;

			cap = cap ? cap * 2 : 256;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				free(sets);
				return -ENOMEM;
			}
			v = grown;
		}
		/* a flow evicted since the sets were read shows its successor, or is left out */
		if (!bpf_map_lookup_elem(flows_fd, &slot, &v[n].val) &&
		    !bpf_map_lookup_elem(cold_fd, &slot, &v[n].cold) && v[n].val.packets) {
			n++;
		}
	}
	free(sets);
	if (n)
		qsort(v, n, sizeof(*v), by_violations_then_packets);
	*out = v;
	return (int)n;
}

int flow_lookup(int flows_fd, int sets_fd, __u64 seed, const struct roceval_flow_key *key,
		struct roceval_flow *out)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct roceval_flow_place p;

	if (bpf_obj_get_info_by_fd(sets_fd, &info, &len))
		return -errno;
	p = roceval_flow_place(key, seed, info.max_entries);
	for (int i = 0; i < 2; i++) {
		struct roceval_flow_set set;

		if (bpf_map_lookup_elem(sets_fd, &p.set[i], &set))
			return -errno;
		for (__u32 w = 0; w < ROCEVAL_FLOW_WAYS; w++) {
			__u32 slot = p.set[i] * ROCEVAL_FLOW_WAYS + w;

			if (set.tag[w] != p.tag)
				continue;
			if (bpf_map_lookup_elem(flows_fd, &slot, out))
				return -errno;
			if (!memcmp(&out->key, key, sizeof(*key)))
				return 0;
		}
	}
	return -ENOENT;
}

/* Orders flows by (family, source, destination), so the reverse direction can be searched for. */
static int by_addresses(const void *a, const void *b)
{
	const struct roceval_flow_key *x = &(*(const struct flow_entry *const *)a)->val.key;
	const struct roceval_flow_key *y = &(*(const struct flow_entry *const *)b)->val.key;
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
		want.val.key.ipv6 = bad[i]->val.key.ipv6;
		memcpy(want.val.key.saddr, bad[i]->val.key.daddr, sizeof(want.val.key.saddr));
		memcpy(want.val.key.daddr, bad[i]->val.key.saddr, sizeof(want.val.key.daddr));
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

	flow_name(&e->val.key, buf, len);
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
	json_string(w, "src", addr_str(e->val.key.saddr, e->val.key.ipv6, s, sizeof(s)));
	json_string(w, "dst", addr_str(e->val.key.daddr, e->val.key.ipv6, d, sizeof(d)));
	json_u64(w, "dqpn", e->val.key.dqpn);
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

int flow_name_line(const char *s, int width)
{
	const char *ann = strstr(s, " [");
	int n = strlen(s);

	if (n <= width)
		return n;
	if (ann && ann > s && ann - s <= width)
		return ann - s;
	for (n = width; n > 0 && s[n] != ' '; n--)
		;
	return n ?: width;
}

/* What is left of a name after its first line, indented below it, within the name's column. */
static void flow_name_rest(FILE *f, const char *rest)
{
	int w;

	for (rest += strspn(rest, " "); *rest; rest += strspn(rest, " ")) {
		w = flow_name_line(rest, FLOW_NAME_W - 2);
		fprintf(f, "    %.*s\n", w, rest);
		rest += w;
	}
}

void flows_print_table(FILE *f, const struct flow_entry *e, int n, int top)
{
	char name[FLOW_NAME_MAX];

	if (!n)
		return;
	fprintf(f, "\n  %-*s %10s %12s %10s  %s\n", FLOW_NAME_W, "flow", "packets", "bytes", "violations", "rules");
	for (int i = 0; i < n && i < top; i++) {
		bool first = true;
		int w;

		flow_entry_name(&e[i], name, sizeof(name));
		w = flow_name_line(name, FLOW_NAME_W);
		fprintf(f, "  %-*.*s %10llu %12llu %10llu  ", FLOW_NAME_W, w, name,
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].cold.violations);
		for (int r = 0; r < RULE__COUNT; r++) {
			if (!e[i].cold.rule[r])
				continue;
			fprintf(f, "%s%s=%u", first ? "" : " ", rule_ids[r], e[i].cold.rule[r]);
			first = false;
		}
		fputc('\n', f);
		flow_name_rest(f, name + w);
	}
	if (n > top)
		fprintf(f, "  (%d more flow%s)\n", n - top, n - top == 1 ? "" : "s");
}
