// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * live_attach(): refuse what is already there, load (or hand the opened
 * object to libxdp's dispatcher), attach, pin; a failure at any step undoes
 * the steps before it, so nothing is left behind.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <xdp/libxdp.h>

#include "hook.h"
#include "loader.h"
#include "log.h"
#include "pinned.h"
#include "pins.h"
#include "roceval.skel.h"

static const char *prog_name_by_id(__u32 id, char *buf, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(buf, len, "unknown");
	if (fd < 0)
		return buf;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) && info.name[0])
		snprintf(buf, len, "%s", info.name);
	close(fd);
	return buf;
}

static int ifindex_of(const char *ifname)
{
	int ifindex;

	if (!live_ifname_valid(ifname)) {
		pr_warn("%s: not a valid interface name", ifname);
		return -EINVAL;
	}
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		pr_warn("%s: no such interface", ifname);
		return -ENODEV;
	}
	return ifindex;
}

/* The mode the kernel reports for the XDP program on ifindex. */
static enum live_mode query_mode(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return LIVE_MODE_AUTO;
	if (q.attach_mode == XDP_ATTACHED_SKB)
		return LIVE_MODE_GENERIC;
	if (q.attach_mode == XDP_ATTACHED_DRV)
		return LIVE_MODE_NATIVE;
	if (q.attach_mode == XDP_ATTACHED_MULTI)
		return q.drv_prog_id ? LIVE_MODE_NATIVE : LIVE_MODE_GENERIC;
	return LIVE_MODE_AUTO;
}

/* BPF_TCX_INGRESS (kernel 6.6): newer than the uapi headers libbpf 1.1 comes with */
#define ROCEVAL_TCX_INGRESS 46

static int attach_tcx(struct roceval_bpf *skel, int ifindex, int *link_fd)
{
	int fd = bpf_link_create(bpf_program__fd(skel->progs.roceval_tc), ifindex, ROCEVAL_TCX_INGRESS, NULL);

	if (fd < 0)
		return -errno;
	*link_fd = fd;
	return 0;
}

static int attach_link(struct roceval_bpf *skel, int ifindex, enum live_mode mode, int *link_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int prog_fd = bpf_program__fd(roceval_live_prog(skel));
	int fd;

	if (mode == LIVE_MODE_AUTO) {
		fd = attach_link(skel, ifindex, LIVE_MODE_NATIVE, link_fd);
		if (fd != -EOPNOTSUPP && fd != -EINVAL)
			return fd;
		pr_info("native XDP not supported here, using generic mode");
		return attach_link(skel, ifindex, LIVE_MODE_GENERIC, link_fd);
	}
	opts.flags = mode == LIVE_MODE_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd < 0)
		return -errno;
	*link_fd = fd;
	return 0;
}

