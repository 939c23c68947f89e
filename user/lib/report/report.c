// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm.h"
#include "counters.h"
#include "feed/feeder.h"
#include "flows.h"
#include "json.h"
#include "latency.h"
#include "live/loader.h"
#include "log.h"
#include "report.h"
#include "settings.h"

int status_open(const char *ifname, bool all, struct live_iface *li, int max)
{
	struct live_ref refs[LIVE_MAX_IFACES];
	char names[LIVE_MAX_IFACES][IF_NAMESIZE];
	int n, opened = 0;

	if (ifname)
		return live_open_report(ifname, &li[0]) ? -1 : 1;
	if (max > LIVE_MAX_IFACES)
		max = LIVE_MAX_IFACES;
	n = all ? live_list_all(refs, max) : live_list(names, max);
	if (n < 0) {
		pr_warn("Couldn't list %s: %s", live_pin_root(), strerror(-n));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int err = all ? live_open_ref(&refs[i], &li[opened]) : live_open_report(names[i], &li[opened]);

		if (err == -EPROTO && all)
			live_warn_layout(refs[i].ifname);
		else if (err && all)
			pr_warn("%s/%s: Couldn't open the pins: %s", refs[i].netns, refs[i].ifname,
				strerror(-err));
		opened += !err;
	}
	/* attachments there, none readable: said above, and not "not attached" */
	return n && !opened ? -1 : opened;
}

static const char *since_text(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	return buf;
}

