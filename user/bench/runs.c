// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The bench's runs: frames and streams of frames put through a program
 * with BPF_PROG_TEST_RUN and timed, zlib's time over the same bytes, and
 * the checks that the validator counted what it was given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame.h"
#include "live/loader.h"
#include "log.h"
#include "report/report.h"
#include "roceval.skel.h"
#include "rule_names.h"
#include "runs.h"
#include "settings.h"
#include "wire.h"

/* Makes the frame one of DestQP qpn with PSN psn, with its ICRC to match. */
static void frame_seq(struct frame *f, __u32 qpn, __u32 psn)
{
	put24(f->data + f->lay.bth + 5, qpn);
	put24(f->data + f->lay.bth + 9, psn);
	pkt_finish(f->data, &f->lay);
}

/* The frame as a batch record at *off, after `outer_len` bytes of outer headers (batch_fill made room for it). */
static void batch_put(struct batch *b, size_t *off, const struct frame *f, const unsigned char *outer,
		      __u32 outer_len)
{
	/* captured and wire length, little-endian as the host; the capture time is 0 */
	__u32 len = outer_len + f->len, rec[4] = { len, len };

	memcpy(b->data + *off, rec, ROCEVAL_REC_HDR);
	memcpy(b->data + *off + ROCEVAL_REC_HDR, outer, outer_len);
	memcpy(b->data + *off + ROCEVAL_REC_HDR + outer_len, f->data, f->len);
	*off += ROCEVAL_REC_HDR + len;
	b->n++;
}

void stream_mirror(struct stream *st, unsigned int session)
{
	st->outer_len = erspan2_outer(st->outer, st->f.ipv6, session, st->f.data, st->f.len);
	st->mseq = 0;
}

/*
 * A test run keeps the first 4096 - 256 (headroom) - sizeof(struct
 * skb_shared_info) bytes of its input in one linear buffer and the rest in
 * pages of fragments.  A record in the linear part is read in place, as an
 * attached program reads every frame; past it, with the load helper, as
 * most of a replay's records are.
 */
#define BATCH_LINEAR 3072

/*
 * Whether batches of records of this size stay in the linear part, so their
 * frames are read in place: when it holds 4 records or more (frames of up
 * to 256 bytes of payload here).  Larger frames go in full batches, read
 * with the helper, since one-frame batches would time the test run's cold
 * caches more than the frame.
 */
static bool record_in_place(size_t record)
{
	return 4 * record <= BATCH_LINEAR;
}

const char *read_mode(size_t record)
{
	return record_in_place(record) ? "in_place" : "helper";
}

/* A batch record of frame f, and of the ACK that answers it, if any: the two go in one batch together. */
size_t record_bytes(const struct frame *f, const struct frame *ack)
{
	return (ack ? 2 : 1) * ROCEVAL_REC_HDR + f->len + (ack ? ack->len : 0);
}

/* The next frames of the stream, at most `max`, as one replay batch. */
static void batch_fill(struct batch *b, struct stream *st, __u64 max)
{
	struct frame *f = &st->f;
	unsigned int per = st->ack ? 2 : 1;
	size_t off = 4, room = st->outer_len + record_bytes(&st->f, st->ack);
	size_t cap = record_in_place(room) ? BATCH_LINEAR : sizeof(b->data);

	b->n = 0;
	while (b->n + per <= ROCEVAL_BATCH_MAX_FRAMES && b->n < max && off + room <= cap) {
		__u64 g = st->sent++;
		__u32 psn = (1 + g / st->flows) & ROCE_PSN_MASK;

		frame_seq(f, st->qpn + g % st->flows, psn);
		if (st->outer_len)
			put32(st->outer + st->outer_len - 12, ++st->mseq);
		batch_put(b, &off, f, st->outer, st->outer_len);
		if (st->ack) {
			frame_seq(st->ack, ANSWER_QPN + g % st->flows, psn);
			batch_put(b, &off, st->ack, st->outer, 0);
		}
	}
	memcpy(b->data, &b->n, 4);
	b->len = off;
}

/*
 * Average ns per frame over `frames` frames of the stream, in batches
 * through a replay-style program (roceval_replay or bench_walk).
 */
