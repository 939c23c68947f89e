// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval bench: what validation costs per frame, against a do-nothing XDP
 * program and against zlib's crc32() over the same bytes, all in one
 * process so the ratios hold on a noisy machine.
 *
 * Two paths.  BPF_PROG_TEST_RUN's repeat runs one frame again and again,
 * so after the first run every repeat is a duplicate PSN of its flow.  An
 * established flow's steady path, the next PSN each time, needs a new
 * frame per run: those go in replay batches of frames with consecutive
 * PSNs (and so their own ICRCs), timed per batch and divided by its frames.
 * What a replay cannot show, the kernel's clock an attached program reads,
 * is timed through the live program, a frame a test run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame.h"
#include "veth.h"
#include "bench_pass.skel.h"
#include "caps.h"
#include "cmd.h"
#include "gen/generator.h"
#include "json.h"
#include "live/loader.h"
#include "log.h"
#include "numbers.h"
#include "report/report.h"
#include "runs.h"
#include "roceval.skel.h"
#include "rule_names.h"
#include "settings.h"
#include "wire.h"

extern const struct command cmd_bench;

/* icrc_sample for the header path alone: the ICRC is never checked in a run. */
#define SAMPLE_NEVER "1000000000"
/* The steady flows' DestQPs: apart from the single-frame runs' (1-8). */
#define STEADY_QPN 0x800000
/* The mirrored steady flows' DestQPs: apart from those too. */
#define MIRROR_QPN 0xA00000
/* The flow the kernel's clock is timed on: apart from both. */
#define CLOCK_QPN 0xC00000
/*
 * Frames a round of the clock's figures: a test run each, which the kernel
 * times to the nanosecond, so these are averaged.
 */
#define CLOCK_FRAMES 4096
/* The clock's figures, each against latency_sample never due: every request timed, and =flow. */
enum { CLOCK_EVERY, CLOCK_FLOW, NCLOCK };
/* The frame of the flow-count sweep: RC SEND_ONLY, 256 bytes, IPv4 (frames[2]). */
#define SWEEP_FRAME 2
/* The ACK answering each SEND of the answered stream: frames[0], from the responder. */
#define ACK_FRAME 0

static const unsigned int payloads[] = { 0, 256, 1024, 4096 };
/* The icrc_sample cost curve, steady path. */
static const unsigned int sample_curve[NCURVE] = { 1, 2, 8, 64 };
/* 2: each frame's flow another than the last's, as for an answered stream's requests (ack_over_baseline) */
static const unsigned int sweep_flows[] = { 1, 2, 1024, 65536 };
#define NSWEEP (sizeof(sweep_flows) / sizeof(sweep_flows[0]))
#define SWEEP_ALTERNATING 1
/* The sweep's rows, then one flow whose every request is answered by an ACK. */
#define NFLOWROWS (NSWEEP + 1)

#define S_FULL S_CURVE /* sample_curve[0] is 1: every ICRC checked */

/* What the per-frame measurements run: the programs, the settings they share and a batch buffer. */
struct progs {
	int settings_fd, roceval_fd, replay_fd, pass_fd, walk_fd;
	struct roceval_settings cfg;
	struct batch *b;
};

/*
 * One round of every figure for one frame: the single-frame runs, zlib,
 * then its steady stream (st) and the baseline's (st + 1), and right after
 * the bare frame's header path its ERSPAN II copies' (st + 2, the
 * baseline's st + 3), so the two see the machine alike.  Figure m goes to
 * ns[m * stride].
 */
static int measure_frame(struct progs *p, struct frame *f, struct stream *st, unsigned int repeat, double *ns,
			 size_t stride)
{
	int err = run_prog(p->pass_fd, f, repeat, &ns[BASELINE * stride]);

	/* ICRC sampled so rarely that it is never checked here: the header path alone. */
	if (!err)
		err = set_icrc_sample(p->settings_fd, &p->cfg, SAMPLE_NEVER);
	if (!err)
		err = run_prog(p->roceval_fd, f, repeat, &ns[HEADERS * stride]);
	if (!err)
		err = set_icrc_sample(p->settings_fd, &p->cfg, "1");
	if (!err)
		err = run_prog(p->roceval_fd, f, repeat, &ns[FULL * stride]);
	ns[ZLIB * stride] = zlib_ns(f, repeat);

	if (!err)
		err = run_stream(p->walk_fd, p->b, st + 1, repeat, &ns[S_BASELINE * stride]);
	if (!err)
		err = set_icrc_sample(p->settings_fd, &p->cfg, SAMPLE_NEVER);
	if (!err)
		err = run_stream(p->replay_fd, p->b, st, repeat, &ns[S_HEADERS * stride]);
	if (!err)
		err = run_stream(p->walk_fd, p->b, st + 3, repeat, &ns[S_M_BASELINE * stride]);
	if (!err)
		err = run_stream(p->replay_fd, p->b, st + 2, repeat, &ns[S_M_HEADERS * stride]);
	for (unsigned int c = 0; c < NCURVE && !err; c++) {
		char n[16];

		snprintf(n, sizeof(n), "%u", sample_curve[c]);
		err = set_icrc_sample(p->settings_fd, &p->cfg, n);
		if (!err)
			err = run_stream(p->replay_fd, p->b, st, repeat, &ns[(S_CURVE + c) * stride]);
	}
	if (!err)
		err = set_congestion(p->settings_fd, &p->cfg, SAMPLE_NEVER);
	if (!err)
		err = run_stream(p->replay_fd, p->b, st, repeat, &ns[S_CC * stride]);
	return err;
}

