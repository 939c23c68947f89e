// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Data-path fuzzer: pushes mutated frames through the roceval XDP object
 * with BPF_PROG_TEST_RUN and checks, on every frame, what must hold whatever
 * arrives on the wire:
 *
 *  - the live program (roceval_xdp, one frame per call) returns XDP_PASS in
 *    observe mode, and in enforce mode drops exactly the RoCEv2 frames that
 *    broke an error-severity rule;
 *  - `frames` grows by one per frame; `roce` by one exactly when an
 *    independent parser here says the frame is RoCE (RoCEv2 or RoCEv1);
 *  - each RoCEv2 frame lands in exactly one of icrc_ok, icrc_bad,
 *    icrc_unchecked, icrc_skipped, the one that a CRC computed here with
 *    zlib predicts, and an unchecked ICRC is explained by a rule;
 *  - no rule counts twice for a frame; a frame that is not RoCEv2 moves no
 *    counter but `frames`;
 *  - the batch program (roceval_replay via user/lib/replay/batch.c) fed the same
 *    frames ends each round with the same counters;
 *  - the flow table, when the object has one, never holds more entries than
 *    its size.
 *
 * RoCEv1 frames (EtherType 0x8915, GRH, BTH) count as RoCE too; mutations
 * reach them by rewriting the EtherType.
 *
 * Mirrored frames (ERSPAN I, II, III, GRE-TEB, VXLAN) are judged by their
 * inner frame, and move the mirror totals the oracle's reading of their
 * outer headers and its copy of the session table say (mirror.c); their
 * mutations reach the inner frame or the mirror's own fields.
 *
 * Seeds are valid frames of every opcode of every transport (built from
 * roce_ops[]; the RD range laid out as mlx5 DC, the default), IPv4 and
 * IPv6, 0-2 VLAN tags, and a few of them wrapped in each mirror encapsulation.  Everything is derived from
 * the seed given with -S, so a reported frame can be reproduced.
 *
 * This file runs the frames and checks; datapath.h names the other parts.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "caps.h"
#include "datapath.h"
#include "live/loader.h"
#include "replay/offline.h"
#include "report/report.h"
#include "roceval.skel.h"
#include "rule_names.h"
#include "settings.h"

#define MAX_MUTATIONS 4
#define MAX_REPORTS 20

uint64_t rng_state;

void note(struct frame *f, const char *fmt, ...)
{
	size_t used = strlen(f->how);
	va_list ap;

	if (used + 2 >= sizeof(f->how))
		return;
	if (used)
		f->how[used++] = ' ';
	va_start(ap, fmt);
	vsnprintf(f->how + used, sizeof(f->how) - used, fmt, ap);
	va_end(ap);
}

enum mode { MODE_OBSERVE, MODE_ENFORCE, MODE_SAMPLE, MODE__COUNT };
static const char *const mode_names[] = { "observe", "enforce", "icrc_sample=3" };

static struct roceval_bpf *live;
static struct replay *batch;
static int live_prog_fd, live_counters_fd, flow_sets_fd;
static __u32 flow_entries = 64; /* small, so that eviction runs all the time */
static unsigned long long pushed, pushed_base, violations, per_mode[MODE__COUNT], oversized;
/* what the live program counted of mirrors: taken apart, malformed, nested, truncated, lost */
static unsigned long long mirrored[5];
/* bytes of the frames under 14 bytes, which only the batch program sees */
static unsigned long long short_bytes, short_bytes_base;
static struct roceval_counters live_now, batch_base, live_base;
static struct roceval_counters last; /* counter deltas of the last frame */
static bool quiet;

