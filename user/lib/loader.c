// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "common.h"
#include "flows.h"
#include "loader.h"

static __u32 flow_entries = ROCEVAL_DEFAULT_FLOWS;

void roceval_set_flow_entries(__u32 entries)
{
	flow_entries = entries;
}

/* Every connection has at least two flows, so the flow table's size bounds the connections too. */
void roceval_size_cm_maps(struct roceval_bpf *skel, __u32 flow_entries)
{
	bpf_map__set_max_entries(skel->maps.cm_conns, flow_entries);
	bpf_map__set_max_entries(skel->maps.conn_ring, flow_entries);
	bpf_map__set_max_entries(skel->maps.cm_ends, 2 * flow_entries);
	skel->rodata->conn_capacity = flow_entries;
}

struct roceval_bpf *roceval_load(unsigned int what, bool frags)
{
	struct roceval_bpf *skel;
	int err;

	libbpf_setup_logging();
	skel = roceval_bpf__open();
	if (!skel) {
		pr_warn("Couldn't open the BPF object: %s", strerror(errno));
		return NULL;
	}
	bpf_program__set_autoload(skel->progs.roceval_xdp, !!(what & LOAD_LIVE));
	bpf_program__set_autoload(skel->progs.roceval_replay, !!(what & LOAD_REPLAY));
	bpf_program__set_autoload(skel->progs.roceval_tc, !!(what & LOAD_TC));
	if (frags)
		bpf_program__set_flags(skel->progs.roceval_xdp,
				       bpf_program__flags(skel->progs.roceval_xdp) | BPF_F_XDP_HAS_FRAGS);
	/* The table and its eviction ring are sized together; the program reads the size from rodata. */
	bpf_map__set_max_entries(skel->maps.flows, flow_entries);
	bpf_map__set_max_entries(skel->maps.flow_ring, flow_entries);
	skel->rodata->flow_capacity = flow_entries;
	roceval_size_cm_maps(skel, flow_entries);
	err = roceval_bpf__load(skel);
	if (err) {
		pr_warn("Couldn't load the BPF program: %s%s", strerror(-err),
			err == -EPERM ? " (CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON are needed)" : verbose ? "" : " (run with -v for the verifier log)");
		roceval_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

int roceval_settings_write(int settings_fd, const struct roceval_settings *s)
{
	__u32 key = 0;

	if (bpf_map_update_elem(settings_fd, &key, s, BPF_ANY))
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
