/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the live attachment code (pins.c, attach.c, live.c): the pin tree's
 * paths, lock and pins, and the meta map every attachment carries.  Callers
 * outside go through live.h.
 */
#ifndef ROCEVAL_PINS_H
#define ROCEVAL_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Value of the pinned "meta" map: what the kernel does not record for us. */
struct live_meta {
	__u64 attached_since; /* CLOCK_REALTIME seconds */
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME, which is what rates since attach need */
	__u32 mode;	      /* enum live_mode actually in use */
	__u32 multiprog;
	__u32 ifindex;
	__u32 nic_clock;      /* the program asks the NIC for receive timestamps (roceval_xdp_nic) */
	__u64 netns_cookie; /* of the namespace attached in: its inode may be reused */
};

/* This network namespace's cookie: unlike its inode, never reused. */
__u64 live_netns_cookie(void);
/* Takes the pin-tree lock, creating ROCEVAL_PIN_ROOT as needed; returns the fd or -errno. */
int pin_lock(void);
void pin_unlock(int fd);
/* <root>/<ns>/<ifname>/<name>; the namespace's directory when ifname is NULL. */
int pin_path_ns(char *buf, size_t len, const char *ns, const char *ifname, const char *name);
/* The same in this namespace. */
int pin_path(char *buf, size_t len, const char *ifname, const char *name);
/* Pins fd as this namespace's ifname/name, mode 0600. */
int pin_fd(int fd, const char *ifname, const char *name);
/* The pinned object's fd, or -errno. */
int pin_get_ns(const char *ns, const char *ifname, const char *name);
int pin_get(const char *ifname, const char *name);
/* Removes the pin directory and whatever is in it, and the namespace's when it is left empty. */
int pin_remove_all_ns(const char *ns, const char *ifname);
int pin_remove_all(const char *ifname);
/*
 * Whether the pins of ifname are left over from an interface that is gone
 * (ifindex: the interface's now, when this_ns).
 */
bool pins_stale_ns(const char *ns, const char *ifname, bool this_ns, int ifindex);
bool pins_stale(const char *ifname, int ifindex);

#endif
