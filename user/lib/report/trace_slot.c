// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "counters.h"
#include "live/live.h"
#include "live/loader.h"
#include "lockfile.h"
#include "log.h"
#include "trace_slot.h"

/* Held only while slots are taken or given back; removed each time. */
#define TRACE_LOCK_DIR "/run/roceval"

/* Serialises taking and giving back slots among the traces of one interface. */
static int slots_lock(const struct live_iface *li, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/trace-%s-%s.lock", TRACE_LOCK_DIR, li->netns, li->ifname);
	fd = lockfile_lock(path, true);
	if (fd < 0)
		pr_warn("Couldn't lock %s: %s", path, strerror(-fd));
	return fd;
}

/* Sets or clears our bit in trace_on; only that bit, so a 'roceval config' meanwhile stays. */
static int set_trace_bit(const struct live_iface *li, __u32 slot, bool on)
{
	struct roceval_settings cur;
	int err = roceval_settings_read(li->settings_fd, &cur);

	if (err)
		return err;
	if (on)
		cur.trace_on |= 1u << slot;
	else
		cur.trace_on &= ~(1u << slot);
	return roceval_settings_write(li->settings_fd, &cur);
}

static void free_slot(const struct live_iface *li, __u32 slot)
{
	struct roceval_trace_filter none = {};

	set_trace_bit(li, slot, false);
	bpf_map_delete_elem(li->trace_rbs_fd, &slot);
	bpf_map_update_elem(li->trace_filters_fd, &slot, &none, BPF_ANY);
}

/* A free slot, after freeing those of traces that were killed; -EBUSY when all run. */
static int find_slot(const struct live_iface *li)
{
	int found = -EBUSY;

	for (__u32 slot = 0; slot < ROCEVAL_MAX_TRACES; slot++) {
		struct roceval_trace_filter f;

		if (bpf_map_lookup_elem(li->trace_filters_fd, &slot, &f))
			return -errno;
		if (f.owner && kill(f.owner, 0) && errno == ESRCH) {
			pr_warn("%s: a trace that was killed (pid %u) left sampling on; taking over",
				li->ifname, f.owner);
			free_slot(li, slot);
			f.owner = 0;
		}
		if (!f.owner && found < 0)
			found = slot;
	}
	return found;
}

int trace_arm(const struct live_iface *li, struct trace_slot *ts, const struct roceval_trace_filter *want)
{
	struct roceval_trace_filter mine = *want;
	struct roceval_counters c;
	char path[PATH_MAX];
	int lock, slot, err;

	err = counters_read(li->counters_fd, &c);
	if (err) {
		pr_warn("%s: Couldn't read the maps: %s", li->ifname, strerror(-err));
		return err;
	}
	ts->skipped0 = c.total[TOTAL_TRACE_SKIPPED];
	ts->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "roceval_trace", 0, 0, ROCEVAL_TRACE_RB_BYTES, NULL);
	if (ts->rb_fd < 0) {
		err = -errno;
		pr_warn("%s: Couldn't create a trace ring buffer: %s", li->ifname, strerror(-err));
		return err;
	}
	lock = slots_lock(li, path, sizeof(path));
	if (lock < 0)
		return lock;
	slot = find_slot(li);
	if (slot < 0) {
		err = slot;
		if (err == -EBUSY)
			pr_warn("%s: %d traces already run on this interface; stop one first", li->ifname,
				ROCEVAL_MAX_TRACES);
		else
			pr_warn("%s: Couldn't read the trace slots: %s", li->ifname, strerror(-err));
		goto out;
	}
	ts->slot = slot;
	mine.owner = getpid();
	if (bpf_map_update_elem(li->trace_rbs_fd, &ts->slot, &ts->rb_fd, BPF_ANY) ||
	    bpf_map_update_elem(li->trace_filters_fd, &ts->slot, &mine, BPF_ANY)) {
		err = -errno;
		pr_warn("%s: Couldn't set up the trace slot: %s", li->ifname, strerror(-err));
		free_slot(li, ts->slot);
		goto out;
	}
	err = set_trace_bit(li, ts->slot, true);
	if (err) {
		pr_warn("%s: Couldn't write the settings: %s", li->ifname, strerror(-err));
		free_slot(li, ts->slot);
		goto out;
	}
	ts->armed = true;
out:
	lockfile_unlock(path, lock);
	return err;
}

/* Gives our slot back; the other traces on the interface go on. */
int trace_disarm(const struct live_iface *li, struct trace_slot *ts)
{
	char path[PATH_MAX];
	int lock, err;

	if (!ts->armed)
		return 0;
	lock = slots_lock(li, path, sizeof(path));
	/* our bit first, so the program stops using the slot before it is emptied */
	err = set_trace_bit(li, ts->slot, false);
	if (!err) {
		free_slot(li, ts->slot);
		ts->armed = false;
	} else {
		pr_warn("%s: Couldn't switch trace sampling off: %s; the next trace will", li->ifname,
			strerror(-err));
	}
	if (lock >= 0)
		lockfile_unlock(path, lock);
	return err;
}