static void dump_frame(const struct frame *f)
{
	fprintf(stderr, "  frame (%u bytes):", f->len);
	for (uint32_t i = 0; i < f->len && i < 4096; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n    ", f->d[i]);
	if (f->len > 4096)
		fprintf(stderr, "\n    ... (%u more bytes)", f->len - 4096);
	fputc('\n', stderr);
}

static void violation(const struct frame *f, enum mode mode, const char *fmt, ...)
{
	va_list ap;

	violations++;
	if (violations > MAX_REPORTS)
		return;
	fprintf(stderr, "VIOLATION (%s, mutations: %s): ", mode_names[mode], f && *f->how ? f->how : "none");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (f)
		dump_frame(f);
}

static void set_mode(enum mode mode)
{
	struct roceval_settings cfg;
	int err;

	settings_defaults(&cfg);
	cfg.enforce = mode == MODE_ENFORCE;
	cfg.icrc_sample = mode == MODE_SAMPLE ? 3 : 1;
	/*
	 * The batch times frames by their records, the live program by the
	 * kernel's clock: what depends on time must not, for the counters to
	 * agree.  Every request timed, and reorder windows that never age.
	 */
	cfg.latency_sample = 1;
	cfg.reorder_time = 0;
	err = roceval_settings_write(bpf_map__fd(live->maps.settings), &cfg);
	if (!err)
		err = roceval_settings_write(bpf_map__fd(replay_skel(batch)->maps.settings), &cfg);
	if (err) {
		fprintf(stderr, "datapath: Couldn't write the settings: %s\n", strerror(-err));
		exit(1);
	}
}

static bool error_rules(const struct roceval_counters *d)
{
	struct roceval_rule_set broken = {};

	for (int i = 0; i < RULE__COUNT; i++)
		if (d->rule[i])
			rule_set_add(&broken, i);
	return rule_set_meets(&broken, ROCEVAL_ERROR_MASK0, ROCEVAL_ERROR_MASK1);
}

/*
 * Runs the frame through the batch program and the live one; false when
 * there is nothing more to check (BPF_PROG_TEST_RUN refuses frames shorter
 * than an Ethernet header; the batch still sees them).  `d` gets the live
 * counters' deltas, `verdict` the live program's return.
 */
static bool run_frame(const struct frame *f, enum mode mode, struct roceval_counters *d, __u32 *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->d, .data_size_in = f->len, .repeat = 1);
	struct roceval_counters prev = live_now;
	int err = replay_frame(batch, f->d, f->len, f->len, 0);

	memset(d, 0, sizeof(*d));
	if (err) {
		violation(f, mode, "the batch program refused the frame: %s", strerror(-err));
		return false;
	}
	pushed++;
	per_mode[mode]++;
	if (f->len < 14) {
		short_bytes += f->len;
		return false;
	}
	if (bpf_prog_test_run_opts(live_prog_fd, &opts)) {
		violation(f, mode, "BPF_PROG_TEST_RUN failed: %s", strerror(errno));
		return false;
	}
	err = counters_read(live_counters_fd, &live_now);
	if (err) {
		fprintf(stderr, "datapath: Couldn't read the counters: %s\n", strerror(-err));
		exit(1);
	}
	for (int i = 0; i < TOTAL__COUNT; i++)
		d->total[i] = live_now.total[i] - prev.total[i];
	for (int i = 0; i < RULE__COUNT; i++)
		d->rule[i] = live_now.rule[i] - prev.rule[i];
	*verdict = opts.retval;
	return true;
}

static bool mirror_total(int i)
{
	return i == TOTAL_MIRROR_FRAMES || i == TOTAL_MIRROR_LOST || i == TOTAL_MIRROR_TRUNCATED ||
	       i == TOTAL_MIRROR_NESTED || i == TOTAL_MIRROR_MALFORMED || i == TOTAL_MIRROR_SESSIONS_FULL;
}

/*
 * The mirror totals of any frame: one taken apart, truncated by its switch,
 * nested or malformed as the oracle reads it; lost and a full session table
 * as the oracle's copy of the sessions says.
 */
static void check_mirror(const struct frame *f, enum mode mode, const struct roceval_counters *d,
			 const struct expect *e, uint64_t lost, bool full)
{
	bool taken = e->outer.encap > 0;
	const uint64_t want[][2] = {
		{ TOTAL_MIRROR_FRAMES, taken },
		{ TOTAL_MIRROR_MALFORMED, e->mirror_malformed },
		{ TOTAL_MIRROR_NESTED, e->mirror_nested },
		{ TOTAL_MIRROR_TRUNCATED, taken && e->outer.truncated },
		{ TOTAL_MIRROR_LOST, lost },
		{ TOTAL_MIRROR_SESSIONS_FULL, full },
	};

	for (size_t i = 0; i < 5; i++) /* the run's figures, in mirrored[]'s order */
		mirrored[i] += d->total[want[i][0]];
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (d->total[want[i][0]] != want[i][1])
			violation(f, mode, "%s grew by %llu, expected %llu", total_ids[want[i][0]],
				  (unsigned long long)d->total[want[i][0]], (unsigned long long)want[i][1]);
}