int run_stream(int prog_fd, struct batch *b, struct stream *st, __u64 frames, double *ns)
{
	__u64 done = 0, dur = 0;

	while (done < frames) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);

		batch_fill(b, st, frames - done);
		opts.data_in = b->data;
		opts.data_size_in = b->len;
		if (bpf_prog_test_run_opts(prog_fd, &opts)) {
			pr_warn("Couldn't run the batch program: %s", strerror(errno));
			return -errno;
		}
		if (opts.retval != b->n) {
			pr_warn("bench batch: %u of %u frames walked", opts.retval, b->n);
			return -EPROTO;
		}
		dur += opts.duration;
		done += b->n;
	}
	*ns = (double)dur / done;
	return 0;
}

/* Average ns per run of the frame over `repeat` runs, as the kernel times them. */
int run_prog(int prog_fd, const struct frame *f, unsigned int repeat, double *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		pr_warn("Couldn't run the XDP program: %s", strerror(errno));
		return -errno;
	}
	if (opts.retval != XDP_PASS) {
		pr_warn("bench frame of %zu bytes was not passed (XDP action %u)", f->len, opts.retval);
		return -EPROTO;
	}
	*ns = opts.duration;
	return 0;
}

/*
 * Average ns per frame over the next `frames` frames of the stream, a test
 * run each of the live program (caches go cold between runs: only a
 * difference of two such figures means anything).
 */
int run_frames(int prog_fd, struct stream *st, unsigned int frames, double *ns)
{
	double sum = 0, one;

	for (unsigned int i = 0; i < frames; i++) {
		__u64 g = st->sent++;
		int err;

		frame_seq(&st->f, st->qpn + g % st->flows, (1 + g / st->flows) & ROCE_PSN_MASK);
		err = run_prog(prog_fd, &st->f, 1, &one);
		if (err)
			return err;
		sum += one;
	}
	*ns = sum / frames;
	return 0;
}

/*
 * This thread's CPU time: the kernel's test-run timer stops while another
 * task has the CPU, so zlib's side must not count such time either, or a
 * busy machine would flatter the BPF figures.
 */
static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Where the CRCs go, so the compiler cannot drop the loop that computes them. */
volatile uLong bench_zlib_sink;

double zlib_ns(const struct frame *f, unsigned int repeat)
{
	uLong acc = 0;
	double t0 = cpu_ns();

	for (unsigned int i = 0; i < repeat; i++)
		acc ^= crc32(0, f->icrc_in, f->icrc_len);
	bench_zlib_sink = acc;
	return (cpu_ns() - t0) / repeat;
}

/* The settings' defaults with these "key=value" assignments, written to the map. */
static int set_assignments(int settings_fd, struct roceval_settings *cfg, const char *const *assign, size_t n)
{
	char err[128];
	int ret;

	settings_defaults(cfg);
	for (size_t i = 0; i < n; i++)
		if (settings_assign(cfg, assign[i], err, sizeof(err))) {
			pr_warn("%s", err);
			return -EINVAL;
		}
	ret = roceval_settings_write(settings_fd, cfg);
	if (ret)
		pr_warn("Couldn't write the settings map: %s", strerror(-ret));
	return ret;
}

/* The defaults with icrc_sample and latency_sample as given. */
int set_sampling(int settings_fd, struct roceval_settings *cfg, const char *icrc, const char *latency)
{
	char icrc_sample[48], latency_sample[48];
	const char *const assign[] = { icrc_sample, latency_sample };

	snprintf(icrc_sample, sizeof(icrc_sample), "icrc_sample=%s", icrc);
	snprintf(latency_sample, sizeof(latency_sample), "latency_sample=%s", latency);
	return set_assignments(settings_fd, cfg, assign, 2);
}

int set_icrc_sample(int settings_fd, struct roceval_settings *cfg, const char *n)
{
	return set_sampling(settings_fd, cfg, n, "1");
}

int set_congestion(int settings_fd, struct roceval_settings *cfg, const char *icrc)
{
	char icrc_sample[48];
	const char *const assign[] = { "dscp=26", "cnp_dscp=48", "pcp=3", "cnp_pcp=6", "ect=required",
				       "cnp_gap=4us", "cnp_delay=50us", "cnp_reaction=50us", "latency_sample=1",
				       icrc_sample };

	snprintf(icrc_sample, sizeof(icrc_sample), "icrc_sample=%s", icrc);
	return set_assignments(settings_fd, cfg, assign, sizeof(assign) / sizeof(assign[0]));
}

