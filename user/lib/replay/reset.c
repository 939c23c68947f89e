// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "reset.h"
#include "roceval.h"
#include "roceval.skel.h"

/*
 * What a caller configures and the program only reads: left as they are.
 * The program cannot write a read-only map (.rodata) or a map of maps (the
 * trace rings, which belong to their readers) either.
 */
static const char *const configuration[] = { "settings", "trace_filters" };

enum how {
	KEEP,
	MEMSET, /* a mapped array: zeroed in place */
	IMAGE,	/* global variables (.bss, .data): copied back from after the load */
	ZERO,	/* an array that cannot be mapped (a timer in it), or per CPU: each entry written zero */
	EMPTY,	/* a hash: every key deleted */
};

/*
 * The flow table's sets, and the arrays an entry a slot of it: a set's
 * slots are taken in order as flows are created there, never freed, so
 * those after its `created` were not written and only the slots taken are
 * zeroed, which costs what the capture used, not what the table holds.
 * An array sized per slot left out of slot_maps() is reset whole.
 */
static bool per_slot(const struct roceval_bpf *skel, const struct bpf_map *map)
{
	const struct bpf_map *const slot_maps[] = { skel->maps.flows, skel->maps.flow_cold, skel->maps.flow_window,
						    skel->maps.resp_holes };

	for (size_t i = 0; i < sizeof(slot_maps) / sizeof(slot_maps[0]); i++)
		if (map == slot_maps[i])
			return true;
	return false;
}

/* Keys a hash is emptied by at a time. */
#define RESET_KEYS 4096

struct one_map {
	struct bpf_map *map;
	int fd;
	enum how how;
	void *mem; /* MEMSET: its mapping */
	size_t size;
	void *image; /* IMAGE: the contents after the load */
	__u32 slots; /* an entry per flow slot: ROCEVAL_FLOW_WAYS; the sets themselves: 1; else 0 */
};

/* A set that took flows: its first entry in a map of `slots` entries a set, and how many it took. */
struct used_set {
	__u32 set;
	__u32 taken;
};

struct map_reset {
	int n;
	void *zeros;	    /* ZERO: RESET_KEYS values of the largest map, of every CPU for a per-CPU one */
	size_t zeros_size;
	void *keys;	    /* RESET_KEYS keys of the largest: EMPTY's gathered before they are deleted, ZERO's indexes */
	size_t keys_size;
	const struct roceval_flow_set *sets; /* flow_sets' mapping; NULL: every map reset whole */
	__u32 nsets, nused;
	struct used_set *used; /* the sets that took flows, gathered before any map is reset */
	struct one_map m[];
};

static bool is_configuration(const struct bpf_map *map)
{
	for (size_t i = 0; i < sizeof(configuration) / sizeof(configuration[0]); i++)
		if (!strcmp(bpf_map__name(map), configuration[i]))
			return true;
	return false;
}

/* Whether type `id` holds a field the kernel manages (bpf_timer, bpf_spin_lock, ...), which an array mapped to user space may not. */
static bool kernel_fields(const struct btf *btf, __u32 id, int depth)
{
	const struct btf_type *t;
	int rid = btf__resolve_type(btf, id);

	if (rid < 0 || depth > 8)
		return true;
	t = btf__type_by_id(btf, rid);
	if (btf_is_array(t))
		return kernel_fields(btf, btf_array(t)->type, depth + 1);
	if (!btf_is_composite(t))
		return false;
	if (!strncmp(btf__name_by_offset(btf, t->name_off), "bpf_", 4))
		return true;
	for (int i = 0; i < btf_vlen(t); i++)
		if (kernel_fields(btf, btf_members(t)[i].type, depth + 1))
			return true;
	return false;
}

void map_reset_prepare(struct roceval_bpf *skel)
{
	const struct btf *btf = bpf_object__btf(skel->obj);
	struct bpf_map *map;

	bpf_object__for_each_map(map, skel->obj) {
		__u32 id = bpf_map__btf_value_type_id(map);

		if (bpf_map__type(map) != BPF_MAP_TYPE_ARRAY || bpf_map__is_internal(map) || is_configuration(map) ||
		    !btf || !id || kernel_fields(btf, id, 0))
			continue;
		bpf_map__set_map_flags(map, bpf_map__map_flags(map) | BPF_F_MMAPABLE);
	}
}

