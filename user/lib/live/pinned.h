/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* An attachment's pins opened, measured, detached; the stale ones found. */
#ifndef ROCEVAL_PINNED_H
#define ROCEVAL_PINNED_H

#include <net/if.h>
#include <stdbool.h>
#include <linux/types.h>

#include "iface.h"
#include "pins.h"

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
/* live_list() without the stale ones: the attachments that run here now. */
int live_list_local(char (*names)[IF_NAMESIZE], int max);
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

#endif