/* libxdp detaches only in the mode named, which must be the one in use. */
static void xdp_detach_current(struct xdp_program *prog, int ifindex)
{
	enum xdp_attach_mode m = query_mode(ifindex) == LIVE_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE;

	xdp_program__detach(prog, ifindex, m, 0);
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBXDP_WARN || level == LIBXDP_INFO) ? verbose < 1 : verbose < 2)
		return 0;
	fputs("libxdp: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/*
 * libxdp falls back to attaching the program alone when the kernel will not
 * run its dispatcher (freplace refused): that is not what --multiprog asked
 * for, since nothing else could then join, so it is undone and reported.
 */
static int attach_multiprog(struct roceval_bpf *skel, const char *ifname, int ifindex,
			    enum live_mode mode, struct xdp_program **out)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .obj = skel->obj, .prog_name = "roceval_xdp");
	enum xdp_attach_mode xmode = mode == LIVE_MODE_NATIVE	 ? XDP_MODE_NATIVE
				     : mode == LIVE_MODE_GENERIC ? XDP_MODE_SKB
								 : XDP_MODE_UNSPEC;
	struct xdp_multiprog *mp;
	struct xdp_program *prog;
	bool legacy;
	int err;

	libxdp_set_print(libxdp_print);
	prog = xdp_program__create(&opts);
	err = libxdp_get_error(prog);
	if (err) {
		pr_warn("%s: Couldn't prepare the program for libxdp: %s", ifname, strerror(-err));
		return err;
	}
	xdp_program__set_xdp_frags_support(prog, true);
	err = xdp_program__attach(prog, ifindex, xmode, 0);
	if (err && xmode == XDP_MODE_UNSPEC && (err == -EOPNOTSUPP || err == -EINVAL))
		err = xdp_program__attach(prog, ifindex, XDP_MODE_SKB, 0);
	if (err) {
		/* e.g. the program there is not a dispatcher and libxdp cannot make it one */
		pr_info("%s: Couldn't attach XDP through libxdp's dispatcher: %s", ifname, strerror(-err));
		xdp_program__close(prog);
		return err;
	}
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	legacy = libxdp_get_error(mp) || xdp_multiprog__is_legacy(mp);
	if (!libxdp_get_error(mp))
		xdp_multiprog__close(mp);
	if (legacy) {
		xdp_detach_current(prog, ifindex);
		xdp_program__close(prog);
		pr_info("%s: libxdp could not load its dispatcher on this kernel", ifname);
		return -EOPNOTSUPP;
	}
	*out = prog;
	return 0;
}

int live_pin_maps(struct bpf_object *obj, const char *ifname)
{
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, obj) {
		/* .rodata and friends are the object's own, never shared */
		if (bpf_map__is_internal(map))
			continue;
		err = pin_fd(bpf_map__fd(map), ifname, bpf_map__name(map));
		if (err)
			return err;
	}
	return 0;
}

int live_write_meta(const char *ifname, int ifindex, enum live_mode mode, bool multiprog, bool nic_clock,
		    enum live_pcp_source pcp_source)
{
	struct timespec boot;
	struct live_meta meta = {
		.attached_since = time(NULL),
		.mode = mode,
		.multiprog = multiprog,
		.nic_clock = nic_clock,
		.pcp_source = pcp_source,
		.ifindex = ifindex,
		.netns_cookie = live_netns_cookie(),
	};
	__u32 key = 0;
	int fd, err;

	clock_gettime(CLOCK_BOOTTIME, &boot);
	meta.attached_boot_ns = boot.tv_sec * 1000000000ULL + boot.tv_nsec;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "roceval_meta", sizeof(key), sizeof(meta), 1, NULL);
	if (fd < 0) {
		err = -errno;
		pr_warn("Couldn't create the meta map: %s", strerror(errno));
		return err;
	}
	err = bpf_map_update_elem(fd, &key, &meta, BPF_ANY) ? -errno : 0;
	if (err)
		pr_warn("Couldn't write the meta map: %s", strerror(-err));
	else
		err = pin_fd(fd, ifname, "meta");
	close(fd);
	return err;
}

/* Refuses when anything, roceval included, already runs XDP on ifindex. */
static int check_free(const char *ifname, int ifindex, bool multiprog)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN + 8];
	__u32 id;

	if (bpf_xdp_query(ifindex, 0, &q)) {
		int err = -errno;

		pr_warn("%s: Couldn't query XDP: %s", ifname, strerror(errno));
		return err;
	}
	id = q.prog_id ?: q.drv_prog_id ?: q.skb_prog_id ?: q.hw_prog_id;
	if (!id || multiprog)
		return 0;
	pr_warn("%s: already has XDP program %u (%s); detach it or use --multiprog", ifname, id,
		prog_name_by_id(id, name, sizeof(name)));
	return -EEXIST;
}

/*
 * Refuses a name roceval is attached to already; pins left by an interface
 * that is gone are removed so the name can be attached again.  The caller
 * holds the pin lock.
 */
