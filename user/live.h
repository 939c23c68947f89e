/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Live attachments.  Everything roceval keeps for an interface is pinned
 * under ROCEVAL_PIN_ROOT/<ifname>/ (directory 0700, pins 0600): the program,
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

#define ROCEVAL_PIN_ROOT "/sys/fs/bpf/roceval"

enum live_mode {
	LIVE_MODE_AUTO = 0, /* native if the driver supports it, else generic */
	LIVE_MODE_NATIVE,
	LIVE_MODE_GENERIC,
};

struct live_iface {
	char ifname[IF_NAMESIZE];
	int ifindex;
	enum live_mode mode; /* the mode actually in use */
	bool multiprog;	     /* attached through libxdp's dispatcher */
	__u32 prog_id;
	time_t attached_since; /* wall clock, from the pin directory */
	int counters_fd;
	int settings_fd;
	int flows_fd;	 /* -1 when the object has no flow table */
	/* -1 both when the object predates several traces at once */
	int trace_rbs_fd;     /* slot -> the ring buffer of the trace in it */
	int trace_filters_fd; /* slot -> struct roceval_trace_filter */
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME at attach: for averages since then */
};

/* Mounts bpffs on /sys/fs/bpf when nothing is mounted there. 0 or -errno, error printed. */
int live_ensure_bpffs(void);
/* Loads, attaches and pins; fails naming the program already on the interface. */
int live_attach(const char *ifname, enum live_mode mode, bool multiprog,
		const struct roceval_settings *settings, struct live_iface *out);
/* Opens the pins of an existing attachment. -ENOENT when the interface has none. */
int live_open(const char *ifname, struct live_iface *out);
/* live_open() that prints why it failed: no such interface, not attached, damaged pins. */
int live_open_report(const char *ifname, struct live_iface *out);
/* Bytes the kernel charges for the program's maps (memlock in fdinfo) and how many maps. */
int live_memory(const struct live_iface *li, __u64 *bytes, int *nmaps);
/* Flow table entries for the next live_attach() (default ROCEVAL_DEFAULT_FLOWS). */
void live_set_flow_entries(__u32 entries);
/* Detaches and removes every pin; the interface is left as it was before attach. */
int live_detach(const char *ifname);
/* Names of the attached interfaces (pin directories), sorted; returns the count or -errno. */
int live_list(char (*names)[IF_NAMESIZE], int max);
/*
 * live_list() narrowed to this network namespace: the pins are global, but an
 * interface name means the interface of that name here (with the ifindex it
 * was attached with).
 */
int live_list_local(char (*names)[IF_NAMESIZE], int max);
void live_close(struct live_iface *li);
const char *live_mode_name(enum live_mode mode);

#endif
