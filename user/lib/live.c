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
#include <sys/socket.h>
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
/* pid 1's view of the host's bpffs, for a command run in a private mount namespace */
#define HOST_BPFFS "/proc/1/root/sys/fs/bpf"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* Where the pins of this process's network namespace are: resolved once. */
static struct {
	bool done;
	bool unmounted; /* nothing mounted yet where the pins will go */
	char root[PATH_MAX]; /* <bpffs>/roceval */
	char ns[LIVE_NS_LEN]; /* netns-<inode> */
	__u64 cookie;
	__u64 ino;
} here;

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
	__u64 netns_cookie; /* of the namespace attached in: its inode may be reused */
};

const char *live_mode_name(enum live_mode mode)
{
	switch (mode) {
	case LIVE_MODE_NATIVE:
		return "native";
	case LIVE_MODE_GENERIC:
		return "generic";
	case LIVE_MODE_TC:
		return "tc";
	default:
		return "auto";
	}
}

const char *live_hook_name(enum live_mode mode)
{
	return mode == LIVE_MODE_TC ? "tc" : "xdp";
}

static bool is_bpffs(const char *path, dev_t *dev)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(path, &sfs) || sfs.f_type != BPF_FS_MAGIC || stat(path, &st))
		return false;
	*dev = st.st_dev;
	return true;
}

static bool same_link(const char *a, const char *b)
{
	char la[64], lb[64];
	ssize_t na = readlink(a, la, sizeof(la)), nb = readlink(b, lb, sizeof(lb));

	return na > 0 && na == nb && !memcmp(la, lb, na);
}

/*
 * Whether this process runs in the host's mount namespace, where a bpffs it
 * mounts outlives it: pid 1's, and pid 1 the host's init, not a container's
 * (the initial pid namespace's inode is fixed, PROC_PID_INIT_INO).
 */
static bool host_mount_ns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) && st.st_ino == 0xEFFFFFFCU &&
	       same_link("/proc/self/ns/mnt", "/proc/1/ns/mnt");
}

/* This network namespace's name under /run/netns (as 'ip netns' made it), or "NS". */
static const char *netns_run_name(char *buf, size_t len)
{
	struct stat self, st;
	struct dirent *de;
	DIR *d = opendir("/run/netns");

	snprintf(buf, len, "NS");
	if (!d)
		return buf;
	while (!stat("/proc/self/ns/net", &self) && (de = readdir(d))) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == self.st_ino &&
		    st.st_dev == self.st_dev) {
			snprintf(buf, len, "%s", de->d_name);
			break;
		}
	}
	closedir(d);
	return buf;
}

/*
 * The bpffs that outlives this command.  `ip netns exec` runs its command in
 * a mount namespace of its own with a fresh /sys: a bpffs mounted there, and
 * every pin in it, dies with the command, and with the pins the attachment.
 * So the host's bpffs is used through pid 1's root when this one is not it,
 * bpffs is mounted only in the host's mount namespace, and where neither can
 * be had the command refuses rather than attach for the length of its life.
 */
static int resolve_bpffs(bool may_mount, char *out, size_t len)
{
	dev_t ours = 0, host = 0;
	bool have_ours = is_bpffs(BPFFS, &ours), have_host = is_bpffs(HOST_BPFFS, &host);

	if (have_host && (!have_ours || ours != host)) {
		pr_info("using the host's bpffs through %s: %s here is not it", HOST_BPFFS, BPFFS);
		snprintf(out, len, "%s", HOST_BPFFS);
		return 0;
	}
	if (have_ours) {
		snprintf(out, len, "%s", BPFFS);
		return 0;
	}
	if (!host_mount_ns()) {
		char name[NAME_MAX + 1];

		pr_warn("%s is not the host's bpffs in this mount namespace (a private one, as 'ip netns "
			"exec' or a container makes) and the host's is out of reach: pins made here would "
			"vanish with this command; run 'nsenter --net=/run/netns/%s roceval ...' instead, or "
			"mount the host's bpffs on %s",
			BPFFS, netns_run_name(name, sizeof(name)), BPFFS);
		return -EXDEV;
	}
	snprintf(out, len, "%s", BPFFS);
	if (!may_mount)
		return 1; /* nothing pinned to find: the caller reads an empty tree */
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_warn("Couldn't mount bpffs on %s: %s", BPFFS, strerror(errno));
		return err;
	}
	return 0;
}

