// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "loader.h"
#include "log.h"
#include "numbers.h"
#include "roceval.skel.h"
#include "roceval_plain.skel.h"
#include "settings.h"

/*
 * The flow table's size: the one place it is kept.  Every connection has at
 * least two flows, so it bounds the RDMA CM connection table too.
 */
static __u32 flow_entries = ROCEVAL_DEFAULT_FLOWS;
/* flow_entries was asked for (--flows, flows=N): honoured as it is, whatever the frame bound */
static bool flows_asked;

void roceval_set_flow_entries(__u32 entries)
{
	flow_entries = entries;
	flows_asked = true;
}

bool parse_flow_entries(const char *s, __u32 *out)
{
	return parse_u32(s, ROCEVAL_MAX_FLOW_ENTRIES, out) && *out > 0;
}

static __u64 frame_bound;

void roceval_set_frame_bound(__u64 frames)
{
	frame_bound = frames;
}

/*
 * New entries a frame makes in any one hash table, at most: 3 today, a
 * CNP's two pacing scopes and a CE mark's (cnp.bpf.h).  The end of a
 * replay makes none.
 */
#define ENTRIES_PER_FRAME 4
/*
 * The kernel's LRU hash hands its free entries to each CPU a batch at a
 * time (at most 128, LOCAL_FREE_TARGET) and evicts once the shared list
 * cannot refill one: room for the entries, a batch held by each CPU and
 * one more, and it never evicts, as the full-size table does not either
 * for so few entries.  Files judged each alone start from emptied tables,
 * and the entries freed go back to the shared list but for a batch a CPU
 * at most: the bound is one file's frames.
 */
#define LRU_BATCH 128

/*
 * A hash table's size for frame_bound frames: `full` unless they make
 * fewer entries, so that a table is never fuller, nor evicts, for a
 * smaller size: the verdicts stay those of the full size.  Creating a
 * preallocated LRU of 65536 entries costs more than judging a small
 * capture does.
 */
static __u32 hash_size(__u32 full, bool lru)
{
	int cpus = libbpf_num_possible_cpus();
	__u64 need = frame_bound * ENTRIES_PER_FRAME;

	if (!frame_bound || cpus < 0)
		return full;
	if (lru)
		need += (__u64)(cpus + 1) * LRU_BATCH;
	return need < full ? need : full;
}

/*
 * A frame creates one flow and one connection at most.  Where the frames
 * are bounded and no size was asked for, the flow table takes a power of
 * two of sets with FLOW_SLOTS_PER_FRAME slots a frame, when that is fewer
 * sets than flow_entries' table: creating and resetting the full one cost
 * more than judging a small capture.  A flow's two sets depend on how many
 * there are, so a smaller table could evict where the full one would not:
 * at most 1/16 of its slots taken, the chance is under 2.5e-5 a capture
 * (docs/replay.md), and flow_evicted would say so.
 */
#define FLOW_SLOTS_PER_FRAME 16
#define FLOW_SETS_MIN 4

/* The flow table's sets, and the connections the connection ring holds. */
static __u32 flow_table_size(__u32 *conns)
{
	__u32 full = roceval_flow_sets(flow_entries);
	__u64 sets = FLOW_SETS_MIN;

	*conns = flow_entries;
	if (flows_asked || !frame_bound)
		return full;
	while (sets * ROCEVAL_FLOW_WAYS < frame_bound * FLOW_SLOTS_PER_FRAME)
		sets *= 2;
	if (sets >= full)
		return full;
	if (frame_bound < *conns)
		*conns = frame_bound;
	return sets;
}

/*
 * The flow table and its cold part have a slot per set and way; the tables
 * sized with it (connections, hints) an entry per flow.  The program reads
 * the sizes from rodata.
 */
static int size_tables(struct roceval_bpf *skel, bool live)
{
	__u32 conns, sets = flow_table_size(&conns);

	pr_info("flow table: %u sets of %u slots, %u connections", sets, ROCEVAL_FLOW_WAYS, conns);
	bpf_map__set_max_entries(skel->maps.flows, sets * ROCEVAL_FLOW_WAYS);
	bpf_map__set_max_entries(skel->maps.flow_cold, sets * ROCEVAL_FLOW_WAYS);
	bpf_map__set_max_entries(skel->maps.flow_window, sets * ROCEVAL_FLOW_WAYS);
	bpf_map__set_max_entries(skel->maps.resp_holes, sets * ROCEVAL_FLOW_WAYS);
	bpf_map__set_max_entries(skel->maps.window_open, (sets * ROCEVAL_FLOW_WAYS + 63) / 64);
	skel->rodata->window_words = (sets * ROCEVAL_FLOW_WAYS + 63) / 64;
	bpf_map__set_max_entries(skel->maps.flow_sets, sets);
	skel->rodata->flow_set_count = sets;
	if (live && getrandom(&skel->rodata->flow_seed, sizeof(skel->rodata->flow_seed), 0) !=
			    sizeof(skel->rodata->flow_seed)) {
		pr_warn("Couldn't key the flow table's hash: %s", strerror(errno));
		return -1;
	}
	bpf_map__set_max_entries(skel->maps.cm_conns, hash_size(flow_entries, false));
	bpf_map__set_max_entries(skel->maps.conn_ring, conns);
	bpf_map__set_max_entries(skel->maps.cm_ends, hash_size(2 * flow_entries, false));
	/* a request flow holds one hint at a time (its current PSN window) */
	bpf_map__set_max_entries(skel->maps.req_hints, hash_size(flow_entries, true));
	/* congestion (roceval_cc.h): a rate record and a waiting scope a flow slot at most, scopes and pairs for a
	 * quarter of the flows */
	bpf_map__set_max_entries(skel->maps.cc_rate, hash_size(sets * ROCEVAL_FLOW_WAYS, false));
	bpf_map__set_max_entries(skel->maps.cc_waits, hash_size(sets * ROCEVAL_FLOW_WAYS, false));
	bpf_map__set_max_entries(skel->maps.cc_scopes, hash_size(flow_entries / 4 > 256 ? flow_entries / 4 : 256, true));
	bpf_map__set_max_entries(skel->maps.cc_pairs, hash_size(flow_entries / 4 > 256 ? flow_entries / 4 : 256, true));
	skel->rodata->conn_capacity = conns;
	return 0;
}