/* What any frame moves, and that a frame that is not RoCE moves nothing else. */
static void check_any_frame(const struct frame *f, enum mode mode, const struct roceval_counters *d,
			    const struct expect *e, __u32 verdict)
{
	if (d->total[TOTAL_FRAMES] != 1)
		violation(f, mode, "frames grew by %llu", (unsigned long long)d->total[TOTAL_FRAMES]);
	if (d->total[TOTAL_BYTES] != f->len)
		violation(f, mode, "bytes grew by %llu, the frame has %u", (unsigned long long)d->total[TOTAL_BYTES],
			  f->len);
	if (d->total[TOTAL_ROCE_BYTES] != (e->roce ? e->len : 0))
		violation(f, mode, "roce_bytes grew by %llu", (unsigned long long)d->total[TOTAL_ROCE_BYTES]);
	if (d->total[TOTAL_ROCE] != e->roce)
		violation(f, mode, "roce grew by %llu, expected %d", (unsigned long long)d->total[TOTAL_ROCE],
			  e->roce);
	if (e->roce)
		return;
	for (int i = 0; i < TOTAL__COUNT; i++)
		if (i != TOTAL_FRAMES && i != TOTAL_BYTES && !mirror_total(i) && d->total[i] != (i == e->mac_control))
			violation(f, mode, "not RoCEv2 but %s grew by %llu, expected %d", total_ids[i],
				  (unsigned long long)d->total[i], i == e->mac_control);
	for (int i = 0; i < RULE__COUNT; i++)
		if (d->rule[i])
			violation(f, mode, "not RoCEv2 but rule %s counted", rule_ids[i]);
	if (verdict != XDP_PASS)
		violation(f, mode, "not RoCEv2 but verdict %u", verdict);
}

/* One ICRC total per RoCE frame, the one the oracle predicts. */
static void check_icrc(const struct frame *f, enum mode mode, const struct roceval_counters *d,
		       const struct expect *e)
{
	__u64 icrc_sum = d->total[TOTAL_ICRC_OK] + d->total[TOTAL_ICRC_BAD] + d->total[TOTAL_ICRC_UNCHECKED] +
			 d->total[TOTAL_ICRC_SKIPPED];

	if (icrc_sum != 1)
		violation(f, mode, "icrc_ok+icrc_bad+icrc_unchecked+icrc_skipped grew by %llu",
			  (unsigned long long)icrc_sum);
	if (d->total[TOTAL_SNAPPED] != e->snapped)
		violation(f, mode, "snapped grew by %llu, expected %d", (unsigned long long)d->total[TOTAL_SNAPPED],
			  e->snapped);
	if (e->fragment || e->length_bad || e->too_big || e->snapped) {
		if (!d->total[TOTAL_ICRC_UNCHECKED])
			violation(f, mode, "ICRC cannot be checked but icrc_unchecked did not grow");
	} else if (d->total[TOTAL_ICRC_SKIPPED]) {
		if (mode != MODE_SAMPLE)
			violation(f, mode, "icrc_skipped grew with icrc_sample=1");
	} else if (d->total[e->icrc_ok ? TOTAL_ICRC_OK : TOTAL_ICRC_BAD] != 1) {
		violation(f, mode, "ICRC is %s but icrc_ok/bad/unchecked grew by %llu/%llu/%llu",
			  e->icrc_ok ? "valid" : "invalid", (unsigned long long)d->total[TOTAL_ICRC_OK],
			  (unsigned long long)d->total[TOTAL_ICRC_BAD],
			  (unsigned long long)d->total[TOTAL_ICRC_UNCHECKED]);
	}
	if (d->total[TOTAL_ICRC_UNCHECKED] && !d->rule[RULE_TRUNCATED] && !d->rule[RULE_IP_FRAGMENT]) {
		/*
		 * A datagram larger than the ICRC scratch (jumbo MTUs beyond 16 KiB,
		 * possible on veth and lo) is not checked; icrc_unchecked's description
		 * says so.  Counted and reported; anything else here is a violation.
		 */
		if (e->too_big && !e->snapped)
			oversized++;
		else if (!e->snapped)
			violation(f, mode, "icrc_unchecked grew with neither truncated nor ip_fragment");
	}
	if (d->rule[RULE_ICRC] != d->total[TOTAL_ICRC_BAD])
		violation(f, mode, "rule icrc (%llu) differs from icrc_bad (%llu)",
			  (unsigned long long)d->rule[RULE_ICRC], (unsigned long long)d->total[TOTAL_ICRC_BAD]);
}