static size_t entry_size(const struct bpf_map *map)
{
	size_t size = (bpf_map__value_size(map) + 7) & ~(size_t)7;
	int cpus = libbpf_num_possible_cpus();

	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return size * (cpus > 0 ? cpus : 1);
	default:
		return size;
	}
}

static int plan_array(struct one_map *o)
{
	const struct bpf_map *map = o->map;
	size_t page = sysconf(_SC_PAGESIZE);

	if (bpf_map__is_internal(map)) {
		__u32 zero = 0;

		o->size = bpf_map__value_size(map);
		o->image = malloc(o->size);
		if (!o->image)
			return -ENOMEM;
		if (bpf_map_lookup_elem(o->fd, &zero, o->image))
			return -errno;
		o->how = IMAGE;
		return 0;
	}
	if (!(bpf_map__map_flags(map) & BPF_F_MMAPABLE)) {
		o->how = ZERO;
		return 0;
	}
	o->size = (entry_size(map) * bpf_map__max_entries(map) + page - 1) / page * page;
	o->mem = mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, 0);
	if (o->mem == MAP_FAILED) {
		o->mem = NULL;
		return -errno;
	}
	o->how = MEMSET;
	return 0;
}

/* How `o->map` is reset: 0, or -EOPNOTSUPP for a kind of map this cannot reset. */
static int plan(struct one_map *o)
{
	const struct bpf_map *map = o->map;

	if (is_configuration(map) || (bpf_map__map_flags(map) & BPF_F_RDONLY_PROG)) {
		o->how = KEEP;
		return 0;
	}
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		o->how = KEEP;
		return 0;
	case BPF_MAP_TYPE_ARRAY:
		return plan_array(o);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		o->how = ZERO;
		return 0;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		o->how = EMPTY;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* Room for the largest value and RESET_KEYS of the largest key, so that resetting allocates nothing. */
static int buffers(struct map_reset *m)
{
	for (int i = 0; i < m->n; i++) {
		const struct bpf_map *map = m->m[i].map;
		size_t keys = (size_t)bpf_map__key_size(map) * RESET_KEYS;

		size_t zeros = entry_size(map) * (bpf_map__max_entries(map) < RESET_KEYS ? bpf_map__max_entries(map) : RESET_KEYS);

		if (m->m[i].how == ZERO && zeros > m->zeros_size)
			m->zeros_size = zeros;
		if (m->m[i].how == ZERO && sizeof(__u32) * RESET_KEYS > m->keys_size)
			m->keys_size = sizeof(__u32) * RESET_KEYS;
		if (m->m[i].how == EMPTY && keys > m->keys_size)
			m->keys_size = keys;
	}
	m->zeros = calloc(1, m->zeros_size ?: 1);
	m->keys = malloc(m->keys_size ?: 1);
	return m->zeros && m->keys ? 0 : -ENOMEM;
}

struct map_reset *map_reset_new(struct roceval_bpf *skel)
{
	struct bpf_map *map;
	struct map_reset *m;
	int n = 0, err = 0;

	bpf_object__for_each_map(map, skel->obj)
		n++;
	m = calloc(1, sizeof(*m) + n * sizeof(m->m[0]));
	if (!m) {
		pr_warn("Couldn't allocate the map reset: %s", strerror(ENOMEM));
		return NULL;
	}
	bpf_object__for_each_map(map, skel->obj) {
		struct one_map *o = &m->m[m->n++];

		o->map = map;
		o->fd = bpf_map__fd(map);
		err = plan(o);
		if (!err && map == skel->maps.flow_sets && o->how == MEMSET) {
			m->sets = o->mem;
			m->nsets = bpf_map__max_entries(map);
			o->slots = 1;
		} else if (!err && per_slot(skel, map) && (o->how == MEMSET || o->how == ZERO)) {
			o->slots = ROCEVAL_FLOW_WAYS;
		}
		if (err) {
			pr_warn("Couldn't plan the reset of map %s (type %d) between captures: %s", bpf_map__name(map),
				bpf_map__type(map), strerror(-err));
			map_reset_free(m);
			return NULL;
		}
	}
	err = buffers(m);
	m->used = calloc(m->nsets ?: 1, sizeof(*m->used));
	if (!err && !m->used)
		err = -ENOMEM;
	if (err) {
		pr_warn("Couldn't allocate the map reset: %s", strerror(-err));
		map_reset_free(m);
		return NULL;
	}
	return m;
}

/*
 * An array that cannot be mapped (per-CPU, or holding a spin lock or timer)
 * written with zeros RESET_KEYS entries a call: one call an entry made the
 * reset of a 65536-flow table cost 0.15 s a file.
 */
static int zero_each(struct map_reset *m, const struct one_map *o)
{
	__u32 max = bpf_map__max_entries(o->map), *keys = m->keys, n;

	for (__u32 k = 0; k < max; k += n) {
		n = max - k < RESET_KEYS ? max - k : RESET_KEYS;
		for (__u32 i = 0; i < n; i++)
			keys[i] = k + i;
		if (bpf_map_update_batch(o->fd, keys, m->zeros, &n, NULL))
			return -errno;
	}
	return 0;
}

/*
 * The keys gathered a chunk at a time, then deleted: deleting the key
 * get_next_key would go on from sends a hash back to its first bucket.
 */
static int empty(struct map_reset *m, const struct one_map *o)
{
	__u32 ksize = bpf_map__key_size(o->map);
	unsigned char *keys = m->keys;
	__u32 n;

	do {
		void *prev = NULL;

		for (n = 0; n < RESET_KEYS && !bpf_map_get_next_key(o->fd, prev, keys + (size_t)n * ksize); n++)
			prev = keys + (size_t)n * ksize;
		for (__u32 i = 0; i < n; i++)
			if (bpf_map_delete_elem(o->fd, keys + (size_t)i * ksize) && errno != ENOENT)
				return -errno;
	} while (n == RESET_KEYS);
	return 0;
}

static void gather_used(struct map_reset *m)
{
	m->nused = 0;
	for (__u32 s = 0; s < m->nsets; s++) {
		__u64 created = m->sets[s].created;

		if (created)
			m->used[m->nused++] = (struct used_set){ .set = s,
								 .taken = created < ROCEVAL_FLOW_WAYS ? created : ROCEVAL_FLOW_WAYS };
	}
}

/* The entries of the sets that took flows, in a map of o->slots entries a set. */
static int zero_used(struct map_reset *m, const struct one_map *o)
{
	size_t size = entry_size(o->map);
	__u32 *keys = m->keys, n = 0;

	for (__u32 i = 0; i < m->nused; i++) {
		__u32 first = m->used[i].set * o->slots, count = o->slots == 1 ? 1 : m->used[i].taken;

		if (o->how == MEMSET) {
			memset((char *)o->mem + first * size, 0, count * size);
			continue;
		}
		for (__u32 k = 0; k < count; k++) {
			keys[n++] = first + k;
			if (n < RESET_KEYS)
				continue;
			if (bpf_map_update_batch(o->fd, keys, m->zeros, &n, NULL))
				return -errno;
			n = 0;
		}
	}
	if (n && bpf_map_update_batch(o->fd, keys, m->zeros, &n, NULL))
		return -errno;
	return 0;
}

static int reset_one(struct map_reset *m, const struct one_map *o)
{
	if (m->sets && o->slots)
		return zero_used(m, o);
	switch (o->how) {
	case KEEP:
		return 0;
	case MEMSET:
		memset(o->mem, 0, o->size);
		return 0;
	case IMAGE:
		return bpf_map_update_elem(o->fd, &(__u32){ 0 }, o->image, BPF_EXIST) ? -errno : 0;
	case ZERO:
		return zero_each(m, o);
	case EMPTY:
		return empty(m, o);
	}
	return 0;
}

int map_reset_run(struct map_reset *m)
{
	int err = 0;

	if (m->sets)
		gather_used(m);
	for (int i = 0; i < m->n && !err; i++) {
		err = reset_one(m, &m->m[i]);
		if (err)
			pr_warn("Couldn't reset map %s between captures: %s", bpf_map__name(m->m[i].map), strerror(-err));
	}
	return err;
}

void map_reset_free(struct map_reset *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++) {
		if (m->m[i].how == MEMSET)
			munmap(m->m[i].mem, m->m[i].size);
		free(m->m[i].image);
	}
	free(m->zeros);
	free(m->keys);
	free(m->used);
	free(m);
}