/*
 * roceval_bpf__open() of the object the load needs: the one built without
 * kfuncs (bpf/kfuncs.bpf.h), whose programs and maps are the same, unless
 * the device-bound program is asked for.
 */
static struct roceval_bpf *skel_open(unsigned int what)
{
	struct roceval_bpf *skel = calloc(1, sizeof(*skel));
	int err = -ENOMEM;

	if (!skel)
		goto fail;
	err = roceval_bpf__create_skeleton(skel);
	if (err)
		goto fail;
	if (!(what & LOAD_LIVE_NIC))
		skel->skeleton->data = roceval_plain_bpf__elf_bytes(&skel->skeleton->data_sz);
	err = bpf_object__open_skeleton(skel->skeleton, NULL);
	if (!err)
		return skel;
fail:
	roceval_bpf__destroy(skel);
	pr_warn("Couldn't open the BPF object: %s", strerror(-err));
	return NULL;
}

struct roceval_bpf *roceval_open(unsigned int what, bool frags)
{
	struct roceval_bpf *skel;

	libbpf_setup_logging();
	skel = skel_open(what);
	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.roceval_xdp, !!(what & LOAD_LIVE));
	bpf_program__set_autoload(skel->progs.roceval_xdp_nic, !!(what & LOAD_LIVE_NIC));
	bpf_program__set_autoload(skel->progs.roceval_replay, !!(what & LOAD_REPLAY));
	bpf_program__set_autoload(skel->progs.roceval_replay_end, !!(what & LOAD_REPLAY));
	bpf_program__set_autoload(skel->progs.roceval_tc, !!(what & LOAD_TC));
	if (frags) {
		bpf_program__set_flags(skel->progs.roceval_xdp,
				       bpf_program__flags(skel->progs.roceval_xdp) | BPF_F_XDP_HAS_FRAGS);
		bpf_program__set_flags(skel->progs.roceval_xdp_nic,
				       bpf_program__flags(skel->progs.roceval_xdp_nic) | BPF_F_XDP_HAS_FRAGS);
	}
	if (size_tables(skel, what & (LOAD_LIVE | LOAD_LIVE_NIC | LOAD_TC))) {
		roceval_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* BPF_F_XDP_DEV_BOUND_ONLY (kernel 6.3): newer than the uapi headers libbpf 1.1 comes with */
#define ROCEVAL_XDP_DEV_BOUND_ONLY (1U << 6)

/* Whether the kernel has the kfunc: checked first, so older kernels do not verify the program twice. */
static bool kfunc_offered(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool offered;

	if (libbpf_get_error(vmlinux))
		return false;
	offered = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return offered;
}

struct roceval_bpf *roceval_load_nic(int ifindex)
{
	struct roceval_bpf *skel;
	struct bpf_program *p;
	int err;

	if (!kfunc_offered("bpf_xdp_metadata_rx_timestamp")) {
		pr_info("this kernel gives XDP no receive timestamps (6.3+)");
		return NULL;
	}
	skel = roceval_open(LOAD_LIVE_NIC, true);
	if (!skel)
		return NULL;
	p = skel->progs.roceval_xdp_nic;
	bpf_program__set_ifindex(p, ifindex);
	bpf_program__set_flags(p, bpf_program__flags(p) | ROCEVAL_XDP_DEV_BOUND_ONLY);
	skel->rodata->rx_vlan_offered = kfunc_offered("bpf_xdp_metadata_rx_vlan_tag");
	if (!skel->rodata->rx_vlan_offered)
		pr_info("this kernel gives XDP no VLAN tag a NIC stripped (6.8+)");
	err = roceval_bpf__load(skel);
	if (err) {
		pr_info("Couldn't load XDP bound to the device: %s", strerror(-err));
		roceval_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

struct bpf_program *roceval_live_prog(const struct roceval_bpf *skel)
{
	return bpf_program__fd(skel->progs.roceval_xdp_nic) >= 0 ? skel->progs.roceval_xdp_nic
								 : skel->progs.roceval_xdp;
}

int roceval_load_opened(struct roceval_bpf *skel)
{
	int err = roceval_bpf__load(skel);

	if (err) {
		pr_warn("Couldn't load the BPF program: %s%s", strerror(-err),
			err == -EPERM ? " (CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON are needed)" : verbose ? "" : " (run with -v for the verifier log)");
		roceval_bpf__destroy(skel);
	}
	return err;
}

struct roceval_bpf *roceval_load(unsigned int what, bool frags)
{
	struct roceval_bpf *skel = roceval_open(what, frags);

	return skel && !roceval_load_opened(skel) ? skel : NULL;
}

int roceval_settings_write(int settings_fd, const struct roceval_settings *s)
{
	struct roceval_settings d = *s;
	__u32 key = 0;

	settings_derive(&d);
	if (bpf_map_update_elem(settings_fd, &key, &d, BPF_ANY))
		return -errno;
	return 0;
}

int roceval_settings_read(int settings_fd, struct roceval_settings *s)
{
	__u32 key = 0;

	if (bpf_map_lookup_elem(settings_fd, &key, s))
		return -errno;
	return 0;
}