/*
 * Runs each frame once with every check on and makes sure the program saw
 * a RoCEv2 frame with a good ICRC and nothing wrong: a benchmark of frames
 * the program rejects early would time the wrong path.
 */
int check_frames(struct roceval_bpf *skel, struct frame *frames, int n)
{
	int prog_fd = bpf_program__fd(skel->progs.roceval_xdp);
	int counters_fd = bpf_map__fd(skel->maps.counters);
	struct roceval_settings cfg;
	struct roceval_counters c;
	double ns;
	int err;

	settings_defaults(&cfg);
	err = roceval_settings_write(bpf_map__fd(skel->maps.settings), &cfg);
	if (err) {
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < n; i++) {
		err = run_prog(prog_fd, &frames[i], 1, &ns);
		if (err)
			return err;
	}
	err = counters_read(counters_fd, &c);
	if (err) {
		pr_warn("Couldn't read the counters: %s", strerror(-err));
		return err;
	}
	for (int r = 0; r < RULE__COUNT; r++) {
		if (c.rule[r]) {
			pr_warn("bench frames broke rule %s: the program is not what this build expects",
				rule_ids[r]);
			return -EPROTO;
		}
	}
	if (c.total[TOTAL_ROCE] != (__u64)n || c.total[TOTAL_ICRC_OK] != (__u64)n) {
		pr_warn("bench frames: %llu RoCEv2, %llu good ICRC of %d",
			(unsigned long long)c.total[TOTAL_ROCE],
			(unsigned long long)c.total[TOTAL_ICRC_OK], n);
		return -EPROTO;
	}
	return 0;
}

/* The flow of `key` counted `want` frames and no violation; its cold part in *c. */
static int check_flow(const struct roceval_bpf *skel, const struct roceval_flow_key *key, __u64 want,
		      struct roceval_flow_cold *c)
{
	struct roceval_flow v;

	int err = flow_lookup(bpf_map__fd(skel->maps.flows), bpf_map__fd(skel->maps.flow_sets), skel->rodata->flow_seed,
			      key, &v);

	if (!err && bpf_map_lookup_elem(bpf_map__fd(skel->maps.flow_cold), &v.cold, c))
		err = -errno;
	if (err) {
		pr_warn("bench flow 0x%x: not in the flow table: %s", key->dqpn, strerror(-err));
		return -EPROTO;
	}
	if (v.packets != want || c->violations) {
		pr_warn("bench flow 0x%x: %llu frames, %llu violations; expected %llu and none", key->dqpn,
			(unsigned long long)v.packets, (unsigned long long)c->violations,
			(unsigned long long)want);
		return -EPROTO;
	}
	return 0;
}

/*
 * Makes sure the steady runs took the steady path: every flow of the
 * stream counted each of its frames and none broke a rule (a gap or a
 * duplicate PSN, a bad ICRC); with ACKs, each ACK flow too, and the ACKs
 * were matched to their requests (the requests' latency histogram has
 * samples).
 */
/* check_stream(), the stream's flows in mirror session `session` (ROCEVAL_MIRROR_BARE: none). */
static int check_flows(const struct roceval_bpf *skel, const struct stream *st, __u16 session)
{
	const struct frame *f = &st->f;
	struct roceval_flow_key req = { .ipv6 = f->ipv6, .session = session };
	struct roceval_flow_key ack = { .ipv6 = f->ipv6, .session = session };
	const unsigned char *ip = f->data + 14;
	size_t alen = f->ipv6 ? 16 : 4;

	memcpy(req.saddr, ip + (f->ipv6 ? 8 : 12), alen);
	memcpy(req.daddr, ip + (f->ipv6 ? 24 : 16), alen);
	memcpy(ack.saddr, req.daddr, alen);
	memcpy(ack.daddr, req.saddr, alen);
	for (__u32 i = 0; i < st->flows; i++) {
		__u64 want = st->sent / st->flows + (i < st->sent % st->flows), samples = 0;
		struct roceval_flow_cold c;
		int err;

		req.dqpn = st->qpn + i;
		err = check_flow(skel, &req, want, &c);
		if (err)
			return err;
		if (!st->ack)
			continue;
		for (int b = 0; b < ROCEVAL_LAT_BUCKETS; b++)
			samples += c.latency[b];
		ack.dqpn = ANSWER_QPN + i;
		err = check_flow(skel, &ack, want, &c);
		if (err)
			return err;
		if (!samples) {
			pr_warn("bench flow 0x%x: no ACK was matched to its request", req.dqpn);
			return -EPROTO;
		}
	}
	return 0;
}

