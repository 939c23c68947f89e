// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Live attachments: load the XDP object, attach it to an interface through
 * a bpf_link (or libxdp's dispatcher with --multiprog) and pin everything
 * under <bpffs>/roceval/netns-<inode>/<ifname>/ so it outlives this process.
 *
 * bpffs is one tree for every network namespace, and interface names repeat
 * across namespaces (every container has an eth0): the directory of the
 * namespace (the inode `lsns -t net` shows) keeps them apart.  Inodes of dead
 * namespaces are reused, so meta also records the namespace's cookie, which
 * never is: pins whose cookie is not their namespace's are leftovers.
 *
 * The pin directory holds:
 *   prog      the XDP program
 *   link      the bpf_link (absent with --multiprog: libxdp owns that link)
 *   meta      a one-entry array written here: mode, multiprog, clock, PCP source, attach time
 *   <map>     every named map of the object (counters, settings, trace_rb, ...)
 * All changes to the pin tree happen under an flock on ROCEVAL_PIN_ROOT so
 * two attaches (CLI and daemon) cannot interleave.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "pinned.h"
#include "pins.h"
#include "roceval.h"
#include "roceval_cm.h"

bool live_stale(const struct live_iface *li)
{
	return pins_stale_ns(li->netns, li->ifname, li->this_netns,
			     li->this_netns ? (int)if_nametoindex(li->ifname) : 0);
}

/*
 * The pinned maps whose values this build reads into its own structs.  A
 * lookup copies the map's value size, not the reader's, so the maps of an
 * attachment another build of roceval made (an upgrade while attached) are
 * checked before any is read.
 */
static const struct {
	const char *name;
	__u32 value_size;
} pinned_layouts[] = {
	{ "meta", sizeof(struct live_meta) },
	{ "counters", sizeof(struct roceval_counters) },
	{ "settings", sizeof(struct roceval_settings) },
	{ "flows", sizeof(struct roceval_flow) },
	{ "flow_sets", sizeof(struct roceval_flow_set) },
	{ "flow_cold", sizeof(struct roceval_flow_cold) },
	{ "cm_conns", sizeof(struct roceval_conn) },
	{ "cm_ends", sizeof(struct roceval_cm_end) },
	{ "latency", sizeof(struct roceval_latency_hist) },
	{ "congestion", sizeof(struct roceval_congestion) },
	{ "trace_filters", sizeof(struct roceval_trace_filter) },
};
static char layout_mismatch[128];

void live_warn_layout(const char *ifname)
{
	pr_warn("%s: attached by another build of roceval (%s); 'roceval detach %s' and attach again", ifname,
		layout_mismatch, ifname);
}

/* 0, -EPROTO when a pinned map's values are not this build's size, or -errno. */
static int check_layouts(const char *ns, const char *ifname)
{
	for (size_t i = 0; i < sizeof(pinned_layouts) / sizeof(pinned_layouts[0]); i++) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = pin_get_ns(ns, ifname, pinned_layouts[i].name);
		int err;

		if (fd < 0)
			continue; /* absent: opening it says so where it is needed */
		err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
		close(fd);
		if (err)
			return err;
		if (info.value_size != pinned_layouts[i].value_size) {
			snprintf(layout_mismatch, sizeof(layout_mismatch), "its %s map holds %u-byte values, this build's %u",
				 pinned_layouts[i].name, info.value_size, pinned_layouts[i].value_size);
			return -EPROTO;
		}
	}
	return 0;
}

