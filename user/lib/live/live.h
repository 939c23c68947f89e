/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Live attachments.  Everything roceval keeps for an interface is pinned
 * under ROCEVAL_PIN_ROOT/netns-<inode>/<ifname>/ (directories 0700, pins
 * 0600), one directory per network namespace: the program,
 * the bpf_link, and the maps, so counters survive the CLI exiting and the
 * daemon restarting.  attach, detach, status, stats, top, trace, config and
 * the daemon all go through this interface.
 */
#ifndef ROCEVAL_LIVE_H
#define ROCEVAL_LIVE_H

#include <net/if.h>
#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

#include "roceval.h"

/* Where the pins are on the host; a private mount namespace reaches them elsewhere. */
#define ROCEVAL_PIN_ROOT "/sys/fs/bpf/roceval"
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
};

/* An attachment in any network namespace: the directories it is pinned in. */
struct live_ref {
	char netns[LIVE_NS_LEN];
	char ifname[IF_NAMESIZE];
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
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME at attach: for averages since then */
};

/*
 * Finds the bpffs that outlives this command (the host's, even from a private
 * mount namespace such as 'ip netns exec' makes) and this network namespace's
 * identity; live_ensure_bpffs() also mounts bpffs where that is safe.  Every
 * other function calls one of them.  0 or -errno, the reason printed (-EXDEV:
 * only a bpffs that would vanish with this process is to be had).
 */
int live_init(void);
int live_ensure_bpffs(void);
/* The resolved ROCEVAL_PIN_ROOT, and this namespace's directory name in it. */
const char *live_pin_root(void);
const char *live_netns(void);
/*
 * Whether name can be an interface's and a pin directory's: what the kernel
 * accepts, without a leading dot.
 */
bool live_ifname_valid(const char *name);
/* The name 'ip netns' knows the namespace of inode ino by (under /run/netns), or "". */
const char *live_netns_name(__u64 ino, char *buf, size_t len);
/* This namespace's pin directory for ifname. */
int live_pin_dir(char *buf, size_t len, const char *ifname);
/*
 * Loads, attaches and pins; fails naming the program already on the
 * interface.  multiprog: beside that program, through libxdp's dispatcher
 * where it can run, else at tc ingress (out->mode says which).
 */
int live_attach(const char *ifname, enum live_mode mode, bool multiprog,
		const struct roceval_settings *settings, struct live_iface *out);
/*
 * Opens the pins of an existing attachment. -ENOENT when the interface has
 * none; -EPROTO when another build of roceval made it, with maps laid out
 * otherwise (live_warn_layout() says which).
 */
int live_open(const char *ifname, struct live_iface *out);
/* Prints the last -EPROTO of live_open(): which map, its value size and this build's, and what to do. */
void live_warn_layout(const char *ifname);
/* live_open() that prints why it failed: no such interface, not attached, damaged pins, another build's. */
int live_open_report(const char *ifname, struct live_iface *out);
/* Bytes the kernel charges for the program's maps (memlock in fdinfo) and how many maps. */
int live_memory(const struct live_iface *li, __u64 *bytes, int *nmaps);
/* Detaches and removes every pin; the interface is left as it was before attach. */
int live_detach(const char *ifname);
/* Interfaces of this network namespace with pins, stale ones included, sorted; count or -errno. */
int live_list(char (*names)[IF_NAMESIZE], int max);
/* live_list() without the stale ones: the attachments that run here now. */
int live_list_local(char (*names)[IF_NAMESIZE], int max);
/* Every namespace's attachments, sorted by namespace and name; count or -errno. */
int live_list_all(struct live_ref *refs, int max);
int live_open_ref(const struct live_ref *ref, struct live_iface *out);
/*
 * Whether the interface li was attached to is gone (deleted, re-created, or
 * its namespace with it): its pins hold memory and count nothing.
 */
bool live_stale(const struct live_iface *li);
/* Detaches every stale attachment of this namespace (all: of every one); count or -errno. */
int live_detach_stale(bool all);
void live_close(struct live_iface *li);
/*
 * Opens IFACE, or with ifname NULL every attachment that runs in this
 * namespace now; the count opened, or -1 with the reason printed (nothing
 * attached included).
 */
int live_open_local(const char *ifname, struct live_iface *li, int max);
void live_close_all(struct live_iface *li, int n);
const char *live_mode_name(enum live_mode mode);
/* native (or drv), generic (or skb), auto or tc; false for anything else. */
bool live_mode_parse(const char *s, enum live_mode *mode);
/* "xdp", or "tc" for LIVE_MODE_TC. */
const char *live_hook_name(enum live_mode mode);

#endif
