/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An interface's attachment as the live commands hold it: the hook and mode
 * it runs in, where it is pinned, and the maps opened on it.
 */
#ifndef ROCEVAL_IFACE_H
#define ROCEVAL_IFACE_H

#include <net/if.h>
#include <stdbool.h>
#include <time.h>
#include <linux/types.h>


/* Attachments a command shows at once (status, stats, top) */
#define LIVE_MAX_IFACES 64
/* "netns-" and a namespace's inode */
#define LIVE_NS_LEN 32

enum live_mode {
	LIVE_MODE_AUTO = 0, /* native if the driver supports it, else generic */
	LIVE_MODE_NATIVE,
	LIVE_MODE_GENERIC,
	/*
	 * Not XDP: tc ingress through a tcx link (kernel 6.6+), which chains
	 * with other programs by design, for an interface whose XDP hook
	 * another program holds; it sees what that program passes on.
	 */
	LIVE_MODE_TC,
	/*
	 * Not a hook: `roceval feed` runs a capture stream through the replay
	 * program, pinned as an attachment is, under a name of its own.
	 */
	LIVE_MODE_FEED,
};

/*
 * Where the program reads a frame's outer VLAN priority (pcp, cnp_pcp): the
 * frame's own tag always, and as well the one the NIC stripped, where the
 * hook is given it.
 */
enum live_pcp_source {
	LIVE_PCP_FRAME = 0, /* XDP: the frame's bytes only */
	LIVE_PCP_RX_META,   /* XDP bound to the device: the driver's (bpf_xdp_metadata_rx_vlan_tag) */
	LIVE_PCP_SKB,	    /* tc: the socket buffer's, where the stack put it */
};

/* The maps of a program's mirror sessions (mirror.bpf.h). */
struct mirror_fds {
	int sessions; /* "mirror_sessions": a session's slot */
	int stats;    /* "mirror_stats": its counts per CPU */
	int seq;      /* "mirror_seq": where its numbers stand */
};

struct live_iface {
	char ifname[IF_NAMESIZE];
	char netns[LIVE_NS_LEN]; /* the namespace's pin directory, netns-<inode> */
	__u64 netns_ino;
	bool this_netns; /* attached in the namespace this process runs in */
	int ifindex;
	enum live_mode mode; /* the mode actually in use */
	bool multiprog;	     /* attached through libxdp's dispatcher */
	bool nic_clock;	     /* the program asks the NIC for each frame's receive timestamp */
	enum live_pcp_source pcp_source;
	__u32 prog_id;
	time_t attached_since; /* wall clock, from the pin directory */
	int counters_fd;
	int settings_fd;
	int flows_fd;	 /* -1 when the object has no flow table */
	int flow_cold_fd; /* its cold part (roceval.h), -1 with it */
	int flow_sets_fd; /* its sets (roceval.h), -1 with it */
	/* -1 both when the object predates several traces at once */
	int trace_rbs_fd;     /* slot -> the ring buffer of the trace in it */
	int trace_filters_fd; /* slot -> struct roceval_trace_filter */
	/* RDMA CM: connections, their ends and REJs per reason; -1 when the object has none */
	int cm_conns_fd;
	int cm_ends_fd;
	int cm_rej_fd;
	int latency_fd; /* the latency histograms; -1 when the object has none */
	int congestion_fd; /* PFC and the cnp_reaction histogram; -1 when the object has none */
	/* mirror sessions: key -> slot, the slots' per-CPU counts and numbers; -1 each when the object has none */
	struct mirror_fds mirror;
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME at attach: for averages since then */
};

/*
 * Whether name can be an interface's and a pin directory's: what the kernel
 * accepts, without a leading dot.
 */
bool live_ifname_valid(const char *name);
const char *live_mode_name(enum live_mode mode);
/* native (or drv), generic (or skb), auto or tc; false for anything else. */
bool live_mode_parse(const char *s, enum live_mode *mode);
/* "xdp", or "tc" for LIVE_MODE_TC, "feed" for LIVE_MODE_FEED. */
const char *live_hook_name(enum live_mode mode);
/* frame_tag, rx_metadata or skb_tag (status --json); with spaces for text */
const char *live_pcp_source_name(enum live_pcp_source source);

#endif
