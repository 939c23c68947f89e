// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A feed's pins: the directory an attachment of the name would have, with
 * the replay program as its prog, its maps, meta (LIVE_MODE_FEED, no
 * interface) and the feed map (struct feed_state).  A feed of a name
 * already pinned runs over those maps, so its counters go on.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "feed_int.h"
#include "live/live.h"
#include "live/loader.h"
#include "log.h"
#include "roceval.skel.h"

/* 0 when name is free or an ended feed's (*again), or -errno with the reason said; under the pin lock. */
static int check_name(const char *name, bool *again)
{
	struct feed_state st = {};
	struct live_iface li = {};
	char dir[PATH_MAX];
	struct stat sb;
	int err;

	*again = false;
	if ((err = pin_path(dir, sizeof(dir), name, NULL)))
		return err;
	if (stat(dir, &sb))
		return 0;
	if (!pins_feed(name)) {
		pr_warn("%s: roceval is attached to this interface; a feed needs a name of its own", name);
		return -EEXIST;
	}
	snprintf(li.ifname, sizeof(li.ifname), "%s", name);
	snprintf(li.netns, sizeof(li.netns), "%s", live_netns());
	li.mode = LIVE_MODE_FEED;
	if (!feed_state_read(&li, &st)) {
		pr_warn("%s: a feed of another build of roceval; 'roceval detach %s' first", name, name);
		return -EPROTO;
	}
	if (feed_running(&st)) {
		pr_warn("%s: process %u feeds it already", name, st.pid);
		return -EBUSY;
	}
	*again = true;
	return 0;
}

ino_t pin_dir_ino(const char *name)
{
	char dir[PATH_MAX];
	struct stat sb;

	return pin_path(dir, sizeof(dir), name, NULL) || stat(dir, &sb) ? 0 : sb.st_ino;
}

/* The maps of the ended feed for skel to load with. */
static int reuse_maps(struct roceval_bpf *skel, const char *name)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, skel->obj) {
		int fd, err;

		if (bpf_map__is_internal(map))
			continue;
		fd = pin_get(name, bpf_map__name(map));
		if (fd < 0) {
			pr_warn("%s: the feed's pins lack the %s map (another build's); 'roceval detach %s' first",
				name, bpf_map__name(map), name);
			return fd;
		}
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

/* cfg, with the traces running on the name's pins kept on (`roceval trace NAME` waiting for frames). */
static const struct roceval_settings *keep_traces(const char *name, const struct roceval_settings *cfg,
						  struct roceval_settings *out)
{
	struct roceval_settings cur;
	int fd = pin_get(name, "settings");

	*out = *cfg;
	if (fd >= 0 && !roceval_settings_read(fd, &cur))
		out->trace_on = cur.trace_on;
	if (fd >= 0)
		close(fd);
	return out;
}

static int make_dir(const char *path)
{
	if (!mkdir(path, 0700) || errno == EEXIST)
		return 0;
	pr_warn("Couldn't create %s: %s", path, strerror(errno));
	return -errno;
}

/* A new feed's pins: directories, program, maps, meta, the feed map. */
static int pin_new(struct feed *f, struct roceval_bpf *skel, enum feed_clock clock)
{
	char dir[PATH_MAX];
	int err;

	pin_path(dir, sizeof(dir), NULL, NULL);
	if ((err = make_dir(dir)))
		return err;
	pin_path(dir, sizeof(dir), f->name, NULL);
	if ((err = make_dir(dir)))
		return err;
	f->state_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "roceval_feed", sizeof(__u32), sizeof(struct feed_state), 1,
				     NULL);
	if (f->state_fd < 0) {
		err = -errno;
		pr_warn("Couldn't create the feed map: %s", strerror(errno));
		return err;
	}
	if ((err = pin_fd(bpf_program__fd(skel->progs.roceval_replay), f->name, "prog")) ||
	    (err = live_pin_maps(skel->obj, f->name)) || (err = pin_fd(f->state_fd, f->name, "feed")))
		return err;
	return live_write_meta(f->name, 0, LIVE_MODE_FEED, false, clock == FEED_CLOCK_NIC, LIVE_PCP_FRAME);
}

/* The object loaded over the name's maps, or new ones pinned; f->r and f->state_fd set. */
int feed_load(struct feed *f, const struct roceval_settings *cfg, enum feed_clock clock)
{
	struct roceval_settings mine;
	struct roceval_bpf *skel;
	bool again;
	int lock, err;

	lock = pin_lock();
	if (lock < 0)
		return lock;
	if ((err = check_name(f->name, &again)))
		goto out;
	skel = roceval_open(LOAD_REPLAY, false);
	err = !skel ? -EINVAL : again ? reuse_maps(skel, f->name) : 0;
	if (skel && err)
		roceval_bpf__destroy(skel);
	if (err || (err = roceval_load_opened(skel)))
		goto out;
	f->r = replay_from(skel, again ? keep_traces(f->name, cfg, &mine) : cfg);
	if (!f->r) {
		err = -EINVAL;
		goto out;
	}
	if (again) {
		f->state_fd = pin_get(f->name, "feed");
		err = f->state_fd < 0 ? f->state_fd : 0;
	} else if ((err = pin_new(f, skel, clock))) {
		pin_remove_all(f->name);
	}
	if (!err)
		err = feed_state_write(f);
	if (!err)
		f->dir_ino = pin_dir_ino(f->name);
out:
	pin_unlock(lock);
	return err;
}