/* Optional maps that only work together (a flow table's parts): all, or -1 for all. */
static void pin_get_group(const char *ns, const char *ifname, const char *const names[], int *const fds[], int n)
{
	bool all = true;

	for (int i = 0; i < n; i++) {
		*fds[i] = pin_get_ns(ns, ifname, names[i]);
		all &= *fds[i] >= 0;
	}
	for (int i = 0; i < n && !all; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int live_open_ns(const char *ns, const char *ifname, struct live_iface *out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), key = 0;
	struct live_meta meta = {};
	char dir[PATH_MAX];
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	out->counters_fd = out->settings_fd = out->flows_fd = out->flow_cold_fd = out->flow_sets_fd = -1;
	out->cm_conns_fd = out->cm_ends_fd = out->cm_rej_fd = out->latency_fd = out->congestion_fd = -1;
	out->trace_rbs_fd = out->trace_filters_fd = out->mirror.sessions = out->mirror.stats = out->mirror.seq = -1;
	if ((err = live_init()))
		return err;
	if (pin_path_ns(dir, sizeof(dir), ns, ifname, NULL) || strlen(ifname) >= IF_NAMESIZE ||
	    strlen(ns) >= sizeof(out->netns))
		return -ENAMETOOLONG;
	if (stat(dir, &st))
		return -errno;
	snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);
	snprintf(out->netns, sizeof(out->netns), "%s", ns);
	out->this_netns = !strcmp(ns, live_netns());
	out->netns_ino = strtoull(ns + strlen("netns-"), NULL, 10);
	if ((err = check_layouts(ns, ifname)))
		return err;

	fd = pin_get_ns(ns, ifname, "meta");
	if (fd < 0 || bpf_map_lookup_elem(fd, &key, &meta)) {
		err = fd < 0 ? fd : -errno;
		goto fail;
	}
	close(fd);
	out->ifindex = meta.ifindex;
	out->mode = meta.mode;
	out->multiprog = meta.multiprog;
	out->nic_clock = meta.nic_clock;
	out->pcp_source = meta.pcp_source;
	out->attached_since = meta.attached_since;
	out->attached_boot_ns = meta.attached_boot_ns;

	fd = pin_get_ns(ns, ifname, "prog");
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = fd < 0 ? fd : -errno;
		goto fail;
	}
	close(fd);
	out->prog_id = info.id;

	out->counters_fd = pin_get_ns(ns, ifname, "counters");
	out->settings_fd = pin_get_ns(ns, ifname, "settings");
	if (out->counters_fd < 0 || out->settings_fd < 0) {
		err = out->counters_fd < 0 ? out->counters_fd : out->settings_fd;
		goto fail;
	}
	/* optional maps: -1 when this build of the object has none */
	pin_get_group(ns, ifname, (const char *const[]){ "flows", "flow_sets", "flow_cold" },
		      (int *const[]){ &out->flows_fd, &out->flow_sets_fd, &out->flow_cold_fd }, 3);
	pin_get_group(ns, ifname, (const char *const[]){ "trace_rbs", "trace_filters" },
		      (int *const[]){ &out->trace_rbs_fd, &out->trace_filters_fd }, 2);
	pin_get_group(ns, ifname, (const char *const[]){ "mirror_sessions", "mirror_stats", "mirror_seq" },
		      (int *const[]){ &out->mirror.sessions, &out->mirror.stats, &out->mirror.seq }, 3);
	out->cm_conns_fd = pin_get_ns(ns, ifname, "cm_conns");
	out->cm_ends_fd = pin_get_ns(ns, ifname, "cm_ends");
	out->cm_rej_fd = pin_get_ns(ns, ifname, "cm_rej_reasons");
	out->cm_conns_fd = out->cm_conns_fd < 0 ? -1 : out->cm_conns_fd;
	out->cm_ends_fd = out->cm_ends_fd < 0 ? -1 : out->cm_ends_fd;
	out->cm_rej_fd = out->cm_rej_fd < 0 ? -1 : out->cm_rej_fd;
	out->latency_fd = pin_get_ns(ns, ifname, "latency");
	out->latency_fd = out->latency_fd < 0 ? -1 : out->latency_fd;
	out->congestion_fd = pin_get_ns(ns, ifname, "congestion");
	out->congestion_fd = out->congestion_fd < 0 ? -1 : out->congestion_fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	live_close(out);
	/* a directory without its pins is damage, not "not attached" */
	return err == -ENOENT ? -EUCLEAN : err;
}

int live_open(const char *ifname, struct live_iface *out)
{
	int err = live_init();

	return err ? err : live_open_ns(live_netns(), ifname, out);
}

int live_open_ref(const struct live_ref *ref, struct live_iface *out)
{
	int err = live_init();

	return err ? err : live_open_ns(ref->netns, ref->ifname, out);
}

