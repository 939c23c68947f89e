// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The pin tree: which bpffs outlives this command, this network namespace's
 * identity, and the paths, lock, pins and listing under
 * <bpffs>/roceval/netns-<inode>/<ifname>/ (pinned.c says what is in them).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include <linux/magic.h>

#include "log.h"
#include "pins.h"

#define BPFFS "/sys/fs/bpf"

/*
 * Namespace inodes the kernel fixes for its initial namespaces: the pid
 * namespace's since 3.8, the mount namespace's since 6.18 (on older kernels
 * it is allocated, and allocated inodes start at 0xF0000000, so no other
 * mount namespace can ever carry this one).
 */
#define PID_NS_INIT_INO 0xEFFFFFFCU
#define MNT_NS_INIT_INO 0xEFFFFFF8U
/* task flag of kernel threads, field 9 of /proc/PID/stat */
#define PF_KTHREAD 0x00200000U

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

static bool is_kernel_thread(const char *proc)
{
	char path[32], buf[512], *p;
	unsigned int flags;
	FILE *f;
	bool kthread = false;

	snprintf(path, sizeof(path), "%s/stat", proc);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1)
		kthread = flags & PF_KTHREAD;
	if (f)
		fclose(f);
	return kthread;
}

static bool ns_ino(const char *link, unsigned long long *ino)
{
	struct stat st;

	if (stat(link, &st))
		return false;
	*ino = st.st_ino;
	return true;
}

static bool initial_pid_ns(void)
{
	unsigned long long ino;

	return ns_ino("/proc/self/ns/pid", &ino) && ino == PID_NS_INIT_INO;
}

/*
 * The process whose root holds the host's bpffs, if any does, seen through
 * /proc: pid 1, or where its links are closed to us (a VM's init agent can
 * refuse them even to root) kthreadd, pid 2, which like every kernel thread
 * runs in the initial namespaces and shares pid 1's root from boot.  In a
 * pid namespace of its own pid 1 is the container's init, whose root has the
 * host's bpffs only if it was bound in; the caller checks what it finds.
 */
static const char *host_proc(void)
{
	char link[PATH_MAX];

	if (readlink("/proc/1/ns/mnt", link, sizeof(link)) > 0)
		return "/proc/1";
	if (is_kernel_thread("/proc/2") && readlink("/proc/2/ns/mnt", link, sizeof(link)) > 0)
		return "/proc/2";
	return NULL;
}

/*
 * Whether this process runs in the host's mount namespace, where a bpffs it
 * mounts outlives it.  The initial mount namespace's fixed inode says so
 * alone; else it must be host_proc()'s namespace, from the initial pid
 * namespace (a container's pid 1 is its own).  With no evidence either way
 * the answer is no: refusing is recoverable, pins that vanish with the
 * command are not.
 */
static bool host_mount_ns(void)
{
	unsigned long long ino;
	const char *proc = host_proc();
	char link[32];

	if (ns_ino("/proc/self/ns/mnt", &ino) && ino == MNT_NS_INIT_INO)
		return true;
	if (!proc || !initial_pid_ns())
		return false;
	snprintf(link, sizeof(link), "%s/ns/mnt", proc);
	return same_link("/proc/self/ns/mnt", link);
}

