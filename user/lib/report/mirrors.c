// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Mirror sessions read back from the maps, for replay, stats, top and the exporter. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "json.h"
#include "mirrors.h"

static const char *const encap_ids[MIRROR__COUNT] = {
	[MIRROR_NONE] = "?",
#define MIRROR_ID(e, id, desc) [MIRROR_##e] = id,
	ROCEVAL_MIRROR_ENCAPS(MIRROR_ID)
#undef MIRROR_ID
};

const char *mirror_encap_id(unsigned int encap)
{
	return encap < MIRROR__COUNT ? encap_ids[encap] : "?";
}

/* Adds every CPU's counts of the session in `slot` to e, and where its numbers stand. */
static int stats_sum(const struct mirror_fds *fds, struct mirror_entry *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct roceval_mirror_stats *v;
	struct roceval_mirror_seq sq;
	int err = 0;

	if (ncpu < 1)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fds->stats, &e->slot, v) || bpf_map_lookup_elem(fds->seq, &e->slot, &sq))
		err = -errno;
	for (int c = 0; c < ncpu && !err; c++) {
		e->frames += v[c].frames;
		e->bytes += v[c].bytes;
		e->lost += v[c].lost;
		e->truncated += v[c].truncated;
		e->nested += v[c].nested;
	}
	if (!err) {
		e->numbered = !!(sq.flags & ROCEVAL_MIRROR_NUMBERED);
		e->seq_seen = !!(sq.flags & ROCEVAL_MIRROR_SEQ_SEEN);
		e->last_seq = sq.last_seq;
	}
	free(v);
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct roceval_mirror_key *x = &((const struct mirror_entry *)a)->key;
	const struct roceval_mirror_key *y = &((const struct mirror_entry *)b)->key;
	int d = memcmp(x->source, y->source, 16);

	if (d)
		return d;
	if (x->encap != y->encap)
		return x->encap < y->encap ? -1 : 1;
	return x->session < y->session ? -1 : x->session > y->session;
}

struct mirror_fds mirror_fds_of(const struct bpf_object *obj)
{
	return (struct mirror_fds){ .sessions = bpf_object__find_map_fd_by_name(obj, "mirror_sessions"),
				    .stats = bpf_object__find_map_fd_by_name(obj, "mirror_stats"),
				    .seq = bpf_object__find_map_fd_by_name(obj, "mirror_seq") };
}

int mirrors_collect(const struct mirror_fds *fds, struct mirror_entry **out)
{
	struct roceval_mirror_key key, next, *prev = NULL;
	struct mirror_entry *e;
	int n = 0, err = 0;

	*out = NULL;
	if (fds->sessions < 0 || fds->stats < 0 || fds->seq < 0)
		return 0;
	e = calloc(ROCEVAL_MIRROR_SESSIONS, sizeof(*e));
	if (!e)
		return -ENOMEM;
	while (n < ROCEVAL_MIRROR_SESSIONS && !bpf_map_get_next_key(fds->sessions, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fds->sessions, &key, &e[n].slot))
			continue;
		e[n].key = key;
		err = stats_sum(fds, &e[n]);
		if (err)
			break;
		n++;
	}
	if (err) {
		free(e);
		return err;
	}
	qsort(e, n, sizeof(*e), entry_cmp);
	*out = e;
	return n;
}

static const char *source_str(const struct roceval_mirror_key *k, char *buf, size_t len)
{
	if (!inet_ntop(k->ipv6 ? AF_INET6 : AF_INET, k->source, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

void mirrors_json(struct json_writer *w, const struct mirror_entry *e, int n)
{
	char a[INET6_ADDRSTRLEN];

	json_array_begin(w, "mirrors");
	for (int i = 0; i < n; i++) {
		json_object_begin(w, NULL);
		json_string(w, "source", source_str(&e[i].key, a, sizeof(a)));
		json_string(w, "encap", mirror_encap_id(e[i].key.encap));
		json_u64(w, "session", e[i].key.session);
		json_u64(w, "frames", e[i].frames);
		json_u64(w, "bytes", e[i].bytes);
		json_u64(w, "lost", e[i].lost);
		json_bool(w, "numbered", e[i].numbered);
		json_u64(w, "truncated", e[i].truncated);
		json_u64(w, "nested", e[i].nested);
		if (e[i].seq_seen)
			json_u64(w, "last_seq", e[i].last_seq);
		else
			json_null(w, "last_seq");
		json_object_end(w);
	}
	json_array_end(w);
}

void mirrors_print_table(FILE *f, const struct mirror_entry *e, int n)
{
	char a[INET6_ADDRSTRLEN];

	if (n <= 0)
		return;
	fprintf(f, "\nmirror sessions:\n  %-39s %-8s %10s %12s %14s %10s %10s %s\n", "source", "encap",
		"session", "frames", "bytes", "lost", "truncated", "numbered");
	for (int i = 0; i < n; i++)
		fprintf(f, "  %-39s %-8s %10u %12llu %14llu %10llu %10llu %s\n", source_str(&e[i].key, a, sizeof(a)),
			mirror_encap_id(e[i].key.encap), e[i].key.session, (unsigned long long)e[i].frames,
			(unsigned long long)e[i].bytes, (unsigned long long)e[i].lost,
			(unsigned long long)e[i].truncated, e[i].numbered ? "yes" : (e[i].seq_seen ? "no (always 0)" : "no"));
}