int live_open_report(const char *ifname, struct live_iface *out)
{
	int err = live_open(ifname, out);

	if (err == -ENOENT) {
		if (!if_nametoindex(ifname))
			pr_warn("%s: no such interface", ifname);
		else
			pr_warn("%s: roceval is not attached; see 'roceval help attach'", ifname);
	} else if (err == -EUCLEAN) {
		pr_warn("%s: pins in %s/%s/%s are incomplete; 'roceval detach %s' removes them", ifname,
			live_pin_root(), live_netns(), ifname, ifname);
	} else if (err == -EPROTO) {
		live_warn_layout(ifname);
	} else if (err == -EXDEV) {
		/* live_init() said why */
	} else if (err == -EPERM || err == -EACCES) {
		pr_warn("%s: Couldn't open the pins: %s (they are root's)", ifname, strerror(-err));
	} else if (err) {
		pr_warn("%s: Couldn't open the pins: %s", ifname, strerror(-err));
	}
	return err;
}

/* The memlock figure the kernel reports for a BPF fd: what it charges for the map. */
static __u64 fd_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Sums what the kernel charges for the maps pinned in li's directory (prog and link are not maps). */
static int pinned_memory(const struct live_iface *li, __u64 *bytes, int *nmaps)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (pin_path_ns(dir, sizeof(dir), li->netns, li->ifname, NULL) || !(d = opendir(dir)))
		return -errno ?: -ENAMETOOLONG;
	while ((de = readdir(d))) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "prog") || !strcmp(de->d_name, "link"))
			continue;
		fd = pin_get_ns(li->netns, li->ifname, de->d_name);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			*bytes += fd_memlock(fd);
			(*nmaps)++;
		}
		close(fd);
	}
	closedir(d);
	return 0;
}

int live_memory(const struct live_iface *li, __u64 *bytes, int *nmaps)
{
	__u32 ids[64], nids = 64;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err = 0;

	*bytes = 0;
	*nmaps = 0;
	/* by id, the program's own .rodata and .bss too; that takes CAP_SYS_ADMIN */
	fd = bpf_prog_get_fd_by_id(li->prog_id);
	if (fd < 0 && errno == EPERM)
		return pinned_memory(li, bytes, nmaps);
	if (fd < 0)
		return -errno;
	info.nr_map_ids = nids;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	if (err)
		return err;
	nids = info.nr_map_ids < nids ? info.nr_map_ids : nids;
	for (__u32 i = 0; i < nids; i++) {
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		*bytes += fd_memlock(mfd);
		(*nmaps)++;
		close(mfd);
	}
	fd = pin_get_ns(li->netns, li->ifname, "meta");
	if (fd >= 0) {
		*bytes += fd_memlock(fd);
		(*nmaps)++;
		close(fd);
	}
	return 0;
}