/*
 * Rules a frame may count more than once: what it settles for others (a
 * flow it evicts; the holes and fills of a reorder window it moves on).
 */
static bool settled_rule(int r)
{
	return r == RULE_FLOW_EVICTED || r == RULE_PSN_GAP || r == RULE_OPCODE_SEQUENCE || r == RULE_PSN_REORDER ||
	       r == RULE_RETX_UNCOMPARED;
}

/* The rules the oracle can predict, no rule twice, and the verdict the mode calls for. */
static void check_rules(const struct frame *f, enum mode mode, const struct roceval_counters *d,
			const struct expect *e, __u32 verdict)
{
	bool drop = mode == MODE_ENFORCE && error_rules(d);

	if (d->rule[RULE_IP_FRAGMENT] != e->fragment)
		violation(f, mode, "ip_fragment grew by %llu, expected %d",
			  (unsigned long long)d->rule[RULE_IP_FRAGMENT], e->fragment);
	if (e->length_bad && !d->rule[RULE_TRUNCATED])
		violation(f, mode, "IP/UDP lengths do not fit the frame but truncated did not grow");
	if (d->rule[RULE_ECN_CE] != e->ce)
		violation(f, mode, "ecn_ce grew by %llu, expected %d", (unsigned long long)d->rule[RULE_ECN_CE],
			  e->ce);
	for (int i = 0; i < RULE__COUNT; i++)
		if (d->rule[i] > 1 && !settled_rule(i))
			violation(f, mode, "rule %s grew by %llu for one frame", rule_ids[i],
				  (unsigned long long)d->rule[i]);
	if (verdict != (drop ? XDP_DROP : XDP_PASS))
		violation(f, mode, "verdict %u, expected %s", verdict, drop ? "XDP_DROP" : "XDP_PASS");
	if (d->total[TOTAL_DROPPED] != drop)
		violation(f, mode, "dropped grew by %llu", (unsigned long long)d->total[TOTAL_DROPPED]);
}

static void push(const struct frame *f, enum mode mode)
{
	__u32 verdict = XDP_PASS;
	struct expect e;
	uint64_t lost;
	bool full;

	expect_frame(f->d, f->len, &e);
	if (!run_frame(f, mode, &last, &verdict))
		return;
	mirror_session(&e, &lost, &full);
	check_mirror(f, mode, &last, &e, lost, full);
	check_any_frame(f, mode, &last, &e, verdict);
	if (!e.roce)
		return;
	check_icrc(f, mode, &last, &e);
	check_rules(f, mode, &last, &e, verdict);
}

/* The batch times frames by their capture times where the live program reads the kernel's clock. */
static int live_counterpart(int total)
{
	return total == TOTAL_TIMED_CAPTURE ? TOTAL_TIMED_KERNEL : total == TOTAL_TIMED_KERNEL ? TOTAL_TIMED_CAPTURE : total;
}

