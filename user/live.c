// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Live attachments: load the XDP object, attach it to an interface through
 * a bpf_link (or libxdp's dispatcher with --multiprog) and pin everything
 * under ROCEVAL_PIN_ROOT/<ifname>/ so it outlives this process.
 *
 * The pin directory holds:
 *   prog      the XDP program
 *   link      the bpf_link (absent with --multiprog: libxdp owns that link)
 *   meta      a one-entry array written here: mode, multiprog, attach time
 *   <map>     every named map of the object (counters, settings, trace_rb, ...)
 * All changes to the pin tree happen under an flock on ROCEVAL_PIN_ROOT so
 * two attaches (CLI and daemon) cannot interleave.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <xdp/libxdp.h>

#include "common.h"
#include "flows.h"
#include "live.h"
#include "loader.h"

#define BPFFS "/sys/fs/bpf"

static __u32 live_flow_entries = ROCEVAL_DEFAULT_FLOWS;

void live_set_flow_entries(__u32 entries)
{
	live_flow_entries = entries;
	roceval_set_flow_entries(entries);
}

/* Value of the pinned "meta" map: what the kernel does not record for us. */
struct live_meta {
	__u64 attached_since; /* CLOCK_REALTIME seconds */
	__u64 attached_boot_ns; /* CLOCK_BOOTTIME, which is what rates since attach need */
	__u32 mode;	      /* enum live_mode actually in use */
	__u32 multiprog;
	__u32 ifindex;
	__u32 pad;
};

const char *live_mode_name(enum live_mode mode)
{
	switch (mode) {
	case LIVE_MODE_NATIVE:
		return "native";
	case LIVE_MODE_GENERIC:
		return "generic";
	default:
		return "auto";
	}
}

int live_ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs(BPFFS, &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_warn("Couldn't mount bpffs on %s: %s", BPFFS, strerror(errno));
		return err;
	}
	return 0;
}

