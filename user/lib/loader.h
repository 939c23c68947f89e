/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_LOADER_H
#define ROCEVAL_LOADER_H

#include <stdbool.h>
#include "roceval.h"
#include "roceval.skel.h"

enum roceval_load_what {
	LOAD_LIVE = 1,	 /* the XDP program for an interface */
	LOAD_REPLAY = 2, /* the batch program BPF_PROG_TEST_RUN drives */
	LOAD_TC = 4,	 /* the tc ingress program, for a tcx link */
};

/*
 * Opens and loads the BPF object with the programs asked for.  `frags`
 * loads the live program as xdp.frags (multi-buffer); without it frames
 * larger than the driver's linear area never reach the program.
 * Returns NULL with a one-line error printed.
 */
struct roceval_bpf *roceval_load(unsigned int what, bool frags);
/* Sizes the RDMA CM connection table with the flow table, before the object is loaded. */
void roceval_size_cm_maps(struct roceval_bpf *skel, __u32 flow_entries);
int roceval_settings_write(int settings_fd, const struct roceval_settings *s);
int roceval_settings_read(int settings_fd, struct roceval_settings *s);

#endif
