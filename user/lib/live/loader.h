/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Loading the BPF object, in the libbpf order: roceval_open() (choose the
 * programs, size the tables: nothing in the kernel yet), then
 * roceval_load_opened() (maps created, the verifier run), then whatever the
 * caller does with it (attach, pin, BPF_PROG_TEST_RUN).  libxdp's dispatcher
 * takes an opened object and loads it itself.
 */
#ifndef ROCEVAL_LOADER_H
#define ROCEVAL_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include "roceval.h"

struct bpf_program;
/* the skeleton (roceval.skel.h), which only the files that reach into the object include */
struct roceval_bpf;

#define ROCEVAL_MAX_FLOW_ENTRIES (1u << 22)

enum roceval_load_what {
	LOAD_LIVE = 1,	 /* the XDP program for an interface */
	LOAD_REPLAY = 2, /* the batch program BPF_PROG_TEST_RUN drives */
	LOAD_TC = 4,	 /* the tc ingress program, for a tcx link */
	/* the XDP program that reads the NIC's receive timestamps, bound to one device (native mode only) */
	LOAD_LIVE_NIC = 8,
};

/*
 * Opens the BPF object with the programs asked for and its tables sized
 * (roceval_set_flow_entries()).  `frags` marks the live program xdp.frags
 * (multi-buffer); without it frames larger than the driver's linear area
 * never reach the program.  NULL with a one-line error printed.
 */
struct roceval_bpf *roceval_open(unsigned int what, bool frags);
/*
 * The object with LOAD_LIVE_NIC's program bound to the interface, as the
 * kernel requires of a program that asks the driver for frame metadata
 * (6.3+): NULL where it cannot load, with the reason at -v only, since the
 * caller goes on with LOAD_LIVE.  Its rodata's rx_vlan_offered says whether
 * it asks the driver for a stripped VLAN tag too (6.8+).
 */
struct roceval_bpf *roceval_load_nic(int ifindex);
/* The loaded XDP program meant for an interface: LOAD_LIVE_NIC's or LOAD_LIVE's. */
struct bpf_program *roceval_live_prog(const struct roceval_bpf *skel);
/* Loads an opened object; on failure destroys it and returns -errno, the reason printed. */
int roceval_load_opened(struct roceval_bpf *skel);
/* roceval_open() then roceval_load_opened(): NULL with the reason printed. */
struct roceval_bpf *roceval_load(unsigned int what, bool frags);
int roceval_settings_write(int settings_fd, const struct roceval_settings *s);
int roceval_settings_read(int settings_fd, struct roceval_settings *s);
/* Flows the next roceval_open()'s table is sized for (default ROCEVAL_DEFAULT_FLOWS): attach, replay. */
void roceval_set_flow_entries(__u32 entries);
/*
 * Frames the loads after it judge at most (0, the default: not known, as of
 * a stream or an interface): the hash tables are sized for the entries
 * those frames can make, when that is fewer than the flows call for.
 */
void roceval_set_frame_bound(__u64 frames);
/* Parses a --flows value: 1 .. ROCEVAL_MAX_FLOW_ENTRIES. */
bool parse_flow_entries(const char *s, __u32 *out);

#endif