/* The batch program saw the same frames: its counters must have moved exactly as the live one's. */
static void compare_batch(enum mode mode)
{
	struct roceval_counters b;
	int err = replay_flush(batch);

	if (!err)
		err = replay_counters(batch, &b);
	if (err) {
		violation(NULL, mode, "the batch program failed: %s", strerror(-err));
		return;
	}
	if (b.total[TOTAL_FRAMES] - batch_base.total[TOTAL_FRAMES] != pushed - pushed_base)
		violation(NULL, mode, "batch counted %llu frames of %llu sent",
			  (unsigned long long)(b.total[TOTAL_FRAMES] - batch_base.total[TOTAL_FRAMES]),
			  pushed - pushed_base);
	/* Frames under 14 bytes reach only the batch program. */
	for (int i = 0; i < TOTAL__COUNT; i++) {
		int l = live_counterpart(i);
		__u64 db = b.total[i] - batch_base.total[i], dl = live_now.total[l] - live_base.total[l];

		if (i == TOTAL_BYTES)
			dl += short_bytes - short_bytes_base;
		if (i != TOTAL_FRAMES && db != dl)
			violation(NULL, mode, "batch counted %s %llu, live %llu", total_ids[i],
				  (unsigned long long)db, (unsigned long long)dl);
	}
	for (int i = 0; i < RULE__COUNT; i++) {
		__u64 db = b.rule[i] - batch_base.rule[i], dl = live_now.rule[i] - live_base.rule[i];

		if (db != dl)
			violation(NULL, mode, "batch counted rule %s %llu, live %llu", rule_ids[i],
				  (unsigned long long)db, (unsigned long long)dl);
	}
	batch_base = b;
	live_base = live_now;
	pushed_base = pushed;
	short_bytes_base = short_bytes;
}

/*
 * Frames run one at a time on one CPU, so the flow table's books must
 * balance exactly: each set holds as many flows as were created in it, up
 * to its ways, and every flow created is either in the table or was evicted.
 */
static void check_flows(void)
{
	__u64 created = 0, held = 0, evicted = live_now.rule[RULE_FLOW_EVICTED];
	struct roceval_flow_set *sets;
	int nsets = flow_sets_read(flow_sets_fd, &sets);

	if (nsets < 0) {
		violation(NULL, MODE_OBSERVE, "flow table: its sets cannot be read: %s", strerror(-nsets));
		return;
	}
	for (int i = 0; i < nsets; i++) {
		__u64 in = 0, want = sets[i].created < ROCEVAL_FLOW_WAYS ? sets[i].created : ROCEVAL_FLOW_WAYS;

		for (int w = 0; w < ROCEVAL_FLOW_WAYS; w++)
			in += sets[i].tag[w] != 0;
		if (in != want)
			violation(NULL, MODE_OBSERVE, "flow set %d: %llu flows after %llu created", i,
				  (unsigned long long)in, (unsigned long long)sets[i].created);
		created += sets[i].created;
		held += in;
	}
	free(sets);
	if (evicted != created - held)
		violation(NULL, MODE_OBSERVE, "flow table: %llu flows created, %llu in the table, %llu evicted (expected %llu)",
			  (unsigned long long)created, (unsigned long long)held, (unsigned long long)evicted,
			  (unsigned long long)(created - held));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: datapath [-s SECONDS] [-n FRAMES] [-S SEED] [-F ENTRIES] [-q]\n\n"
		   "Pushes mutated RoCEv2 frames through the roceval XDP object with\n"
		   "BPF_PROG_TEST_RUN and checks the counter and verdict invariants on every frame.\n\n"
		   "  -s SECONDS  run this long (default 10)\n"
		   "  -n FRAMES   stop at the end of the round (about 2300 frames) that reaches FRAMES\n"
		   "  -S SEED     random seed (default 1); the same seed pushes the same frames\n"
		   "  -F ENTRIES  flow table size (default 64, so that flows are evicted often)\n"
		   "  -q          print only the summary and violations\n\n"
		   "Exit status: 0 no violation, 1 a violation or a BPF failure, 2 bad usage.\n");
}

/* The command line; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, double *seconds, unsigned long long *max_frames,
		      unsigned long long *seed)
{
	int opt;

	while ((opt = getopt(argc, argv, "s:n:S:F:qh")) != -1) {
		switch (opt) {
		case 'F':
			if (!parse_flow_entries(optarg, &flow_entries)) {
				usage(stderr);
				return 2;
			}
			break;
		case 's':
			*seconds = strtod(optarg, NULL);
			break;
		case 'n':
			*max_frames = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			*seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || *seconds <= 0) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The live program and the batch one, on this CPU; false when either cannot be loaded. */