void live_close(struct live_iface *li)
{
	int *fds[] = { &li->counters_fd, &li->settings_fd, &li->flows_fd, &li->flow_cold_fd, &li->flow_sets_fd,
		       &li->trace_rbs_fd, &li->trace_filters_fd, &li->cm_conns_fd, &li->cm_ends_fd, &li->cm_rej_fd, &li->latency_fd,
		       &li->congestion_fd, &li->mirror.sessions, &li->mirror.stats,
		       &li->mirror.seq };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int live_open_local(const char *ifname, struct live_iface *li, int max)
{
	char names[LIVE_MAX_IFACES][IF_NAMESIZE];
	int n, opened = 0;

	if (ifname)
		return live_open_report(ifname, &li[0]) ? -1 : 1;
	n = live_list_local(names, max < LIVE_MAX_IFACES ? max : LIVE_MAX_IFACES);
	if (n < 0) {
		pr_warn("Couldn't list %s: %s", live_pin_root(), strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++)
		opened += !live_open_report(names[i], &li[opened]);
	if (!opened)
		pr_warn("no interface has roceval attached; see 'roceval help attach'");
	return opened ? opened : -1;
}

void live_close_all(struct live_iface *li, int n)
{
	for (int i = 0; i < n; i++)
		live_close(&li[i]);
}

static int detach_multiprog(const char *ifname, int ifindex, const struct live_meta *meta)
{
	struct xdp_program *prog;
	int fd, err;

	fd = pin_get(ifname, "prog");
	if (fd < 0)
		return fd;
	prog = xdp_program__from_fd(fd);
	err = libxdp_get_error(prog);
	if (err) {
		close(fd);
		return err;
	}
	err = xdp_program__detach(prog, ifindex,
				  meta->mode == LIVE_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	xdp_program__close(prog);
	return err;
}

/* Detaches and unpins one attachment; the caller holds the pin lock. */
static int detach_locked(const char *ns, const char *ifname)
{
	struct live_meta meta = {};
	__u32 key = 0;
	int fd, err = 0;

	fd = pin_get_ns(ns, ifname, "meta");
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &key, &meta);
		close(fd);
	}
	if (meta.multiprog) {
		/* libxdp works by ifindex, which only means something in the namespace itself */
		int ifindex = strcmp(ns, live_netns()) ? 0 : if_nametoindex(ifname);

		/* without the interface there is nothing left to detach from */
		if (ifindex && (__u32)ifindex == meta.ifindex && meta.netns_cookie == live_netns_cookie())
			err = detach_multiprog(ifname, ifindex, &meta);
	} else {
		fd = pin_get_ns(ns, ifname, "link");
		if (fd >= 0) {
			/* detach explicitly: another process may hold the link open */
			if (bpf_link_detach(fd) && errno != ENOLINK)
				err = -errno;
			close(fd);
		}
	}
	if (err) {
		pr_warn("%s: Couldn't detach: %s", ifname, strerror(-err));
		return err;
	}
	return pin_remove_all_ns(ns, ifname);
}

int live_detach(const char *ifname)
{
	struct stat st;
	char dir[PATH_MAX];
	int lock, err = 0;

	if (!live_ifname_valid(ifname)) {
		pr_warn("%s: not a valid interface name", ifname);
		return -EINVAL;
	}
	lock = pin_lock();
	if (lock < 0)
		return lock;
	if ((err = pin_path(dir, sizeof(dir), ifname, NULL)))
		goto out;
	if (stat(dir, &st)) {
		err = -ENOENT;
		if (if_nametoindex(ifname))
			pr_warn("%s: roceval is not attached", ifname);
		else
			pr_warn("%s: no such interface, and roceval has no pins for one in this network namespace",
				ifname);
		goto out;
	}
	err = detach_locked(live_netns(), ifname);
out:
	pin_unlock(lock);
	return err;
}

int live_list_local(char (*names)[IF_NAMESIZE], int max)
{
	int n = live_list(names, max), kept = 0;

	for (int i = 0; i < n; i++) {
		int ifindex = if_nametoindex(names[i]);
		bool ok = pins_feed(names[i]) || (ifindex && !pins_stale(names[i], ifindex));

		if (ok && kept != i)
			memcpy(names[kept], names[i], IF_NAMESIZE);
		kept += ok;
	}
	return n < 0 ? n : kept;
}

int live_detach_stale(bool all)
{
	struct live_ref refs[256];
	int n, lock, removed = 0, err = 0;

	lock = pin_lock();
	if (lock < 0)
		return lock;
	n = live_list_all(refs, 256);
	if (n < 0) {
		pr_warn("Couldn't list %s: %s", live_pin_root(), strerror(-n));
		err = n;
	}
	for (int i = 0; i < n; i++) {
		bool this_ns = !strcmp(refs[i].netns, live_netns());

		if (!all && !this_ns)
			continue;
		if (!pins_stale_ns(refs[i].netns, refs[i].ifname, this_ns,
				   this_ns ? (int)if_nametoindex(refs[i].ifname) : 0))
			continue;
		if (detach_locked(refs[i].netns, refs[i].ifname)) {
			err = -EIO;
			continue;
		}
		printf("%s: removed the pins of a stale attachment (%s)\n", refs[i].ifname, refs[i].netns);
		removed++;
	}
	pin_unlock(lock);
	return err ? err : removed;
}
