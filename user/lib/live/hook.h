/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_HOOK_H
#define ROCEVAL_HOOK_H

#include <stdbool.h>

#include "iface.h"
#include "roceval.h"

/*
 * Loads, attaches and pins; fails naming the program already on the
 * interface.  multiprog: beside that program, through libxdp's dispatcher
 * where it can run, else at tc ingress (out->mode says which).
 */
int live_attach(const char *ifname, enum live_mode mode, bool multiprog,
		const struct roceval_settings *settings, struct live_iface *out);

struct bpf_object;
/* The pins every attachment has, for a feed's too: each map of obj, then meta; the caller holds the pin lock. */
int live_pin_maps(struct bpf_object *obj, const char *ifname);
int live_write_meta(const char *ifname, int ifindex, enum live_mode mode, bool multiprog, bool nic_clock,
		    enum live_pcp_source pcp_source);

#endif