int check_stream(const struct roceval_bpf *skel, const struct stream *st)
{
	return check_flows(skel, st, ROCEVAL_MIRROR_BARE);
}

/* The ERSPAN II session the stream's copies are in, from its outer headers. */
static void mirror_key(const struct stream *st, struct roceval_mirror_key *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->source, st->outer + 14 + (st->f.ipv6 ? 8 : 12), st->f.ipv6 ? 16 : 4);
	k->ipv6 = st->f.ipv6;
	k->encap = MIRROR_ERSPAN2;
	k->session = get16(st->outer + st->outer_len - 6) & 0x3FF;
}

int check_mirror(const struct roceval_bpf *skel, const struct stream *st, struct mirror_entry *out)
{
	struct mirror_entry *e, *found = NULL;
	struct roceval_mirror_key k;
	struct mirror_fds fds = mirror_fds_of(skel->obj);
	int n = mirrors_collect(&fds, &e);

	if (n < 0) {
		pr_warn("Couldn't read the mirror sessions: %s", strerror(-n));
		return n;
	}
	mirror_key(st, &k);
	for (int i = 0; i < n && !found; i++)
		if (!memcmp(&e[i].key, &k, sizeof(k)))
			found = &e[i];
	if (found)
		*out = *found;
	free(e);
	if (!found) {
		pr_warn("bench mirror session %u: not listed", k.session);
		return -EPROTO;
	}
	if (out->frames != st->sent || out->bytes != st->sent * (st->outer_len + st->f.len) || out->lost ||
	    out->truncated || out->nested || !out->numbered) {
		pr_warn("bench mirror session %u: %llu frames, %llu lost, %llu cut, %llu nested, %snumbered;"
			" expected %llu, none lost, cut or nested, numbered", k.session,
			(unsigned long long)out->frames, (unsigned long long)out->lost,
			(unsigned long long)out->truncated, (unsigned long long)out->nested,
			out->numbered ? "" : "un", (unsigned long long)st->sent);
		return -EPROTO;
	}
	return check_flows(skel, st, out->slot + 1);
}

int check_mirror_totals(const struct roceval_bpf *skel, __u64 frames)
{
	struct roceval_counters c;
	int err = counters_read(bpf_map__fd(skel->maps.counters), &c);

	if (err) {
		pr_warn("Couldn't read the counters: %s", strerror(-err));
		return err;
	}
	if (c.total[TOTAL_MIRROR_FRAMES] != frames || c.total[TOTAL_MIRROR_LOST] ||
	    c.total[TOTAL_MIRROR_MALFORMED] || c.total[TOTAL_MIRROR_NESTED] || c.total[TOTAL_MIRROR_TRUNCATED] ||
	    c.total[TOTAL_MIRROR_SESSIONS_FULL]) {
		pr_warn("bench mirrored frames: %llu taken apart of %llu, %llu lost, %llu malformed, %llu nested,"
			" %llu cut, %llu past the sessions table",
			(unsigned long long)c.total[TOTAL_MIRROR_FRAMES], (unsigned long long)frames,
			(unsigned long long)c.total[TOTAL_MIRROR_LOST],
			(unsigned long long)c.total[TOTAL_MIRROR_MALFORMED],
			(unsigned long long)c.total[TOTAL_MIRROR_NESTED],
			(unsigned long long)c.total[TOTAL_MIRROR_TRUNCATED],
			(unsigned long long)c.total[TOTAL_MIRROR_SESSIONS_FULL]);
		return -EPROTO;
	}
	return 0;
}

/* Each flow of the stream once, so that it exists before the timed runs. */
int warm_stream(int prog_fd, struct batch *b, struct stream *st)
{
	double ns;

	return run_stream(prog_fd, b, st, st->flows, &ns);
}