/* Streams a frame is measured with (measure_frame). */
#define NSTREAMS 4

/*
 * Every steady stream took the path it was meant to: the bare ones
 * (check_stream), and the mirrored ones (check_mirror), whose sessions'
 * counts go to their frames.
 */
static int check_streams(const struct roceval_bpf *skel, struct frame *frames, int nframes,
			 const struct stream *streams)
{
	__u64 mirrored = 0;
	int err = 0;

	for (int i = 0; i < nframes && !err; i++) {
		const struct stream *st = &streams[NSTREAMS * i];
		struct mirror_entry e;

		err = check_stream(skel, st);
		if (!err)
			err = check_mirror(skel, &st[2], &e);
		if (err)
			break;
		frames[i].mirrored_len = st[2].outer_len + st[2].f.len;
		frames[i].mirrored_frames = e.frames;
		frames[i].mirrored_lost = e.lost;
		frames[i].mirrored_numbered = e.numbered;
		mirrored += st[2].sent;
	}
	return err ? err : check_mirror_totals(skel, mirrored);
}

static int measure(struct roceval_bpf *skel, struct bench_pass_bpf *pass, struct frame *frames,
		   int nframes, unsigned int repeat, unsigned int rounds)
{
	struct progs p = {
		.settings_fd = bpf_map__fd(skel->maps.settings),
		.roceval_fd = bpf_program__fd(skel->progs.roceval_xdp),
		.replay_fd = bpf_program__fd(skel->progs.roceval_replay),
		.pass_fd = bpf_program__fd(pass->progs.bench_pass),
		.walk_fd = bpf_program__fd(pass->progs.bench_walk),
		.b = malloc(sizeof(struct batch)),
	};
	/* per frame: its stream, the baseline's, its mirrored stream and that one's baseline */
	struct stream *streams = calloc(NSTREAMS * nframes, sizeof(*streams));
	/* frame i's figure m of round r at samples[(i * NMEASURE + m) * rounds + r] */
	double *samples = calloc((size_t)nframes * NMEASURE * rounds, sizeof(*samples));
	int err = 0;

	if (!streams || !p.b || !samples) {
		pr_warn("Couldn't allocate the batches: %s", strerror(errno));
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Per frame: the stream roceval sees, and one for the baseline that must
	 * not take its PSNs; the same for its ERSPAN II copies, a session each.
	 */
	for (int i = 0; i < nframes; i++) {
		struct stream *st = &streams[NSTREAMS * i];

		st->f = frames[i];
		st->qpn = STEADY_QPN + i;
		st->flows = 1;
		st[1] = st[0];
		st[2] = st[0];
		st[2].qpn = MIRROR_QPN + i;
		stream_mirror(&st[2], i + 1);
		st[3] = st[2];
	}
	err = set_icrc_sample(p.settings_fd, &p.cfg, "1");
	for (int i = 0; i < NSTREAMS * nframes && !err; i += 2)
		err = warm_stream(p.replay_fd, p.b, &streams[i]);
	/*
	 * The single-frame runs of the live program time frames as the replay
	 * runs do, by the record's time, so that no figure but the clock's own
	 * (measure_clock) includes the kernel's clock.
	 */
	skel->bss->replay_clock = true;
	/* Rounds outside, so drift of the machine spreads over every figure alike. */
	for (unsigned int r = 0; r < rounds && !err; r++)
		for (int i = 0; i < nframes && !err; i++)
			err = measure_frame(&p, &frames[i], &streams[NSTREAMS * i], repeat,
					    &samples[(size_t)i * NMEASURE * rounds + r], rounds);
	if (!err)
		err = check_streams(skel, frames, nframes, streams);
	for (int i = 0; i < nframes && !err; i++)
		for (int m = 0; m < NMEASURE; m++)
			frames[i].ns[m] = median(&samples[((size_t)i * NMEASURE + m) * rounds], rounds);
out:
	free(samples);
	free(streams);
	free(p.b);
	return err;
}

/* The frame sent the other way: source and destination addresses swapped. */
static void frame_reverse(struct frame *f)
{
	unsigned char *ip = f->data + f->lay.l3, tmp[16];
	size_t alen = f->ipv6 ? 16 : 4, at = f->ipv6 ? 8 : 12;

	memcpy(tmp, ip + at, alen);
	memcpy(ip + at, ip + at + alen, alen);
	memcpy(ip + at + alen, tmp, alen);
	pkt_finish(f->data, &f->lay);
}

/*
 * The steady header path with 1, 2, 1k and 64k live flows, then with 1 flow
 * whose every request is answered by an ACK, each in a program of its own
 * with the default flow table, filled only by these frames.
 */
static int measure_flows(struct bench_pass_bpf *pass, const struct frame *f, const struct frame *ack,
			 unsigned int repeat, unsigned int rounds, double ns[NFLOWROWS][2])
{
	int walk_fd = bpf_program__fd(pass->progs.bench_walk);
	struct roceval_settings cfg;
	struct batch *b = malloc(sizeof(*b));
	double *samples = calloc(2 * rounds, sizeof(*samples));
	struct stream *st = calloc(2, sizeof(*st)), *walk = st + 1;
	struct frame *answer = malloc(sizeof(*answer));
	int err = 0;

	if (!b || !samples || !st || !answer) {
		pr_warn("Couldn't allocate the batches: %s", strerror(errno));
		err = -ENOMEM;
	} else {
		*answer = *ack;
		frame_reverse(answer);
	}
	for (unsigned int k = 0; k < NFLOWROWS && !err; k++) {
		struct roceval_bpf *skel = roceval_load(LOAD_REPLAY, false);
		int replay_fd;

		if (!skel) {
			err = -EINVAL;
			break;
		}
		replay_fd = bpf_program__fd(skel->progs.roceval_replay);
		st->f = *f;
		st->qpn = 1;
		st->flows = k < NSWEEP ? sweep_flows[k] : 1;
		st->sent = 0;
		st->ack = k < NSWEEP ? NULL : answer;
		*walk = *st;
		err = set_icrc_sample(bpf_map__fd(skel->maps.settings), &cfg, SAMPLE_NEVER);
		if (!err)
			err = warm_stream(replay_fd, b, st);
		for (unsigned int r = 0; r < rounds && !err; r++) {
			err = run_stream(walk_fd, b, walk, repeat, &samples[r]);
			if (!err)
				err = run_stream(replay_fd, b, st, repeat, &samples[rounds + r]);
		}
		if (!err)
			err = check_stream(skel, st);
		if (!err) {
			ns[k][0] = median(samples, rounds);
			ns[k][1] = median(samples + rounds, rounds);
		}
		roceval_bpf__destroy(skel);
	}
	free(answer);
	free(samples);
	free(st);
	free(b);
	return err;
}

/*
 * What the kernel's clock costs an attached program: a new request timed
 * (latency_sample=1, every request) and not (latency_sample never due), a
 * frame a test run of the live program; a replay times frames by the
 * capture instead.  Then latency_sample=flow, live attachments' default, on
 * the same stream, whose requests nothing answers: one in 9 reads the clock.  The other figures
 * of these runs are the test run's cold caches: only differences are
 * reported.
 */
static int measure_clock(struct roceval_bpf *skel, const struct frame *f, unsigned int repeat, unsigned int rounds,
			 double clock_ns[NCLOCK])
{
	static const char *const sampling[NCLOCK + 1] = { SAMPLE_NEVER, "1", "flow" };
	unsigned int frames = repeat < CLOCK_FRAMES ? repeat : CLOCK_FRAMES;
	int prog_fd = bpf_program__fd(skel->progs.roceval_xdp);
	int settings_fd = bpf_map__fd(skel->maps.settings);
	double *samples = calloc((NCLOCK + 1) * rounds, sizeof(*samples)), ns;
	struct stream st = { .f = *f, .qpn = CLOCK_QPN, .flows = 1 };
	struct roceval_settings cfg;
	int err = 0;

	if (!samples) {
		pr_warn("Couldn't allocate the samples: %s", strerror(errno));
		return -ENOMEM;
	}
	/* the other figures' runs time frames by the record's time (measure) */
	skel->bss->replay_clock = false;
	/* the flow's first frame creates it: not one of the steady frames timed */
	err = run_frames(prog_fd, &st, 1, &ns);
	for (unsigned int r = 0; r < rounds && !err; r++) {
		for (int m = 0; m <= NCLOCK && !err; m++) {
			err = set_sampling(settings_fd, &cfg, SAMPLE_NEVER, sampling[m]);
			if (!err)
				err = run_frames(prog_fd, &st, frames, &samples[m * rounds + r]);
		}
	}
	if (!err)
		err = check_stream(skel, &st);
	for (int m = 0; m < NCLOCK && !err; m++)
		clock_ns[m] = median(samples + (m + 1) * rounds, rounds) - median(samples, rounds);
	free(samples);
	return err;
}

/*
 * The answered ACK alone: the answered stream's frames are half requests,
 * half ACKs, and a request costs what the 2-flow sweep row measured, where
 * as there each request follows a frame of another flow (the flow lookup
 * tries the last frame's flow first, so a request after one of its own
 * flow costs less).
 */
static double ack_over_baseline(const double flows_ns[NFLOWROWS][2])
{
	return 2 * (flows_ns[NSWEEP][1] - flows_ns[NSWEEP][0]) -
	       (flows_ns[SWEEP_ALTERNATING][1] - flows_ns[SWEEP_ALTERNATING][0]);
}

/* The header path of a frame's ERSPAN II copies over the baseline walking them. */
static double mirrored_over_baseline(const struct frame *f)
{
	return f->ns[S_M_HEADERS] - f->ns[S_M_BASELINE];
}

/* What taking a copy out of its encapsulation costs: its figure over the bare frame's. */
static double decap_ns(const struct frame *f)
{
	return mirrored_over_baseline(f) - (f->ns[S_HEADERS] - f->ns[S_BASELINE]);
}

/* The frame's JSON row's mirrored figures, and what its session counted. */
static void json_mirrored(struct json_writer *w, const struct frame *f)
{
	json_u64(w, "mirrored_frame", f->mirrored_len);
	json_double(w, "steady_mirrored_baseline_ns", f->ns[S_M_BASELINE], 1);
	json_double(w, "steady_mirrored_headers_ns", f->ns[S_M_HEADERS], 1);
	json_double(w, "steady_mirrored_headers_over_baseline_ns", mirrored_over_baseline(f), 1);
	json_double(w, "decap_ns", decap_ns(f), 1);
	json_object_begin(w, "mirror_session");
	json_string(w, "encap", "erspan2");
	json_u64(w, "frames", f->mirrored_frames);
	json_u64(w, "lost", f->mirrored_lost);
	json_bool(w, "numbered", f->mirrored_numbered);
	json_object_end(w);
}

static void print_json(const struct frame *frames, int n, const double flows_ns[NFLOWROWS][2],
		       const double clock_ns[NCLOCK])
{
	struct json_writer w;

	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];
		const double *ns = f->ns;

		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		json_u64(&w, "payload", f->payload);
		json_string(&w, "family", f->ipv6 ? "ipv6" : "ipv4");
		json_double(&w, "baseline_ns", ns[BASELINE], 1);
		json_double(&w, "headers_ns", ns[HEADERS], 1);
		json_double(&w, "full_ns", ns[FULL], 1);
		json_double(&w, "zlib_ns", ns[ZLIB], 1);
		json_double(&w, "icrc_vs_zlib", (ns[FULL] - ns[HEADERS]) / ns[ZLIB], 3);
		json_double(&w, "headers_over_baseline_ns", ns[HEADERS] - ns[BASELINE], 1);
		json_string(&w, "steady_read", read_mode(record_bytes(f, NULL)));
		json_double(&w, "steady_baseline_ns", ns[S_BASELINE], 1);
		json_double(&w, "steady_headers_ns", ns[S_HEADERS], 1);
		json_double(&w, "steady_full_ns", ns[S_FULL], 1);
		json_double(&w, "steady_icrc_vs_zlib", (ns[S_FULL] - ns[S_HEADERS]) / ns[ZLIB], 3);
		json_double(&w, "steady_headers_over_baseline_ns", ns[S_HEADERS] - ns[S_BASELINE], 1);
		json_double(&w, "steady_congestion_ns", ns[S_CC], 1);
		json_object_begin(&w, "icrc_sample_ns");
		for (unsigned int c = 0; c < NCURVE; c++) {
			char key[16];

			snprintf(key, sizeof(key), "%u", sample_curve[c]);
			json_double(&w, key, ns[S_CURVE + c], 1);
		}
		json_object_end(&w);
		json_mirrored(&w, f);
		json_object_end(&w);
		json_end(&w);
	}
	for (unsigned int k = 0; k < NSWEEP; k++) {
		json_init(&w, stdout);
		json_object_begin(&w, NULL);
		json_u64(&w, "flows", sweep_flows[k]);
		json_u64(&w, "payload", frames[SWEEP_FRAME].payload);
		json_string(&w, "family", frames[SWEEP_FRAME].ipv6 ? "ipv6" : "ipv4");
		json_string(&w, "steady_read", read_mode(record_bytes(&frames[SWEEP_FRAME], NULL)));
		json_double(&w, "steady_baseline_ns", flows_ns[k][0], 1);
		json_double(&w, "steady_headers_ns", flows_ns[k][1], 1);
		json_double(&w, "steady_headers_over_baseline_ns", flows_ns[k][1] - flows_ns[k][0], 1);
		json_object_end(&w);
		json_end(&w);
	}
	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "answered", "ack");
	json_u64(&w, "payload", frames[SWEEP_FRAME].payload);
	json_string(&w, "family", frames[SWEEP_FRAME].ipv6 ? "ipv6" : "ipv4");
	json_string(&w, "steady_read", read_mode(record_bytes(&frames[SWEEP_FRAME], &frames[ACK_FRAME])));
	json_double(&w, "steady_baseline_ns", flows_ns[NSWEEP][0], 1);
	json_double(&w, "steady_headers_ns", flows_ns[NSWEEP][1], 1);
	json_double(&w, "steady_headers_over_baseline_ns", flows_ns[NSWEEP][1] - flows_ns[NSWEEP][0], 1);
	json_double(&w, "ack_over_baseline_ns", ack_over_baseline(flows_ns), 1);
	json_object_end(&w);
	json_end(&w);
	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "clock", "kernel");
	json_u64(&w, "payload", frames[SWEEP_FRAME].payload);
	json_string(&w, "family", frames[SWEEP_FRAME].ipv6 ? "ipv6" : "ipv4");
	json_double(&w, "request_timed_ns", clock_ns[CLOCK_EVERY], 1);
	json_double(&w, "flow_sampled_ns", clock_ns[CLOCK_FLOW], 1);
	json_object_end(&w);
	json_end(&w);
}

