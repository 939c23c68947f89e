/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The pin tree: the bpffs it lives in, its namespaces' directories and the
 * attachments listed from them; then, for live/ alone, its paths, lock and
 * pins, and the meta map every attachment carries.
 */
#ifndef ROCEVAL_PINS_H
#define ROCEVAL_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "iface.h"

/* Where the pins are on the host; a private mount namespace reaches them elsewhere. */
#define ROCEVAL_PIN_ROOT "/sys/fs/bpf/roceval"

/* An attachment in any network namespace: the directories it is pinned in. */
struct live_ref {
	char netns[LIVE_NS_LEN];
	char ifname[IF_NAMESIZE];
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
/* The name 'ip netns' knows the namespace of inode ino by (under /run/netns), or "". */
const char *live_netns_name(__u64 ino, char *buf, size_t len);
/* This namespace's pin directory for ifname. */
int live_pin_dir(char *buf, size_t len, const char *ifname);
/* Interfaces of this network namespace with pins, stale ones included, sorted; count or -errno. */
int live_list(char (*names)[IF_NAMESIZE], int max);
/* Every namespace's attachments, sorted by namespace and name; count or -errno. */
int live_list_all(struct live_ref *refs, int max);

/* Inside live/ */

/* Value of the pinned "meta" map: what the kernel does not record for us. */
struct live_meta {
	__u64 attached_since; /* CLOCK_REALTIME seconds */
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME, which is what rates since attach need */
	__u32 mode;	      /* enum live_mode actually in use */
	__u32 multiprog;
	__u32 ifindex;
	__u32 nic_clock;      /* the program asks the NIC for receive timestamps (roceval_xdp_nic) */
	__u64 netns_cookie; /* of the namespace attached in: its inode may be reused */
	__u32 pcp_source;     /* enum live_pcp_source */
	__u32 pad;
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
/* Whether this namespace's pins of name are a feed's (roceval feed), which no interface backs. */
bool pins_feed(const char *name);

#endif