static int check_not_attached(const char *ifname, int ifindex)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char dir[PATH_MAX];
	struct stat st;
	int fd, err;

	if ((err = pin_path(dir, sizeof(dir), ifname, NULL)))
		return err;
	if (stat(dir, &st))
		return 0;
	if (pins_stale(ifname, ifindex)) {
		pr_info("%s: removing pins left from an interface that is gone", ifname);
		return pin_remove_all(ifname);
	}
	fd = pin_get(ifname, "prog");
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
		pr_warn("%s: roceval is already attached (program %u); 'roceval detach %s' first", ifname,
			info.id, ifname);
	else
		pr_warn("%s: roceval is already attached ('roceval detach %s' first)", ifname, ifname);
	if (fd >= 0)
		close(fd);
	return -EEXIST;
}

/* What live_attach() has set up so far, so that a failure undoes exactly that. */
struct attachment {
	const char *ifname;
	int ifindex;
	enum live_mode mode;
	bool multiprog;
	bool fell_back; /* --multiprog ended at tc ingress */
	bool nic_clock; /* roceval_xdp_nic attached */
	bool rx_vlan;	/* and it asks the driver for the VLAN tag it stripped */
	struct roceval_bpf *skel;
	struct xdp_program *xprog; /* multiprog: libxdp's handle */
	int link_fd;		   /* otherwise: the bpf_link */
	bool dir_made;
};

static int write_settings(struct roceval_bpf *skel, const struct roceval_settings *settings)
{
	int err = roceval_settings_write(bpf_map__fd(skel->maps.settings), settings);

	if (err)
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
	return err;
}

/*
 * Through libxdp's dispatcher, which loads the opened object itself as an
 * extension of the dispatcher, so the settings are written after.  When the
 * dispatcher cannot run here (freplace refused, or a program attached
 * without it is in the way) a.skel is left NULL for tc ingress, which
 * chains with anything.
 */
static int attach_dispatched(struct attachment *a, const struct roceval_settings *settings)
{
	a->skel = roceval_open(LOAD_LIVE, false);
	if (!a->skel)
		return -EINVAL;
	if (attach_multiprog(a->skel, a->ifname, a->ifindex, a->mode, &a->xprog)) {
		roceval_bpf__destroy(a->skel);
		a->skel = NULL;
		a->multiprog = false;
		a->mode = LIVE_MODE_TC;
		a->fell_back = true;
		return 0;
	}
	return write_settings(a->skel, settings);
}

/*
 * Native XDP that reads the NIC's receive timestamps, where the kernel can
 * bind a program to the device.  Nothing is printed when it cannot (an
 * older kernel, a driver without native XDP): the caller goes on with the
 * program every mode can run, and status tells the clock.
 */
static bool attach_nic(struct attachment *a, const struct roceval_settings *settings)
{
	int err;

	if (a->mode != LIVE_MODE_NATIVE && a->mode != LIVE_MODE_AUTO)
		return false;
	a->skel = roceval_load_nic(a->ifindex);
	if (!a->skel)
		return false;
	err = write_settings(a->skel, settings);
	if (!err)
		err = attach_link(a->skel, a->ifindex, LIVE_MODE_NATIVE, &a->link_fd);
	if (!err) {
		a->mode = LIVE_MODE_NATIVE;
		a->nic_clock = true;
		a->rx_vlan = a->skel->rodata->rx_vlan_offered;
		return true;
	}
	pr_info("%s: Couldn't attach XDP bound to the device in native mode: %s", a->ifname, strerror(-err));
	roceval_bpf__destroy(a->skel);
	a->skel = NULL;
	return false;
}

/* Loads with the settings in place before the first frame, then links at tc ingress or XDP. */
static int attach_linked(struct attachment *a, const struct roceval_settings *settings)
{
	int err;

	if (attach_nic(a, settings))
		return 0;
	a->skel = roceval_load(a->mode == LIVE_MODE_TC ? LOAD_TC : LOAD_LIVE, true);
	if (!a->skel)
		return -EINVAL;
	if ((err = write_settings(a->skel, settings)))
		return err;
	if (a->mode == LIVE_MODE_TC) {
		err = attach_tcx(a->skel, a->ifindex, &a->link_fd);
		if (err)
			pr_warn("%s: Couldn't attach at tc ingress: %s%s", a->ifname, strerror(-err),
				err == -EINVAL ? " (tcx links need kernel 6.6 or later)" : "");
		return err;
	}
	err = attach_link(a->skel, a->ifindex, a->mode, &a->link_fd);
	if (err)
		pr_warn("%s: Couldn't attach XDP%s%s: %s", a->ifname, a->mode == LIVE_MODE_AUTO ? "" : " in ",
			a->mode == LIVE_MODE_AUTO ? "" : live_mode_name(a->mode), strerror(-err));
	return err;
}