static const char *iso_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static const char *duration_text(double secs, char *buf, size_t len)
{
	unsigned long s = secs > 0 ? (unsigned long)secs : 0;

	if (s >= 86400)
		snprintf(buf, len, "%lud %luh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%luh %lum", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum %lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
	return buf;
}

/* What status reads about an attachment before printing it either way. */
struct status {
	struct roceval_settings cfg;
	struct roceval_counters c;
	__u64 mem;
	int nmaps;
	bool stale;
	bool feed; /* fs read: a feed's */
	struct feed_state fs;
	int mirrors; /* mirror sessions listed; -1: the object has no mirror maps */
	__u64 mirror_lost; /* frames their sequence numbers skipped */
	char nsname[256]; /* "" when 'ip netns' has no name for it */
};

static void feed_json(struct json_writer *w, const struct feed_state *fs)
{
	json_object_begin(w, "feed");
	json_string(w, "source", fs->source);
	json_bool(w, "rdma", fs->rdma);
	json_bool(w, "running", feed_running(fs));
	json_u64(w, "pid", fs->pid);
	json_string(w, "ended", feed_end_word(fs));
	json_u64(w, "frames", fs->frames);
	json_string(w, "icrc", feed_icrc_word(fs));
	json_object_end(w);
}

static void status_json(struct json_writer *w, const struct live_iface *li, const struct status *st)
{
	char since[64];

	json_object_begin(w, NULL);
	json_string(w, "interface", li->ifname);
	json_i64(w, "ifindex", li->ifindex);
	json_string(w, "netns", li->netns);
	json_u64(w, "netns_inode", li->netns_ino);
	if (*st->nsname)
		json_string(w, "netns_name", st->nsname);
	else
		json_null(w, "netns_name");
	json_bool(w, "this_netns", li->this_netns);
	json_string(w, "hook", live_hook_name(li->mode));
	json_string(w, "mode", live_mode_name(li->mode));
	json_bool(w, "multiprog", li->multiprog);
	json_u64(w, "program_id", li->prog_id);
	json_string(w, "attached_since", iso_time(li->attached_since, since, sizeof(since)));
	json_i64(w, "attached_since_unix", li->attached_since);
	json_bool(w, "stale", st->stale);
	json_bool(w, "enforce", st->cfg.enforce);
	settings_json(w, "settings", &st->cfg);
	json_u64(w, "memory_bytes", st->mem);
	json_i64(w, "maps", st->nmaps);
	if (st->feed)
		feed_json(w, &st->fs);
	/* a feed's frames are timed by its source: the capture, the NIC, or the sniffer's polls */
	json_string(w, "latency_clock", st->feed ? feed_clock_word(&st->fs) : latency_clock(st->c.total));
	json_bool(w, "nic_timestamps", li->nic_clock);
	json_string(w, "pcp_source", live_pcp_source_name(li->pcp_source));
	json_u64(w, "frames", st->c.total[TOTAL_FRAMES]);
	json_u64(w, "roce", st->c.total[TOTAL_ROCE]);
	if (st->mirrors >= 0) {
		json_u64(w, "mirror_sessions", st->mirrors);
		json_u64(w, "mirror_frames", st->c.total[TOTAL_MIRROR_FRAMES]);
		json_u64(w, "mirror_lost", st->mirror_lost);
	}
	json_object_end(w);
}

/* Where pcp and cnp_pcp read a frame's priority (docs/congestion.md). */
static const char *const pcp_source_text[] = {
	[LIVE_PCP_FRAME] = "frame tag: the frame's own only; a tag the NIC stripped is not seen (native mode, 6.8+)",
	[LIVE_PCP_RX_META] = "rx metadata: the tag the NIC stripped, from its driver, else the frame's own",
	[LIVE_PCP_SKB] = "skb tag: the tag the stack took out of the frame into the socket buffer, else the frame's own",
};

static void status_text(const struct live_iface *li, const struct status *st, bool first, bool all)
{
	const char *ns = st->nsname;
	char since[64], dur[32];

	printf("%s%s: %s%s, program %u, attached since %s (%s)\n", first ? "" : "\n", li->ifname,
	       li->mode == LIVE_MODE_TC ? "tc ingress (tcx link)" : live_mode_name(li->mode),
	       li->mode == LIVE_MODE_TC || li->mode == LIVE_MODE_FEED ? ""
	       : li->multiprog				   ? " mode (libxdp dispatcher)"
							   : " mode",
	       li->prog_id,
	       since_text(li->attached_since, since, sizeof(since)),
	       duration_text(difftime(time(NULL), li->attached_since), dur, sizeof(dur)));
	if (all)
		printf("  %-12s %s%s%s%s\n", "netns", li->netns, *ns ? " (" : "", ns,
		       li->this_netns ? (*ns ? ", this one)" : " (this one)") : *ns ? ")" : "");
	if (st->stale && li->this_netns)
		printf("  STALE: the interface it was attached to is gone; 'roceval detach %s' removes the pins\n",
		       li->ifname);
	else if (st->stale)
		printf("  STALE: the interface it was attached to is gone; 'roceval detach --stale --all' "
		       "removes the pins\n");
	if (st->feed) {
		/* a feed's frames are copies: nothing to drop, and timed by the source's clock */
		feed_status_text(&st->fs);
	} else {
		printf("  %-12s %s\n", "enforce", st->cfg.enforce ? "ON: frames breaking error rules are DROPPED"
								 : "off (observe only)");
		printf("  %-12s ", "clock");
		latency_clock_text(stdout, st->c.total, li->nic_clock, li->ifname);
	}
	if (st->c.total[TOTAL_LATENCY_SKIPPED] && st->cfg.latency_sample == ROCEVAL_LATENCY_PER_FLOW)
		printf("  %-12s 1 new request per flow in flight timed (latency_sample=flow): %llu not\n", "",
		       (unsigned long long)st->c.total[TOTAL_LATENCY_SKIPPED]);
	else if (st->c.total[TOTAL_LATENCY_SKIPPED])
		printf("  %-12s 1 new request in %u timed (latency_sample): %llu not\n", "", st->cfg.latency_sample,
		       (unsigned long long)st->c.total[TOTAL_LATENCY_SKIPPED]);
	printf("  %-12s %s\n", "pcp", pcp_source_text[li->pcp_source]);
	printf("  %-12s %llu\n  %-12s %llu\n", "frames", (unsigned long long)st->c.total[TOTAL_FRAMES], "roce",
	       (unsigned long long)st->c.total[TOTAL_ROCE]);
	if (st->c.total[TOTAL_DROPPED])
		printf("  %-12s %llu\n", "dropped", (unsigned long long)st->c.total[TOTAL_DROPPED]);
	if (st->mirrors > 0)
		printf("  %-12s %d session%s, %llu frames decapsulated, %llu lost before this host\n", "mirrors",
		       st->mirrors, st->mirrors == 1 ? "" : "s", (unsigned long long)st->c.total[TOTAL_MIRROR_FRAMES],
		       (unsigned long long)st->mirror_lost);
	if (st->mem >= 10 << 20)
		printf("  %-12s %.1f MiB in %d maps\n", "memory", st->mem / 1048576.0, st->nmaps);
	else
		printf("  %-12s %.1f KiB in %d maps\n", "memory", st->mem / 1024.0, st->nmaps);
	printf("  settings:\n");
	settings_print(stdout, &st->cfg, "    ");
}

/* How many mirror sessions, and their loss; none said when they cannot be read. */
static void status_mirrors(const struct live_iface *li, struct status *st)
{
	struct mirror_entry *e;

	st->mirrors = mirrors_collect(&li->mirror, &e);
	if (li->mirror.sessions < 0 || st->mirrors < 0) {
		st->mirrors = -1;
		return;
	}
	for (int i = 0; i < st->mirrors; i++)
		st->mirror_lost += e[i].lost;
	free(e);
}

int status_report(const struct live_iface *li, struct json_writer *w, bool first, bool all)
{
	struct status st = {};
	int err;

	err = roceval_settings_read(li->settings_fd, &st.cfg);
	if (!err)
		err = counters_read(li->counters_fd, &st.c);
	if (err) {
		pr_warn("%s: Couldn't read the maps: %s", li->ifname, strerror(-err));
		return err;
	}
	live_memory(li, &st.mem, &st.nmaps);
	/* the pins outlive the interface: a deleted or re-created one no longer runs the program */
	st.stale = live_stale(li);
	st.feed = feed_state_read(li, &st.fs);
	status_mirrors(li, &st);
	live_netns_name(li->netns_ino, st.nsname, sizeof(st.nsname));
	if (w)
		status_json(w, li, &st);
	else
		status_text(li, &st, first, all);
	return 0;
}

/*
 * What stats reads beside the counters: the latencies and congestion, each
 * NULL where the object has none; the mirror sessions, nmirrors -1 where it
 * has none.
 */
struct stats_extra {
	const struct roceval_latency_hist *latency;
	const struct roceval_congestion *cc;
	struct roceval_settings cfg;
	struct mirror_entry *mirrors;
	int nmirrors;
};

static void stats_json(const struct live_iface *li, const struct stats_report *r,
		       const struct flow_entry *flows, int nflows, const struct stats_extra *x)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "interface", li->ifname);
	json_i64(&w, "time", time(NULL));
	counters_json(&w, r->c);
	if (r->top && li->flows_fd >= 0)
		flows_json(&w, flows, nflows, r->top);
	counters_rates_json(&w, "rates", r->total_rates, r->rule_rates);
	retransmission_json(&w, r->c);
	if (x->latency)
		latency_json(&w, x->latency);
	reorder_json(&w, r->c);
	if (x->cc)
		congestion_json(&w, x->cc, &x->cfg);
	if (x->nmirrors >= 0)
		mirrors_json(&w, x->mirrors, x->nmirrors);
	cm_rej_json(&w, li->cm_rej_fd);
	cm_connections_json(&w, li->cm_conns_fd);
	json_double(&w, "rates_seconds", r->window, 3);
	json_bool(&w, "rates_since_attach", r->since_attach);
	json_object_end(&w);
	json_end(&w);
}