/* Takes the pin-tree lock, creating ROCEVAL_PIN_ROOT as needed; returns the fd or -errno. */
static int pin_lock(void)
{
	int fd, err;

	err = live_ensure_bpffs();
	if (err)
		return err;
	if (mkdir(ROCEVAL_PIN_ROOT, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", ROCEVAL_PIN_ROOT, strerror(errno));
		return err;
	}
	fd = open(ROCEVAL_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		err = -errno;
		pr_warn("Couldn't lock %s: %s", ROCEVAL_PIN_ROOT, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

static void pin_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

static int pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	int n = name ? snprintf(buf, len, "%s/%s/%s", ROCEVAL_PIN_ROOT, ifname, name)
		     : snprintf(buf, len, "%s/%s", ROCEVAL_PIN_ROOT, ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int pin_fd(int fd, const char *ifname, const char *name)
{
	char path[256];
	int err = pin_path(path, sizeof(path), ifname, name);

	if (err)
		return err;
	if (bpf_obj_pin(fd, path) || chmod(path, 0600)) {
		err = -errno;
		pr_warn("Couldn't pin %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

static int pin_get(const char *ifname, const char *name)
{
	char path[256];

	int fd;

	if (pin_path(path, sizeof(path), ifname, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* Removes the pin directory and whatever is in it. */
static int pin_remove_all(const char *ifname)
{
	char dir[256], path[512];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (pin_path(dir, sizeof(dir), ifname, NULL))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	if (err)
		pr_warn("Couldn't remove the pins in %s: %s", dir, strerror(-err));
	return err;
}

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

	if (strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/') || ifname[0] == '.') {
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

/*
 * A pin directory whose link no longer points at a live interface (the
 * interface was deleted, or its namespace went away) is left over, not an
 * attachment: it is removed so the name can be attached again.
 */
static bool pins_stale(const char *ifname, int ifindex)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct live_meta meta;
	__u32 key = 0;
	int fd;
	bool stale = false;

	fd = pin_get(ifname, "meta");
	if (fd >= 0) {
		if (!bpf_map_lookup_elem(fd, &key, &meta) && meta.ifindex != (__u32)ifindex)
			stale = true;
		close(fd);
	}
	fd = pin_get(ifname, "link");
	if (fd >= 0) {
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.xdp.ifindex != (__u32)ifindex)
			stale = true;
		close(fd);
	}
	return stale;
}

static int attach_link(struct roceval_bpf *skel, int ifindex, enum live_mode mode, int *link_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int prog_fd = bpf_program__fd(skel->progs.roceval_xdp);
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
		pr_warn("%s: Couldn't attach XDP through libxdp's dispatcher: %s", ifname, strerror(-err));
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
		pr_warn("%s: libxdp could not load its dispatcher on this kernel (run with -v for why); "
			"attach without --multiprog", ifname);
		return -EOPNOTSUPP;
	}
	*out = prog;
	return 0;
}

static int pin_maps(struct bpf_object *obj, const char *ifname)
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

static int write_meta(const char *ifname, int ifindex, enum live_mode mode, bool multiprog)
{
	struct timespec boot;
	struct live_meta meta = {
		.attached_since = time(NULL),
		.mode = mode,
		.multiprog = multiprog,
		.ifindex = ifindex,
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

int live_attach(const char *ifname, enum live_mode mode, bool multiprog,
		const struct roceval_settings *settings, struct live_iface *out)
{
	struct xdp_program *xprog = NULL;
	struct roceval_bpf *skel = NULL;
	struct stat st;
	char dir[256];
	int ifindex, lock, link_fd = -1, err;
	bool dir_made = false;

	ifindex = ifindex_of(ifname);
	if (ifindex < 0)
		return ifindex;
	lock = pin_lock();
	if (lock < 0)
		return lock;
	if ((err = pin_path(dir, sizeof(dir), ifname, NULL)))
		goto out;
	if (!stat(dir, &st)) {
		if (!pins_stale(ifname, ifindex)) {
			int fd = pin_get(ifname, "prog");
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
				pr_warn("%s: roceval is already attached (program %u); 'roceval detach %s' first",
					ifname, info.id, ifname);
			else
				pr_warn("%s: roceval is already attached ('roceval detach %s' first)", ifname,
					ifname);
			if (fd >= 0)
				close(fd);
			err = -EEXIST;
			goto out;
		}
		pr_info("%s: removing pins left from an interface that is gone", ifname);
		if ((err = pin_remove_all(ifname)))
			goto out;
	}
	if ((err = check_free(ifname, ifindex, multiprog)))
		goto out;

	if (multiprog) {
		/* libxdp loads the object itself, as an extension of its dispatcher */
		libbpf_setup_logging();
		skel = roceval_bpf__open();
		if (!skel) {
			err = -errno;
			pr_warn("Couldn't open the BPF object: %s", strerror(errno));
			goto out;
		}
		bpf_program__set_autoload(skel->progs.roceval_replay, false);
		/* the same sizes roceval_load() gives the flow table */
		bpf_map__set_max_entries(skel->maps.flows, live_flow_entries);
		bpf_map__set_max_entries(skel->maps.flow_ring, live_flow_entries);
		skel->rodata->flow_capacity = live_flow_entries;
		err = attach_multiprog(skel, ifname, ifindex, mode, &xprog);
		if (err)
			goto out;
	} else {
		skel = roceval_load(LOAD_LIVE, true);
		if (!skel) {
			err = -EINVAL;
			goto out;
		}
		err = roceval_settings_write(bpf_map__fd(skel->maps.settings), settings);
		if (err) {
			pr_warn("Couldn't write the settings map: %s", strerror(-err));
			goto out;
		}
		err = attach_link(skel, ifindex, mode, &link_fd);
		if (err) {
			pr_warn("%s: Couldn't attach XDP%s%s: %s", ifname, mode == LIVE_MODE_AUTO ? "" : " in ",
				mode == LIVE_MODE_AUTO ? "" : live_mode_name(mode), strerror(-err));
			goto out;
		}
	}
	if (multiprog) {
		err = roceval_settings_write(bpf_map__fd(skel->maps.settings), settings);
		if (err) {
			pr_warn("Couldn't write the settings map: %s", strerror(-err));
			goto rollback;
		}
	}

	if (mkdir(dir, 0700)) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", dir, strerror(errno));
		goto rollback;
	}
	dir_made = true;
	mode = query_mode(ifindex);
	if ((err = pin_fd(multiprog ? xdp_program__fd(xprog) : bpf_program__fd(skel->progs.roceval_xdp),
			  ifname, "prog")) ||
	    (!multiprog && (err = pin_fd(link_fd, ifname, "link"))) ||
	    (err = pin_maps(skel->obj, ifname)) || (err = write_meta(ifname, ifindex, mode, multiprog)))
		goto rollback;

	if (out) {
		err = live_open(ifname, out);
		if (err) {
			pr_warn("%s: Couldn't reopen the pins: %s", ifname, strerror(-err));
			goto rollback;
		}
	}
	err = 0;
	goto out;

rollback:
	if (xprog)
		xdp_detach_current(xprog, ifindex);
	else if (link_fd >= 0)
		bpf_link_detach(link_fd);
	if (dir_made)
		pin_remove_all(ifname);
out:
	if (link_fd >= 0)
		close(link_fd);
	if (xprog)
		xdp_program__close(xprog);
	roceval_bpf__destroy(skel);
	pin_unlock(lock);
	return err;
}

int live_open(const char *ifname, struct live_iface *out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), key = 0;
	struct live_meta meta = {};
	char dir[256];
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	out->counters_fd = out->settings_fd = out->flows_fd = -1;
	out->trace_rbs_fd = out->trace_filters_fd = -1;
	if (pin_path(dir, sizeof(dir), ifname, NULL) || strlen(ifname) >= IF_NAMESIZE)
		return -ENAMETOOLONG;
	if (stat(dir, &st))
		return -errno;
	snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);

	fd = pin_get(ifname, "meta");
	if (fd < 0 || bpf_map_lookup_elem(fd, &key, &meta)) {
		err = fd < 0 ? fd : -errno;
		goto fail;
	}
	close(fd);
	out->ifindex = meta.ifindex;
	out->mode = meta.mode;
	out->multiprog = meta.multiprog;
	out->attached_since = meta.attached_since;
	out->attached_boot_ns = meta.attached_boot_ns;

	fd = pin_get(ifname, "prog");
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = fd < 0 ? fd : -errno;
		goto fail;
	}
	close(fd);
	out->prog_id = info.id;

	out->counters_fd = pin_get(ifname, "counters");
	out->settings_fd = pin_get(ifname, "settings");
	if (out->counters_fd < 0 || out->settings_fd < 0) {
		err = out->counters_fd < 0 ? out->counters_fd : out->settings_fd;
		goto fail;
	}
	/* optional maps: -1 when this build of the object has none */
	out->flows_fd = pin_get(ifname, "flows");
	if (out->flows_fd < 0)
		out->flows_fd = -1;
	out->trace_rbs_fd = pin_get(ifname, "trace_rbs");
	out->trace_filters_fd = pin_get(ifname, "trace_filters");
	if (out->trace_rbs_fd < 0 || out->trace_filters_fd < 0) {
		if (out->trace_rbs_fd >= 0)
			close(out->trace_rbs_fd);
		if (out->trace_filters_fd >= 0)
			close(out->trace_filters_fd);
		out->trace_rbs_fd = out->trace_filters_fd = -1;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	live_close(out);
	/* a directory without its pins is damage, not "not attached" */
	return err == -ENOENT ? -EUCLEAN : err;
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
		pr_warn("%s: pins in %s/%s are incomplete; 'roceval detach %s' removes them", ifname,
			ROCEVAL_PIN_ROOT, ifname, ifname);
	} else if (err == -EPERM || err == -EACCES) {
		pr_warn("%s: Couldn't open the pins: %s (are you root?)", ifname, strerror(-err));
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

int live_memory(const struct live_iface *li, __u64 *bytes, int *nmaps)
{
	__u32 ids[64], nids = 64;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err = 0;

	*bytes = 0;
	*nmaps = 0;
	fd = bpf_prog_get_fd_by_id(li->prog_id);
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
	fd = pin_get(li->ifname, "meta");
	if (fd >= 0) {
		*bytes += fd_memlock(fd);
		(*nmaps)++;
		close(fd);
	}
	return 0;
}

void live_close(struct live_iface *li)
{
	int *fds[] = { &li->counters_fd, &li->settings_fd, &li->flows_fd, &li->trace_rbs_fd,
		       &li->trace_filters_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
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

int live_detach(const char *ifname)
{
	struct live_meta meta = {};
	struct stat st;
	char dir[256];
	__u32 key = 0;
	int lock, fd, err = 0;

	if (strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/') || ifname[0] == '.') {
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
		pr_warn("%s: roceval is not attached", ifname);
		goto out;
	}
	fd = pin_get(ifname, "meta");
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &key, &meta);
		close(fd);
	}
	if (meta.multiprog) {
		int ifindex = if_nametoindex(ifname);

		/* without the interface there is nothing left to detach from */
		if (ifindex && (__u32)ifindex == meta.ifindex)
			err = detach_multiprog(ifname, ifindex, &meta);
	} else {
		fd = pin_get(ifname, "link");
		if (fd >= 0) {
			/* detach explicitly: another process may hold the link open */
			if (bpf_link_detach(fd) && errno != ENOLINK)
				err = -errno;
			close(fd);
		}
	}
	if (err) {
		pr_warn("%s: Couldn't detach: %s", ifname, strerror(-err));
		goto out;
	}
	err = pin_remove_all(ifname);
out:
	pin_unlock(lock);
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

int live_list(char (*names)[IF_NAMESIZE], int max)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir(ROCEVAL_PIN_ROOT);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%s", de->d_name);
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, cmp_names);
	return n;
}

int live_list_local(char (*names)[IF_NAMESIZE], int max)
{
	int n = live_list(names, max), kept = 0;

	for (int i = 0; i < n; i++) {
		struct live_meta meta;
		__u32 key = 0;
		int fd = pin_get(names[i], "meta"), ok;

		ok = fd >= 0 && !bpf_map_lookup_elem(fd, &key, &meta) &&
		     meta.ifindex == if_nametoindex(names[i]);
		if (fd >= 0)
			close(fd);
		if (ok && kept != i)
			memcpy(names[kept], names[i], IF_NAMESIZE);
		kept += ok;
	}
	return n < 0 ? n : kept;
}