/* This network namespace's inode and cookie. */
static int netns_identity(__u64 *ino, __u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	struct stat st;
	int fd, err = 0;

	if (stat("/proc/self/ns/net", &st)) {
		err = -errno;
		pr_warn("Couldn't identify the network namespace: %s", strerror(errno));
		return err;
	}
	*ino = st.st_ino;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len)) {
		err = -errno;
		pr_warn("Couldn't read the network namespace's cookie: %s", strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static int live_resolve(bool may_mount)
{
	char bpffs[PATH_MAX - 16];
	int ret, err;

	if (here.done && !(here.unmounted && may_mount))
		return 0;
	ret = resolve_bpffs(may_mount, bpffs, sizeof(bpffs));
	if (ret < 0)
		return ret;
	if (!here.done && (err = netns_identity(&here.ino, &here.cookie)))
		return err;
	here.unmounted = ret == 1;
	snprintf(here.root, sizeof(here.root), "%s/roceval", bpffs);
	snprintf(here.ns, sizeof(here.ns), "netns-%llu", (unsigned long long)here.ino);
	here.done = true;
	return 0;
}

int live_ensure_bpffs(void)
{
	return live_resolve(true);
}

int live_init(void)
{
	return live_resolve(false);
}

const char *live_pin_root(void)
{
	return here.done ? here.root : ROCEVAL_PIN_ROOT;
}

const char *live_netns(void)
{
	return here.ns;
}

int live_pin_dir(char *buf, size_t len, const char *ifname)
{
	int n = snprintf(buf, len, "%s/%s/%s", live_pin_root(), here.ns, ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Takes the pin-tree lock, creating ROCEVAL_PIN_ROOT as needed; returns the fd or -errno. */
static int pin_lock(void)
{
	int fd, err;

	err = live_ensure_bpffs();
	if (err)
		return err;
	if (mkdir(here.root, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", here.root, strerror(errno));
		return err;
	}
	fd = open(here.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		err = -errno;
		pr_warn("Couldn't lock %s: %s", here.root, strerror(errno));
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

/* <root>/<ns>/<ifname>/<name>; the namespace's directory when ifname is NULL. */
static int pin_path_ns(char *buf, size_t len, const char *ns, const char *ifname, const char *name)
{
	int n = name	 ? snprintf(buf, len, "%s/%s/%s/%s", here.root, ns, ifname, name)
		: ifname ? snprintf(buf, len, "%s/%s/%s", here.root, ns, ifname)
			 : snprintf(buf, len, "%s/%s", here.root, ns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	return pin_path_ns(buf, len, here.ns, ifname, name);
}

static int pin_fd(int fd, const char *ifname, const char *name)
{
	char path[PATH_MAX];
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

static int pin_get_ns(const char *ns, const char *ifname, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (pin_path_ns(path, sizeof(path), ns, ifname, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

static int pin_get(const char *ifname, const char *name)
{
	return pin_get_ns(here.ns, ifname, name);
}

/* Removes the pin directory and whatever is in it, and the namespace's when it is left empty. */
static int pin_remove_all_ns(const char *ns, const char *ifname)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (pin_path_ns(dir, sizeof(dir), ns, ifname, NULL))
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
	else if (!pin_path_ns(dir, sizeof(dir), ns, NULL, NULL))
		rmdir(dir); /* ENOTEMPTY while the namespace has other attachments */
	return err;
}

static int pin_remove_all(const char *ifname)
{
	return pin_remove_all_ns(here.ns, ifname);
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
static bool pins_stale_ns(const char *ns, const char *ifname, bool this_ns, int ifindex)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct live_meta meta = {};
	__u32 key = 0;
	int fd;
	bool stale = false;

	fd = pin_get_ns(ns, ifname, "meta");
	if (fd >= 0) {
		if (!bpf_map_lookup_elem(fd, &key, &meta) &&
		    (this_ns ? meta.ifindex != (__u32)ifindex || meta.netns_cookie != here.cookie : false))
			stale = true;
		close(fd);
	}
	/*
	 * The kernel clears a link's ifindex when its interface goes, in any
	 * namespace; a tcx link's ifindex sits where an XDP link's does.
	 */
	fd = pin_get_ns(ns, ifname, "link");
	if (fd >= 0) {
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    (!info.xdp.ifindex || (this_ns && info.xdp.ifindex != (__u32)ifindex)))
			stale = true;
		close(fd);
	}
	return stale;
}

static bool pins_stale(const char *ifname, int ifindex)
{
	return pins_stale_ns(here.ns, ifname, true, ifindex);
}

bool live_stale(const struct live_iface *li)
{
	return pins_stale_ns(li->netns, li->ifname, li->this_netns,
			     li->this_netns ? (int)if_nametoindex(li->ifname) : 0);
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
		.netns_cookie = here.cookie,
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
	char dir[PATH_MAX];
	int ifindex, lock, link_fd = -1, err;
	bool dir_made = false, fell_back = false;

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
	if ((err = check_free(ifname, ifindex, multiprog || mode == LIVE_MODE_TC)))
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
		bpf_program__set_autoload(skel->progs.roceval_tc, false);
		/* the same sizes roceval_load() gives the flow table */
		bpf_map__set_max_entries(skel->maps.flows, live_flow_entries);
		bpf_map__set_max_entries(skel->maps.flow_ring, live_flow_entries);
		skel->rodata->flow_capacity = live_flow_entries;
		roceval_size_cm_maps(skel, live_flow_entries);
		err = attach_multiprog(skel, ifname, ifindex, mode, &xprog);
		if (err) {
			/*
			 * libxdp's dispatcher needs freplace programs, which some
			 * kernels refuse, and cannot join a program attached
			 * without it: tc ingress chains with anything.
			 */
			roceval_bpf__destroy(skel);
			skel = NULL;
			multiprog = false;
			mode = LIVE_MODE_TC;
			fell_back = true;
		}
	}
	if (!multiprog) {
		skel = roceval_load(mode == LIVE_MODE_TC ? LOAD_TC : LOAD_LIVE, true);
		if (!skel) {
			err = -EINVAL;
			goto out;
		}
		err = roceval_settings_write(bpf_map__fd(skel->maps.settings), settings);
		if (err) {
			pr_warn("Couldn't write the settings map: %s", strerror(-err));
			goto out;
		}
		if (mode == LIVE_MODE_TC) {
			err = attach_tcx(skel, ifindex, &link_fd);
			if (err) {
				pr_warn("%s: Couldn't attach at tc ingress: %s%s", ifname, strerror(-err),
					err == -EINVAL ? " (tcx links need kernel 6.6 or later)" : "");
				goto out;
			}
		} else {
			err = attach_link(skel, ifindex, mode, &link_fd);
			if (err) {
				pr_warn("%s: Couldn't attach XDP%s%s: %s", ifname, mode == LIVE_MODE_AUTO ? "" : " in ",
					mode == LIVE_MODE_AUTO ? "" : live_mode_name(mode), strerror(-err));
				goto out;
			}
		}
	}
	if (multiprog) {
		err = roceval_settings_write(bpf_map__fd(skel->maps.settings), settings);
		if (err) {
			pr_warn("Couldn't write the settings map: %s", strerror(-err));
			goto rollback;
		}
	}

	if ((err = pin_path(dir, sizeof(dir), NULL, NULL)))
		goto rollback;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", dir, strerror(errno));
		goto rollback;
	}
	pin_path(dir, sizeof(dir), ifname, NULL);
	if (mkdir(dir, 0700)) {
		err = -errno;
		pr_warn("Couldn't create %s: %s", dir, strerror(errno));
		goto rollback;
	}
	dir_made = true;
	if (mode != LIVE_MODE_TC)
		mode = query_mode(ifindex);
	if ((err = pin_fd(multiprog		  ? xdp_program__fd(xprog)
			  : mode == LIVE_MODE_TC ? bpf_program__fd(skel->progs.roceval_tc)
						 : bpf_program__fd(skel->progs.roceval_xdp),
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
	if (fell_back)
		pr_warn("%s: libxdp's dispatcher cannot run here (-v says why): attached at tc ingress "
			"instead, where it sees what the XDP program passes on", ifname);
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

static int live_open_ns(const char *ns, const char *ifname, struct live_iface *out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), key = 0;
	struct live_meta meta = {};
	char dir[PATH_MAX];
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	out->counters_fd = out->settings_fd = out->flows_fd = out->cm_ends_fd = -1;
	out->trace_rbs_fd = out->trace_filters_fd = -1;
	if ((err = live_init()))
		return err;
	if (pin_path_ns(dir, sizeof(dir), ns, ifname, NULL) || strlen(ifname) >= IF_NAMESIZE ||
	    strlen(ns) >= sizeof(out->netns))
		return -ENAMETOOLONG;
	if (stat(dir, &st))
		return -errno;
	snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);
	snprintf(out->netns, sizeof(out->netns), "%s", ns);
	out->this_netns = !strcmp(ns, here.ns);
	out->netns_ino = strtoull(ns + strlen("netns-"), NULL, 10);

	fd = pin_get_ns(ns, ifname, "meta");
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
	out->flows_fd = pin_get_ns(ns, ifname, "flows");
	if (out->flows_fd < 0)
		out->flows_fd = -1;
	out->trace_rbs_fd = pin_get_ns(ns, ifname, "trace_rbs");
	out->trace_filters_fd = pin_get_ns(ns, ifname, "trace_filters");
	if (out->trace_rbs_fd < 0 || out->trace_filters_fd < 0) {
		if (out->trace_rbs_fd >= 0)
			close(out->trace_rbs_fd);
		if (out->trace_filters_fd >= 0)
			close(out->trace_filters_fd);
		out->trace_rbs_fd = out->trace_filters_fd = -1;
	}
	out->cm_ends_fd = pin_get_ns(ns, ifname, "cm_ends");
	if (out->cm_ends_fd < 0)
		out->cm_ends_fd = -1;
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

	return err ? err : live_open_ns(here.ns, ifname, out);
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
			here.root, here.ns, ifname, ifname);
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
	int *fds[] = { &li->counters_fd, &li->settings_fd, &li->flows_fd, &li->trace_rbs_fd,
		       &li->trace_filters_fd, &li->cm_ends_fd };

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
		int ifindex = strcmp(ns, here.ns) ? 0 : if_nametoindex(ifname);

		/* without the interface there is nothing left to detach from */
		if (ifindex && (__u32)ifindex == meta.ifindex && meta.netns_cookie == here.cookie)
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
		if (if_nametoindex(ifname))
			pr_warn("%s: roceval is not attached", ifname);
		else
			pr_warn("%s: no such interface, and roceval has no pins for one in this network namespace",
				ifname);
		goto out;
	}
	err = detach_locked(here.ns, ifname);
out:
	pin_unlock(lock);
	return err;
}

static int cmp_refs(const void *a, const void *b)
{
	const struct live_ref *x = a, *y = b;
	int c = strcmp(x->netns, y->netns);

	return c ? c : strcmp(x->ifname, y->ifname);
}

/* Subdirectories of dir whose names fit in size; calls fn for each. */
static int list_dirs(const char *dir, size_t size, int (*fn)(const char *name, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d)))
		if (de->d_name[0] != '.' && de->d_type == DT_DIR && strlen(de->d_name) < size)
			err = fn(de->d_name, arg);
	closedir(d);
	return err;
}

struct ref_list {
	struct live_ref *refs;
	int n, max;
	const char *ns;
};

static int add_ref(const char *ifname, void *arg)
{
	struct ref_list *l = arg;

	if (l->n >= l->max)
		return -ENOSPC;
	snprintf(l->refs[l->n].netns, sizeof(l->refs[l->n].netns), "%s", l->ns);
	snprintf(l->refs[l->n].ifname, sizeof(l->refs[l->n].ifname), "%s", ifname);
	l->n++;
	return 0;
}

static int add_ns(const char *ns, void *arg)
{
	struct ref_list *l = arg;
	char dir[PATH_MAX];

	if (strncmp(ns, "netns-", 6) || pin_path_ns(dir, sizeof(dir), ns, NULL, NULL))
		return 0;
	l->ns = ns;
	return list_dirs(dir, IF_NAMESIZE, add_ref, l);
}

int live_list_all(struct live_ref *refs, int max)
{
	struct ref_list l = { .refs = refs, .max = max };
	int err = live_init();

	if (!err)
		err = list_dirs(here.root, LIVE_NS_LEN, add_ns, &l);
	if (err)
		return err;
	qsort(refs, l.n, sizeof(*refs), cmp_refs);
	return l.n;
}

int live_open_ref(const struct live_ref *ref, struct live_iface *out)
{
	int err = live_init();

	return err ? err : live_open_ns(ref->netns, ref->ifname, out);
}

int live_list(char (*names)[IF_NAMESIZE], int max)
{
	struct live_ref refs[64];
	struct ref_list l = { .refs = refs, .max = max < 64 ? max : 64 };
	int err = live_init();

	if (!err)
		err = add_ns(here.ns, &l);
	if (err)
		return err;
	qsort(refs, l.n, sizeof(*refs), cmp_refs);
	for (int i = 0; i < l.n; i++)
		memcpy(names[i], refs[i].ifname, IF_NAMESIZE);
	return l.n;
}

int live_list_local(char (*names)[IF_NAMESIZE], int max)
{
	int n = live_list(names, max), kept = 0;

	for (int i = 0; i < n; i++) {
		int ifindex = if_nametoindex(names[i]);
		bool ok = ifindex && !pins_stale(names[i], ifindex);

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
		pr_warn("Couldn't list %s: %s", here.root, strerror(-n));
		err = n;
	}
	for (int i = 0; i < n; i++) {
		bool this_ns = !strcmp(refs[i].netns, here.ns);

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