const char *live_netns_name(__u64 ino, char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir("/run/netns");

	*buf = '\0';
	while (d && (de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (de->d_name[0] != '.' && !stat(path, &st) && st.st_ino == ino) {
			snprintf(buf, len, "%s", de->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return buf;
}

/* This network namespace's name under /run/netns, or "NS". */
static const char *netns_run_name(char *buf, size_t len)
{
	struct stat self;

	if (stat("/proc/self/ns/net", &self) || !*live_netns_name(self.st_ino, buf, len))
		snprintf(buf, len, "NS");
	return buf;
}

/*
 * The bpffs that outlives this command.  `ip netns exec` runs its command in
 * a mount namespace of its own with a fresh /sys: a bpffs mounted there, and
 * every pin in it, dies with the command, and with the pins the attachment.
 * So the host's bpffs is used through host_proc()'s root when this one is
 * not it, bpffs is mounted only in the host's mount namespace (as iproute2
 * and bpftool mount it where nothing is), and where neither can be had the
 * command refuses rather than attach for the length of its life.
 */
static int resolve_bpffs(bool may_mount, char *out, size_t len)
{
	const char *proc = host_proc();
	char host_bpffs[64] = "";
	dev_t ours = 0, host = 0;
	bool have_ours = is_bpffs(BPFFS, &ours), have_host = false;

	if (proc) {
		snprintf(host_bpffs, sizeof(host_bpffs), "%s/root%s", proc, BPFFS);
		have_host = is_bpffs(host_bpffs, &host);
	}
	if (have_host && (!have_ours || ours != host)) {
		pr_info("using the host's bpffs through %s: %s here is not it", host_bpffs, BPFFS);
		snprintf(out, len, "%s", host_bpffs);
		return 0;
	}
	if (have_ours) {
		snprintf(out, len, "%s", BPFFS);
		return 0;
	}
	if (!host_mount_ns()) {
		char name[NAME_MAX + 1];

		pr_warn("%s is not the host's bpffs in this mount namespace (a private one, as 'ip netns "
			"exec' or a container makes) and the host's is %s: pins made here would vanish with "
			"this command; run 'nsenter --net=/run/netns/%s roceval ...' instead, or mount the "
			"host's bpffs on %s",
			BPFFS, proc && initial_pid_ns() ? "not mounted" : "out of reach",
			netns_run_name(name, sizeof(name)),
			BPFFS);
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
	pr_info("mounted bpffs on %s: nothing was mounted there", BPFFS);
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

__u64 live_netns_cookie(void)
{
	return here.cookie;
}

int live_pin_dir(char *buf, size_t len, const char *ifname)
{
	int n = snprintf(buf, len, "%s/%s/%s", live_pin_root(), here.ns, ifname);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Takes the pin-tree lock, creating ROCEVAL_PIN_ROOT as needed; returns the fd or -errno. */
int pin_lock(void)
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

void pin_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

/* <root>/<ns>/<ifname>/<name>; the namespace's directory when ifname is NULL. */
int pin_path_ns(char *buf, size_t len, const char *ns, const char *ifname, const char *name)
{
	int n = name	 ? snprintf(buf, len, "%s/%s/%s/%s", here.root, ns, ifname, name)
		: ifname ? snprintf(buf, len, "%s/%s/%s", here.root, ns, ifname)
			 : snprintf(buf, len, "%s/%s", here.root, ns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	return pin_path_ns(buf, len, here.ns, ifname, name);
}

int pin_fd(int fd, const char *ifname, const char *name)
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

int pin_get_ns(const char *ns, const char *ifname, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (pin_path_ns(path, sizeof(path), ns, ifname, name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int pin_get(const char *ifname, const char *name)
{
	return pin_get_ns(here.ns, ifname, name);
}

/* Removes the pin directory and whatever is in it, and the namespace's when it is left empty. */
int pin_remove_all_ns(const char *ns, const char *ifname)
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

int pin_remove_all(const char *ifname)
{
	return pin_remove_all_ns(here.ns, ifname);
}

/*
 * A pin directory whose link no longer points at a live interface (the
 * interface was deleted, or its namespace went away) is left over, not an
 * attachment: it is removed so the name can be attached again.
 */
bool pins_stale_ns(const char *ns, const char *ifname, bool this_ns, int ifindex)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	struct live_meta meta = {};
	__u32 key = 0;
	int fd;
	bool stale = false;

	fd = pin_get_ns(ns, ifname, "meta");
	if (fd >= 0) {
		bool read = !bpf_map_lookup_elem(fd, &key, &meta);

		if (read && meta.mode == LIVE_MODE_FEED) {
			/* a feed's counters are kept until detached: no interface to outlive */
			close(fd);
			return false;
		}
		if (read && (this_ns ? meta.ifindex != (__u32)ifindex || meta.netns_cookie != here.cookie : false))
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

bool pins_feed(const char *ifname)
{
	struct live_meta meta = {};
	__u32 key = 0;
	int fd = pin_get(ifname, "meta");
	bool feed;

	if (fd < 0)
		return false;
	feed = !bpf_map_lookup_elem(fd, &key, &meta) && meta.mode == LIVE_MODE_FEED;
	close(fd);
	return feed;
}

bool pins_stale(const char *ifname, int ifindex)
{
	return pins_stale_ns(here.ns, ifname, true, ifindex);
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