/* The namespace's directory, the interface's, then the program, the link, the maps and meta. */
static int pin_attachment(struct attachment *a)
{
	char dir[PATH_MAX];
	int err, prog_fd;

	if ((err = pin_path(dir, sizeof(dir), NULL, NULL)))
		return err;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", dir, strerror(errno));
		return err;
	}
	pin_path(dir, sizeof(dir), a->ifname, NULL);
	if (mkdir(dir, 0700)) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", dir, strerror(errno));
		return err;
	}
	a->dir_made = true;
	if (a->mode != LIVE_MODE_TC)
		a->mode = query_mode(a->ifindex);
	prog_fd = a->multiprog		  ? xdp_program__fd(a->xprog)
		  : a->mode == LIVE_MODE_TC ? bpf_program__fd(a->skel->progs.roceval_tc)
					    : bpf_program__fd(roceval_live_prog(a->skel));
	if ((err = pin_fd(prog_fd, a->ifname, "prog")) ||
	    (!a->multiprog && (err = pin_fd(a->link_fd, a->ifname, "link"))) ||
	    (err = live_pin_maps(a->skel->obj, a->ifname)))
		return err;
	return live_write_meta(a->ifname, a->ifindex, a->mode, a->multiprog, a->nic_clock,
			       a->mode == LIVE_MODE_TC ? LIVE_PCP_SKB : a->rx_vlan ? LIVE_PCP_RX_META : LIVE_PCP_FRAME);
}

/* Undoes an attachment that failed halfway: detached, unpinned. */
static void attachment_undo(struct attachment *a)
{
	if (a->xprog)
		xdp_detach_current(a->xprog, a->ifindex);
	else if (a->link_fd >= 0)
		bpf_link_detach(a->link_fd);
	if (a->dir_made)
		pin_remove_all(a->ifname);
}

/* The loaded object and handles: the pins keep what is attached. */
static void attachment_close(struct attachment *a)
{
	if (a->link_fd >= 0)
		close(a->link_fd);
	if (a->xprog)
		xdp_program__close(a->xprog);
	roceval_bpf__destroy(a->skel);
}

int live_attach(const char *ifname, enum live_mode mode, bool multiprog,
		const struct roceval_settings *settings, struct live_iface *out)
{
	struct attachment a = { .ifname = ifname, .mode = mode, .multiprog = multiprog, .link_fd = -1 };
	int lock, err;

	a.ifindex = ifindex_of(ifname);
	if (a.ifindex < 0)
		return a.ifindex;
	lock = pin_lock();
	if (lock < 0)
		return lock;
	if ((err = check_not_attached(ifname, a.ifindex)) ||
	    (err = check_free(ifname, a.ifindex, multiprog || mode == LIVE_MODE_TC)))
		goto out;
	if (a.multiprog && (err = attach_dispatched(&a, settings)))
		goto fail;
	if (!a.multiprog && (err = attach_linked(&a, settings)))
		goto fail;
	if ((err = pin_attachment(&a)))
		goto fail;
	if (out && (err = live_open(ifname, out))) {
		pr_warn("%s: Couldn't reopen the pins: %s", ifname, strerror(-err));
		goto fail;
	}
	if (a.fell_back)
		pr_warn("%s: libxdp's dispatcher cannot run here (-v says why): attached at tc ingress "
			"instead, where it sees what the XDP program passes on", ifname);
	goto out;
fail:
	attachment_undo(&a);
out:
	attachment_close(&a);
	pin_unlock(lock);
	return err;
}