static void print_table(const struct frame *frames, int n, const double flows_ns[NFLOWROWS][2],
			const double clock_ns[NCLOCK],
			unsigned int repeat, unsigned int rounds)
{
	printf("Median of %u rounds of %u runs per frame; ns per frame.\n\n", rounds, repeat);
	printf("One frame repeated (after the first run, a duplicate PSN each time):\n");
	printf("%7s %6s %5s %9s %8s %8s %8s %12s %9s %10s %11s\n", "payload", "family", "frame",
	       "baseline", "headers", "full", "zlib", "icrc/zlib", "hdr-base", "Mpps/core",
	       "Gb/s/core");
	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];
		double full = f->ns[FULL];

		printf("%7u %6s %5zu %9.1f %8.1f %8.1f %8.1f %12.2f %9.1f %10.2f %11.2f\n", f->payload,
		       f->ipv6 ? "ipv6" : "ipv4", f->len, f->ns[BASELINE], f->ns[HEADERS], full,
		       f->ns[ZLIB], (full - f->ns[HEADERS]) / f->ns[ZLIB],
		       f->ns[HEADERS] - f->ns[BASELINE], 1e3 / full, f->len * 8.0 / full);
	}
	printf("\nSteady path (the next PSN of an established flow each time, in replay batches):\n");
	printf("%7s %6s %5s %9s %8s %8s %12s %9s %8s %8s %8s %8s  %s\n", "payload", "family", "frame",
	       "baseline", "headers", "full", "icrc/zlib", "hdr-base", "sample2", "sample8",
	       "sample64", "cc-hdr", "read");
	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];

		printf("%7u %6s %5zu %9.1f %8.1f %8.1f %12.2f %9.1f %8.1f %8.1f %8.1f %8.1f  %s\n", f->payload,
		       f->ipv6 ? "ipv6" : "ipv4", f->len, f->ns[S_BASELINE], f->ns[S_HEADERS],
		       f->ns[S_FULL], (f->ns[S_FULL] - f->ns[S_HEADERS]) / f->ns[ZLIB],
		       f->ns[S_HEADERS] - f->ns[S_BASELINE], f->ns[S_CURVE + 1], f->ns[S_CURVE + 2],
		       f->ns[S_CURVE + 3], f->ns[S_CC] - f->ns[S_HEADERS], read_mode(record_bytes(f, NULL)));
	}
	printf("\nSteady header path of each frame's ERSPAN II copies (outer headers of its family),\n"
	       "a session each, numbered frame by frame:\n");
	printf("%7s %6s %5s %8s %9s %8s %9s %7s %7s\n", "payload", "family", "frame", "mirrored", "baseline",
	       "headers", "hdr-base", "decap", "lost");
	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];

		printf("%7u %6s %5zu %8zu %9.1f %8.1f %9.1f %7.1f %7llu\n", f->payload, f->ipv6 ? "ipv6" : "ipv4",
		       f->len, f->mirrored_len, f->ns[S_M_BASELINE], f->ns[S_M_HEADERS], mirrored_over_baseline(f),
		       decap_ns(f), (unsigned long long)f->mirrored_lost);
	}
	printf("\nSteady header path by live flows (%u-byte payload, %s):\n",
	       frames[SWEEP_FRAME].payload, frames[SWEEP_FRAME].ipv6 ? "ipv6" : "ipv4");
	printf("%7s %9s %8s %9s\n", "flows", "baseline", "headers", "hdr-base");
	for (unsigned int k = 0; k < NSWEEP; k++)
		printf("%7u %9.1f %8.1f %9.1f\n", sweep_flows[k], flows_ns[k][0], flows_ns[k][1],
		       flows_ns[k][1] - flows_ns[k][0]);
	printf("\nSteady header path, 1 flow, each SEND answered by an ACK matched to it (per frame):\n");
	printf("%9s %8s %9s %9s\n", "baseline", "headers", "hdr-base", "ack-base");
	printf("%9.1f %8.1f %9.1f %9.1f\n", flows_ns[NSWEEP][0], flows_ns[NSWEEP][1],
	       flows_ns[NSWEEP][1] - flows_ns[NSWEEP][0], ack_over_baseline(flows_ns));
	printf("\nTiming a new request by the kernel's clock, live (latency_sample=1, every request,\n"
	       "against never): %.1f ns a request; latency_sample=flow, no request answered: %.1f\n",
	       clock_ns[CLOCK_EVERY], clock_ns[CLOCK_FLOW]);
	printf("\nicrc/zlib = (full - headers) / zlib; hdr-base = headers - baseline.\n"
	       "Mpps and Gb/s are one core running the full program; frame is the Ethernet\n"
	       "frame without FCS, and Gb/s counts those bytes.  sampleN is the full program\n"
	       "with icrc_sample=N.  cc-hdr is what the steady header path costs more with every\n"
	       "congestion setting on (traffic classes, ect, cnp_gap, cnp_delay, cnp_reaction; the\n"
	       "frames meet them all).  decap is what a mirrored copy's hdr-base costs over its\n"
	       "frame's; lost, the frames its session's sequence numbers skipped.  ack-base is\n"
	       "the answered ACK alone: twice the answered stream's hdr-base less the 2-flow\n"
	       "SEND's.\n");
}