static bool load_programs(void)
{
	struct roceval_settings cfg;
	cpu_set_t cpus;

	/* Per-CPU state (the icrc_sample countdown) must be the same for both programs. */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	if (require_caps(false))
		return false;
	roceval_set_flow_entries(flow_entries);
	live = roceval_open(LOAD_LIVE, true);
	if (!live)
		return false;
	/* replay's fixed hash key: both tables must place flows, and so evict them, alike */
	live->rodata->flow_seed = 0;
	if (roceval_load_opened(live)) {
		live = NULL;
		return false;
	}
	settings_defaults(&cfg);
	batch = replay_new(&cfg);
	if (!batch)
		return false;
	live_prog_fd = bpf_program__fd(live->progs.roceval_xdp);
	live_counters_fd = bpf_map__fd(live->maps.counters);
	flow_sets_fd = bpf_map__fd(live->maps.flow_sets);
	return true;
}

/* One seed: the frame itself, cut at every offset, then 2000 mutants of it. */
static void run_round(const struct seed *sd, enum mode mode)
{
	static struct frame f, base;
	uint32_t stride;

	set_mode(mode);
	build_seed(&base, sd);
	push(&base, mode);
	/* A seed is valid: whatever else is wrong with a mutant comes from its mutations. */
	if (sd->encap && last.total[TOTAL_MIRROR_FRAMES] != 1)
		violation(&base, mode, "seed mirror (%s) not taken apart", mirror_encap_id(sd->encap));
	if (sd->pfc && last.total[TOTAL_PFC_FRAMES] != 1)
		violation(&base, mode, "seed PFC frame not counted as one");
	else if (!sd->pfc && (error_rules(&last) || (mode != MODE_SAMPLE && last.total[TOTAL_ICRC_OK] != 1)))
		violation(&base, mode, "seed frame (opcode 0x%02x) broke an error rule or its ICRC", sd->opcode);
	/* Truncation at every offset of the headers, then sparser through the payload. */
	stride = base.len > 256 ? base.len / 64 : 1;
	for (uint32_t cut = 0; cut < base.len; cut += cut < 256 ? 1 : stride) {
		f = base;
		f.len = cut;
		snprintf(f.how, sizeof(f.how), "trunc@%u", cut);
		push(&f, mode);
	}
	for (int i = 0; i < 2000; i++) {
		int nmut = 1 + rnd_below(MAX_MUTATIONS);

		f = base;
		f.how[0] = '\0';
		for (int m = 0; m < nmut; m++)
			mutate(&f);
		if (chance(50))
			fix_icrc(&f);
		push(&f, mode);
	}
	compare_batch(mode);
	check_flows();
}

int main(int argc, char **argv)
{
	unsigned long long max_frames = 0, seed = 1;
	double seconds = 10, start, elapsed;
	unsigned long rounds = 0;
	int ret = parse_args(argc, argv, &seconds, &max_frames, &seed);

	if (ret >= 0)
		return ret;
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	if (!load_programs())
		return 1;
	make_seeds();
	if (!quiet)
		printf("datapath: seed %llu, %d seed frames, %u flow entries, up to %.0f s\n", seed, nseeds,
		       flow_entries, seconds);

	start = now();
	do {
		run_round(&seeds[rounds % nseeds], rounds % MODE__COUNT);
		rounds++;
		elapsed = now() - start;
	} while (elapsed < seconds && (!max_frames || pushed < max_frames));

	printf("datapath: %llu frames pushed in %.1f s (observe %llu, enforce %llu, icrc_sample=3 %llu), "
	       "%lu rounds, seed %llu, %llu violations\n",
	       pushed, elapsed, per_mode[MODE_OBSERVE], per_mode[MODE_ENFORCE], per_mode[MODE_SAMPLE], rounds,
	       seed, violations);
	printf("datapath: %llu mirrored frames taken apart (%llu malformed, %llu nested, %llu truncated, %llu lost)\n",
	       mirrored[0], mirrored[1], mirrored[2], mirrored[3], mirrored[4]);
	if (oversized)
		printf("datapath: %llu frames with a datagram over %u bytes (beyond the ICRC buffer) counted in "
		       "icrc_unchecked, as documented\n", oversized, ROCEVAL_MAX_DATAGRAM);
	replay_free(batch);
	roceval_bpf__destroy(live);
	return violations ? 1 : 0;
}