/* The latencies and congestion into x, where the attachment has them; 0 or -errno, said. */
static int stats_extra_read(const struct live_iface *li, struct roceval_latency_hist *lat,
			    struct roceval_congestion *cc, struct stats_extra *x)
{
	const char *what = "latency histograms";
	int err = li->latency_fd >= 0 ? latency_read(li->latency_fd, lat) : 0;

	if (!err && li->latency_fd >= 0)
		x->latency = lat;
	if (!err) {
		what = "congestion map";
		err = li->congestion_fd >= 0 ? congestion_read(li->congestion_fd, cc) : 0;
		x->cc = !err && li->congestion_fd >= 0 ? cc : NULL;
	}
	if (!err) {
		what = "settings";
		err = roceval_settings_read(li->settings_fd, &x->cfg);
	}
	if (!err && li->mirror.sessions >= 0) {
		what = "mirror sessions";
		x->nmirrors = mirrors_collect(&li->mirror, &x->mirrors);
		err = x->nmirrors < 0 ? x->nmirrors : 0;
	}
	if (err)
		pr_warn("%s: Couldn't read the %s: %s", li->ifname, what, strerror(-err));
	return err;
}

int stats_report(const struct live_iface *li, const struct stats_report *r, bool json)
{
	struct roceval_latency_hist lat[LAT__COUNT];
	struct roceval_congestion cc;
	struct stats_extra x = { .nmirrors = -1 };
	struct flow_entry *flows = NULL;
	int nflows = 0, err;

	if (r->top && li->flows_fd >= 0) {
		nflows = flows_collect(li->flows_fd, li->flow_sets_fd, li->flow_cold_fd, &flows);
		if (nflows < 0) {
			pr_warn("%s: Couldn't read the flow table: %s", li->ifname, strerror(-nflows));
			return nflows;
		}
		cm_annotate(li->cm_ends_fd, flows, nflows);
	}
	err = stats_extra_read(li, lat, &cc, &x);
	if (err) {
		free(flows);
		return err;
	}
	if (json) {
		stats_json(li, r, flows, nflows, &x);
	} else {
		printf("%s: rates %s %.1f s%s\n", li->ifname, r->since_attach ? "averaged over" : "over the last",
		       r->window, r->since_attach ? " since attach" : "");
		counters_print_table(stdout, r->c, r->total_rates, r->rule_rates, 0);
		if (x.latency)
			latency_print(stdout, x.latency);
		reorder_print(stdout, r->c);
		if (x.cc)
			congestion_print(stdout, x.cc, &x.cfg);
		mirrors_print_table(stdout, x.mirrors, x.nmirrors);
		flows_print_table(stdout, flows, nflows, r->top);
	}
	free(x.mirrors);
	free(flows);
	return 0;
}