/* --sender's values, in enum live_sender's order. */
static const char *const senders[] = { "auto", "live", "packet" };

/* The value's enum live_sender, -1 for none. */
static int sender_lookup(const char *name)
{
	for (int i = 0; i < (int)(sizeof(senders) / sizeof(senders[0])); i++)
		if (!strcmp(name, senders[i]))
			return i;
	return -1;
}

/* What the command line asks; 0 or EXIT_USAGE. */
/* What the options ask. */
struct bench_opts {
	bool json, live, mirror;
	unsigned int repeat, rounds;
	enum live_sender sender;
	const char *sender_arg;
};

static int bench_option(void *ctx, int opt, const char *arg)
{
	struct bench_opts *o = ctx;

	switch (opt) {
	case 'j':
		o->json = true;
		break;
	case 'l':
		o->live = true;
		break;
	case 'm':
		o->mirror = true;
		break;
	case 'r':
		if (!parse_u32(arg, 10000000, &o->repeat) || !o->repeat)
			return command_usage_error(&cmd_bench, "--repeat %s: expected 1-10000000", arg);
		break;
	case 'n':
		if (!parse_u32(arg, 1000, &o->rounds) || !o->rounds)
			return command_usage_error(&cmd_bench, "--rounds %s: expected 1-1000", arg);
		break;
	case 's':
		if (sender_lookup(arg) < 0)
			return command_usage_error(&cmd_bench, "--sender %s: expected auto, live or packet", arg);
		o->sender_arg = arg;
		o->sender = sender_lookup(arg);
		break;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct bench_opts *o)
{
	int ret = command_options(&cmd_bench, argc, argv, bench_option, o);

	if (ret)
		return ret;
	if (optind != argc)
		return command_usage_error(&cmd_bench, "unexpected argument '%s'", argv[optind]);
	if (o->sender_arg && !o->live)
		return command_usage_error(&cmd_bench, "--sender %s: only with --live", o->sender_arg);
	if (o->mirror && !o->live)
		return command_usage_error(&cmd_bench, "--mirror: only with --live");
	return 0;
}

/* The per-frame figures: both paths, every size and family, and the flow-count sweep. */
static int bench_frames(bool json, unsigned int repeat, unsigned int rounds)
{
	enum { NFRAMES = 2 * sizeof(payloads) / sizeof(payloads[0]) };
	struct bench_pass_bpf *pass = NULL;
	struct roceval_bpf *skel = NULL;
	double flows_ns[NFLOWROWS][2], clock_ns[NCLOCK];
	struct frame *frames = calloc(NFRAMES, sizeof(*frames));
	int err = -1;

	if (!frames) {
		pr_warn("Couldn't allocate the frames: %s", strerror(errno));
		return -ENOMEM;
	}
	for (int i = 0; i < NFRAMES; i++)
		frame_build(&frames[i], payloads[i / 2], i % 2, i + 1);
	pin_cpu();
	skel = roceval_load(LOAD_LIVE | LOAD_REPLAY, true);
	if (!skel)
		goto out;
	pass = bench_pass_bpf__open_and_load();
	if (!pass) {
		pr_warn("Couldn't load the baseline XDP program: %s", strerror(errno));
		goto out;
	}
	err = check_frames(skel, frames, NFRAMES);
	if (!err)
		err = measure(skel, pass, frames, NFRAMES, repeat, rounds);
	if (!err)
		err = measure_clock(skel, &frames[SWEEP_FRAME], repeat, rounds, clock_ns);
	if (!err)
		err = measure_flows(pass, &frames[SWEEP_FRAME], &frames[ACK_FRAME], repeat, rounds, flows_ns);
	if (!err && json)
		print_json(frames, NFRAMES, flows_ns, clock_ns);
	else if (!err)
		print_table(frames, NFRAMES, flows_ns, clock_ns, repeat, rounds);
out:
	bench_pass_bpf__destroy(pass);
	roceval_bpf__destroy(skel);
	free(frames);
	return err;
}

static int do_bench(int argc, char **argv)
{
	struct bench_opts o = { .rounds = 9, .sender = SENDER_AUTO };
	int err = parse_options(argc, argv, &o);

	if (err)
		return err;
	if (require_caps(false))
		return 1;
	if (o.live && o.mirror)
		return bench_live_mirror(o.json, o.repeat ?: 1000000, o.rounds, o.sender) ? 1 : 0;
	if (o.live)
		return bench_live(o.json, o.repeat ?: 1000000, o.rounds, o.sender) ? 1 : 0;
	return bench_frames(o.json, o.repeat ?: 20000, o.rounds) ? 1 : 0;
}

static const struct cmd_opt bench_opts[] = {
	{ .heading = "Options:" },
	{ .name = "json", .key = 'j', .arg = no_argument,
	  .help = "one JSON object per line, per payload and family: payload,\n"
		  "family, baseline_ns, headers_ns, full_ns, zlib_ns,\n"
		  "icrc_vs_zlib ((full_ns - headers_ns) / zlib_ns),\n"
		  "headers_over_baseline_ns (headers_ns - baseline_ns), the same\n"
		  "steady_read (in_place or helper), the same for the steady path\n"
		  "as steady_baseline_ns, steady_headers_ns, steady_full_ns,\n"
		  "steady_icrc_vs_zlib and steady_headers_over_baseline_ns, and\n"
		  "icrc_sample_ns (steady full path by icrc_sample),\n"
		  "steady_congestion_ns (the steady header path with every\n"
		  "congestion setting on), mirrored_frame (its ERSPAN II copy's\n"
		  "bytes), steady_mirrored_baseline_ns,\n"
		  "steady_mirrored_headers_ns and\n"
		  "steady_mirrored_headers_over_baseline_ns (the copies' steady\n"
		  "header path), decap_ns (that less\n"
		  "steady_headers_over_baseline_ns) and mirror_session (encap,\n"
		  "frames, lost, numbered: what the copies' session counted);\n"
		  "then one per\n"
		  "flow count: flows, payload, family, steady_read,\n"
		  "steady_baseline_ns, steady_headers_ns and\n"
		  "steady_headers_over_baseline_ns; then the answered stream's:\n"
		  "answered (\"ack\"), payload, family, the same four per frame,\n"
		  "and ack_over_baseline_ns, the ACK alone (twice the stream's\n"
		  "figure less the 2-flow SEND's); then clock (\"kernel\"),\n"
		  "payload, family, request_timed_ns and flow_sampled_ns" },
	{ .name = "live", .key = 'l', .arg = no_argument,
	  .help = "instead, Mpps per core through a real veth pair: in a network\n"
		  "namespace of its own (gone when the bench ends), frames sent\n"
		  "into one end (see --sender), received in native XDP at the\n"
		  "other by roceval or by a do-nothing program, alternately; an\n"
		  "RC ACK and a 3072-byte SEND_ONLY over IPv4 (live-frames mode\n"
		  "takes no multi-buffer frames), each the same frame repeated.\n"
		  "veth runs the receiver on the sending CPU, so the figure is\n"
		  "one core sending and receiving; received frames go up the\n"
		  "stack, as on a mirror port.  A round whose receiver got fewer\n"
		  "than half the frames is run again, up to 3 times, then the\n"
		  "bench fails.  Each row names its sender.  JSON: live, family,\n"
		  "frame_bytes, sender (live_frames or af_packet), pass_mpps,\n"
		  "roceval_mpps, roceval_vs_pass" },
	{ .name = "mirror", .key = 'm', .arg = no_argument,
	  .help = "with --live, collector sizing: ERSPAN II mirror copies (GRE\n"
		  "numbered frame by frame, one session a frame) of an RC ACK, a\n"
		  "1 KB and a 4 KB RDMA WRITE_ONLY over IPv4, roceval at\n"
		  "icrc_sample 1 and 8, on a pair with MTU " "9000; the 4 KB\n"
		  "WRITE, too long for a live frame, always goes by AF_PACKET.\n"
		  "Each session must count every frame roceval received.  Adds\n"
		  "what roceval costs a frame over the do-nothing program, and\n"
		  "the cores per 100 Gb/s of mirrored RoCE frames (on that link,\n"
		  "with 24 bytes of FCS, preamble and gap each) at roceval's\n"
		  "Mpps and at its cost alone.  JSON: live, encap, family,\n"
		  "frame_bytes, mirrored_bytes, sender, icrc_sample, pass_mpps,\n"
		  "roceval_mpps, roceval_vs_pass, roceval_ns, cores_per_100g,\n"
		  "roceval_cores_per_100g" },
	{ .name = "sender", .key = 's', .arg = required_argument, .meta = "S",
	  .help = "with --live, what sends the frames: live, the kernel in XDP\n"
		  "live-frames mode (BPF_PROG_TEST_RUN); packet, an AF_PACKET\n"
		  "socket bound to the sending end, past the qdisc, 64 frames a\n"
		  "sendmmsg() call; auto (the default), live unless the kernel\n"
		  "refuses it (EPERM or EACCES, as a security policy may), then\n"
		  "packet, said in one line on stderr.  Either way one core\n"
		  "sends and receives, but packet's figures also pay the system\n"
		  "calls, so they differ from live's: compare the ratio" },
	{ .name = "repeat", .key = 'r', .arg = required_argument, .meta = "N",
	  .help = "runs (frames) per figure and round (default 20000; with\n"
		  "--live 1000000 ACKs, a quarter as many SENDs)" },
	{ .name = "rounds", .key = 'n', .arg = required_argument, .meta = "N",
	  .help = "rounds; the median is reported (default 9)" },
	CMD_OPT_END,
};

const struct command cmd_bench = {
	.name = "bench",
	.args = "[--live [--mirror] [--sender auto|live|packet]] [--json] [--repeat N] [--rounds N]",
	.summary = "measure what validation costs per frame, against XDP_PASS and zlib",
	.help = "Builds valid RoCEv2 frames, an RC ACK (payload 0) and RC SEND_ONLY with 256, 1024\n"
		"and 4096 bytes of payload (a multi-buffer frame), over IPv4 and IPv6, and times\n"
		"each with BPF_PROG_TEST_RUN in this process:\n\n"
		"  baseline  a do-nothing XDP_PASS program: the cost of the test harness itself\n"
		"  headers   roceval with the ICRC check sampled out (icrc_sample=1000000000)\n"
		"  full      roceval checking everything, the default configuration\n"
		"  zlib      zlib's crc32() in userspace over the bytes the ICRC covers\n\n"
		"on two paths.  One frame repeated: after its first run each repeat is a duplicate\n"
		"PSN of its flow.  Steady: an established flow's next PSN each time, as replay\n"
		"batches of frames with consecutive PSNs, timed per batch and divided by its\n"
		"frames; the baseline there walks the same batches calling a function that does\n"
		"nothing.  A test run keeps about its first 3.5 KB linear: batches of frames with\n"
		"up to 256 bytes of payload stay in 3 KB, so the program reads their headers in\n"
		"place as it reads an attached interface's frames (read: in_place); larger frames\n"
		"go in 60 KB batches and most are read with the load helper, as a replay's are\n"
		"(read: helper).  The steady path also gives the cost of icrc_sample=1, 2, 8 and\n"
		"64, and of its header path with every congestion setting on (cc-hdr); then the\n"
		"header path of each frame's ERSPAN II copies, as a switch mirrors it to a\n"
		"collector (outer headers of the frame's family, a session each, its GRE sequence\n"
		"numbers frame by frame), timed right after the bare frame's, and what it costs\n"
		"over it (decap).  Then the header path of 256-byte IPv4 frames spread over 1, 2,\n"
		"1024 and 65536\n"
		"live flows, then of 1 flow whose every SEND is answered by an ACK from the other side\n"
		"(each in a program of its own with the default flow table).  That ACK is matched\n"
		"to its request, as on a host that sees both directions; the ACK of the rows above\n"
		"(payload 0) answers nothing roceval saw, as on a one-way mirror, where after 16\n"
		"such ACKs their requests are no longer looked for.  Last, what timing a new\n"
		"request by the kernel's clock costs an attached program (latency_sample=1 against\n"
		"never; a replay times frames by the capture, for free), from single-frame runs of\n"
		"the live program, and what latency_sample=flow (the default) costs against never\n"
		"where no request is answered (one in 9 is timed).  No other figure includes that\n"
		"clock: their runs time frames by the time a replay record carries.\n\n"
		"Each figure is the median over the rounds of the kernel's average time per run.\n"
		"Before timing, every frame is run once and must count as RoCEv2 with a good ICRC\n"
		"and no rule broken; after it, every steady flow must have counted each of its\n"
		"frames and no violation, every mirror session each of its copies, none lost,\n"
		"and every answered ACK must have been matched to its request.  The machine's\n"
		"load shows in the figures: compare ratios.\n\n",
	.opts = bench_opts,
	.col = 20,
	.more = "\n"
		"The first table adds Mpps/core and Gb/s/core of the full program (1000 / full_ns,\n"
		"and frame bits / full_ns).  Needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON.  Exit\n"
		"status: 0, 1 when BPF failed or a frame did not take the path it was meant to, 2\n"
		"for a bad option.\n\n"
		"Example:\n"
		"  roceval bench --repeat 5000 --rounds 3\n",
	.run = do_bench,
};
