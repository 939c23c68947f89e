// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame.h"
#include "veth.h"
#include "bench_pass.skel.h"
#include "json.h"
#include "live/loader.h"
#include "log.h"
#include "report/report.h"
#include "roceval.skel.h"
#include "settings.h"

/*
 * --live: frames through a real veth pair at the driver hook.  The bench
 * moves into a network namespace of its own (unshare), so the pair and
 * everything on it vanish with the process however it ends.  A sender
 * program in live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES, as
 * xdp-trafficgen) bounces each frame out of LIVE_TX; LIVE_RX runs roceval
 * or the do-nothing bench_rx in native XDP.  veth runs the receiving NAPI
 * on the sending CPU, so with the thread pinned one core does all of it:
 * frames per second of wall time are Mpps per core, sender included.
 *
 * Nothing on the kernel's live-frames path answers EPERM: the test run
 * fails with EINVAL, E2BIG, ENODEV, EFAULT, ENOMEM or EINTR, a redirect
 * that fails drops its frame without an error, and bpf() checks no
 * capability for a test run.  EPERM for this one flag comes from a
 * security module's bpf() hook, the one place that sees the command's
 * attributes: a BPF-LSM policy's, live frames leaving a device past its
 * qdisc and netfilter.  There an AF_PACKET socket sends instead
 * (SENDER_PACKET): veth_xmit puts its frames on the same ring, and the
 * softirq run as each send leaves its bottom half polls them through the
 * same native XDP program on the same CPU.
 */
#define LIVE_TX "rvb0"
#define LIVE_RX "rvb1"
/* Live-frames mode takes no multi-buffer frames: one page less head and tail room. */
#define LIVE_MTU "3500"
#define LIVE_PAYLOAD 3072
/*
 * The longest frame a live frame carries (a page less head and tail room):
 * a longer one goes by the packet socket, the pair's MTU then
 * LIVE_MIRROR_MTU (multi-buffer frames, which both receivers take).
 */
#define LIVE_FRAME_MAX 3500
#define LIVE_MIRROR_MTU "9000"
#define LIVE_BATCH 64 /* frames per flush or sendmmsg(); veth's ring holds 256 */

extern char **environ;

static int run_ip(char *const argv[])
{
	int status, err;
	pid_t pid;

	err = posix_spawnp(&pid, "ip", NULL, NULL, argv, environ);
	if (err) {
		pr_warn("Couldn't run ip: %s", strerror(err));
		return -err;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		pr_warn("Couldn't set up the veth pair: 'ip %s %s %s' failed", argv[1], argv[2], argv[3]);
		return -EIO;
	}
	return 0;
}

static int live_setup(char *mtu, int *tx_ifindex, int *rx_ifindex)
{
	char *add[] = { "ip", "link", "add", LIVE_TX, "mtu", mtu, "type", "veth",
			"peer", "name", LIVE_RX, "mtu", mtu, NULL };
	char *up_tx[] = { "ip", "link", "set", LIVE_TX, "up", NULL };
	char *up_rx[] = { "ip", "link", "set", LIVE_RX, "up", NULL };
	int err;

	if (unshare(CLONE_NEWNET)) {
		pr_warn("Couldn't make a network namespace: %s", strerror(errno));
		return -errno;
	}
	err = run_ip(add);
	if (!err)
		err = run_ip(up_tx);
	if (!err)
		err = run_ip(up_rx);
	if (err)
		return err;
	*tx_ifindex = if_nametoindex(LIVE_TX);
	*rx_ifindex = if_nametoindex(LIVE_RX);
	if (!*tx_ifindex || !*rx_ifindex) {
		pr_warn("Couldn't find the veth pair: %s", strerror(errno));
		return -ENODEV;
	}
	return 0;
}

/* What a run needs: the programs, the pair, and who sends. */
struct live {
	struct roceval_bpf *skel;
	struct bench_pass_bpf *pass;
	int tx_ifindex, rx_ifindex;
	enum live_sender sender; /* SENDER_AUTO: live frames, until the kernel refuses them */
	int packet_fd;
	int refused; /* the errno the kernel refused live frames with, under SENDER_AUTO */
	/*
	 * Mirrored frames: where their sequence number is (0: bare frames), and
	 * the next one each receiver is sent, so that roceval's session sees
	 * its numbers advance by one from run to run (no loss between them).
	 */
	__u32 seq_at;
	__u32 seq[2];
	unsigned char (*bufs)[FRAME_MAX]; /* the packet sender's numbered copies, LIVE_BATCH */
	/*
	 * What the do-nothing program's runs send instead, NULL: the same.  A
	 * run's last frames may still sit in veth's ring when the next run's
	 * program is attached: mirrored ones of another session, so that
	 * roceval never takes the other series' numbers for its session's.
	 */
	const struct frame *pass_frame;
	struct roceval_settings cfg;
	const __u32 *samples; /* icrc_sample values roceval runs each round with; none: as set */
	int nsamples;
};

/*
 * A raw socket bound to LIVE_TX, protocol 0 so that it receives nothing,
 * handing each frame straight to veth_xmit: PACKET_QDISC_BYPASS skips the
 * qdisc layer and the taps, which live frames do not pass either.
 */
static int packet_open(struct live *l)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = l->tx_ifindex };
	int one = 1, err;

	l->packet_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (l->packet_fd >= 0 &&
	    !setsockopt(l->packet_fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) &&
	    !bind(l->packet_fd, (struct sockaddr *)&sll, sizeof(sll)))
		return 0;
	err = -errno;
	pr_warn("Couldn't open a packet socket on %s: %s", LIVE_TX, strerror(-err));
	return err;
}

/* `count` copies of the frame out of LIVE_TX by the sender program, in live-frames mode. */
static int send_live(struct live *l, const struct frame *f, __u32 count, bool roceval)
{
	struct xdp_md ctx = { .data_end = f->len, .ingress_ifindex = l->tx_ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = count,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = LIVE_BATCH);
	int err;

	l->pass->bss->bench_tx_seq_at = l->seq_at;
	l->pass->bss->bench_tx_seq = l->seq[roceval];
	err = bpf_prog_test_run_opts(bpf_program__fd(l->pass->progs.bench_tx), &opts) ? -errno : 0;
	l->seq[roceval] = l->pass->bss->bench_tx_seq;
	return err;
}

/* Numbers the next `batch` copies as a mirror's, from the receiver's next number on. */
static void number_copies(struct live *l, struct mmsghdr *msgs, unsigned int batch, bool roceval)
{
	for (unsigned int i = 0; i < batch; i++) {
		__be32 seq = htonl(l->seq[roceval]++);

		memcpy((unsigned char *)msgs[i].msg_hdr.msg_iov->iov_base + l->seq_at, &seq, sizeof(seq));
	}
}

/* The same by the packet socket, LIVE_BATCH frames a call. */
static int send_packet(struct live *l, const struct frame *f, __u32 count, bool roceval)
{
	struct iovec iov[LIVE_BATCH];
	struct mmsghdr msgs[LIVE_BATCH];
	__u32 sent = 0;

	for (int i = 0; i < LIVE_BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = (void *)f->data, .iov_len = f->len };
		if (l->seq_at) {
			memcpy(l->bufs[i], f->data, f->len);
			iov[i].iov_base = l->bufs[i];
		}
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (sent < count) {
		unsigned int batch = count - sent < LIVE_BATCH ? count - sent : LIVE_BATCH, tried;
		int n;

		if (l->seq_at)
			number_copies(l, msgs, batch, roceval);
		n = sendmmsg(l->packet_fd, msgs, batch, 0);

		/*
		 * ENOBUFS: veth's ring was full and it dropped the frame, as it
		 * drops live frames; the receiver's count shows the loss.
		 */
		if (n < 0 && errno != ENOBUFS)
			return -errno;
		/*
		 * sendmmsg() stops at the copy that failed (dropped): the copies
		 * after it were never tried, and give their numbers back, or the
		 * receiver would count frames lost that were never sent.
		 */
		tried = n < 0 ? 1 : (unsigned int)n < batch ? (unsigned int)n + 1 : batch;
		if (l->seq_at)
			l->seq[roceval] -= batch - tried;
		sent += n > 0 ? n : 1;
	}
	return 0;
}

static bool refusal(int err)
{
	return err == -EPERM || err == -EACCES;
}

static int live_send(struct live *l, const struct frame *f, __u32 count, bool roceval)
{
	int err;

	if (l->sender == SENDER_PACKET || f->len > LIVE_FRAME_MAX) {
		err = send_packet(l, f, count, roceval);
		if (err)
			pr_warn("Couldn't send frames by AF_PACKET: %s", strerror(-err));
		return err;
	}
	err = send_live(l, f, count, roceval);
	if (err && l->sender == SENDER_AUTO && refusal(err))
		l->refused = -err;
	else if (err)
		pr_warn("Couldn't send live frames: %s", strerror(-err));
	return err;
}

static const char *sender_name(const struct live *l, const struct frame *f)
{
	return l->sender == SENDER_PACKET || f->len > LIVE_FRAME_MAX ? "af_packet" : "live_frames";
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Frames the receiving program has seen so far: RoCEv2 frames for roceval, any for bench_rx. */
static int live_seen(const struct live *l, bool roceval, __u64 *n)
{
	struct roceval_counters c;
	int err;

	if (!roceval) {
		*n = l->pass->bss->bench_rx_frames;
		return 0;
	}
	err = counters_read(bpf_map__fd(l->skel->maps.counters), &c);
	if (err)
		pr_warn("Couldn't read the counters: %s", strerror(-err));
	*n = c.total[TOTAL_ROCE];
	return err;
}

/*
 * Mpps of `count` copies of the frame sent into LIVE_TX and received by
 * roceval or bench_rx on LIVE_RX; -EPROTO when most of them were dropped.
 */
static int live_run(struct live *l, bool roceval, const struct frame *f, __u32 count, double *mpps,
		    __u64 *received)
{
	int rx_fd = roceval ? bpf_program__fd(roceval_live_prog(l->skel)) :
			      bpf_program__fd(l->pass->progs.bench_rx);
	__u64 before, after;
	double t0, t1;
	int err;

	err = bpf_xdp_attach(l->rx_ifindex, rx_fd, XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		pr_warn("Couldn't attach XDP to %s: %s", LIVE_RX, strerror(-err));
		return err;
	}
	err = live_seen(l, roceval, &before);
	t0 = mono_s();
	if (!err)
		err = live_send(l, !roceval && l->pass_frame ? l->pass_frame : f, count, roceval);
	t1 = mono_s();
	if (!err)
		err = live_seen(l, roceval, &after);
	bpf_xdp_detach(l->rx_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	if (err)
		return err;
	/*
	 * What the receiver got, not what was sent: when it falls behind, veth
	 * drops at its ring, and the rate is what the core could validate.
	 */
	*received = after - before;
	if (*received < count / 2)
		return -EPROTO;
	*mpps = *received / (t1 - t0) / 1e6;
	return 0;
}

/*
 * A round in which the receiver got fewer than half the frames is run
 * again: it no longer timed one core doing both (veth dropped most frames
 * at its ring).  Here 3 of 21 runs of the bench once ended on such a round
 * (36 rounds a run; 364k of 1M frames received), then none of 26.
 */
#define LIVE_ATTEMPTS 3

static int live_round(struct live *l, bool roceval, const struct frame *f, __u32 count, double *mpps)
{
	__u64 received = 0;
	int err = -EPROTO;

	for (int attempt = 0; attempt < LIVE_ATTEMPTS && err == -EPROTO; attempt++)
		err = live_run(l, roceval, f, count, mpps, &received);
	if (err == -EPROTO)
		pr_warn("live run: %s received %llu of %u frames, %d times in a row",
			roceval ? "roceval" : "the do-nothing program", (unsigned long long)received, count,
			LIVE_ATTEMPTS);
	return err;
}

/* The rounds of one frame, the do-nothing program's first in mpps, then roceval's. */
static int set_sample(struct live *l, __u32 sample)
{
	int err;

	l->cfg.icrc_sample = sample;
	err = roceval_settings_write(bpf_map__fd(l->skel->maps.settings), &l->cfg);
	if (err)
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
	return err;
}

/*
 * The rounds of one frame, the do-nothing program's first in mpps, then
 * roceval's with each of l->samples (icrc_sample) in turn, or without them
 * with the settings as they are.
 */
static int live_rounds(struct live *l, const struct frame *f, __u32 count, unsigned int rounds, double *mpps)
{
	int runs = l->nsamples ? l->nsamples : 1, err = 0;

	for (unsigned int r = 0; r < rounds && !err; r++) {
		err = live_round(l, false, f, count, &mpps[r]);
		for (int s = 0; s < runs && !err; s++) {
			if (l->nsamples)
				err = set_sample(l, l->samples[s]);
			if (!err)
				err = live_round(l, true, f, count, &mpps[(1 + s) * rounds + r]);
		}
	}
	return err;
}

static void print_live_json(const char *kind, size_t frame_bytes, const char *sender, double pass_mpps,
			    double roceval_mpps)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "live", kind);
	json_string(&w, "family", "ipv4");
	json_u64(&w, "frame_bytes", frame_bytes);
	json_string(&w, "sender", sender);
	json_double(&w, "pass_mpps", pass_mpps, 4);
	json_double(&w, "roceval_mpps", roceval_mpps, 4);
	json_double(&w, "roceval_vs_pass", roceval_mpps / pass_mpps, 3);
	json_object_end(&w);
	json_end(&w);
}

/* The pair, the programs and the sender, roceval's settings the defaults; 0 or -errno, said. */
static int pair_open(struct live *l, char *mtu)
{
	int err;

	pin_cpu();
	err = live_setup(mtu, &l->tx_ifindex, &l->rx_ifindex);
	if (!err && l->sender == SENDER_PACKET)
		err = packet_open(l);
	if (err)
		return err;
	/* what attach would run there */
	l->skel = roceval_load_nic(l->rx_ifindex);
	if (!l->skel)
		l->skel = roceval_load(LOAD_LIVE, true);
	if (!l->skel)
		return -EINVAL;
	l->pass = bench_pass_bpf__open_and_load();
	if (!l->pass) {
		pr_warn("Couldn't load the baseline XDP programs: %s", strerror(errno));
		return -EINVAL;
	}
	settings_defaults(&l->cfg);
	err = roceval_settings_write(bpf_map__fd(l->skel->maps.settings), &l->cfg);
	if (err)
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
	return err;
}

static void pair_close(struct live *l)
{
	if (l->packet_fd >= 0)
		close(l->packet_fd);
	bench_pass_bpf__destroy(l->pass);
	roceval_bpf__destroy(l->skel);
	free(l->bufs);
}

/*
 * live_rounds(), and when the kernel refused live frames under auto, the
 * frame's rounds again, every one by the socket: a refused run sent nothing.
 */
static int live_rounds_any(struct live *l, const struct frame *f, __u32 count, unsigned int rounds, double *mpps)
{
	int err = live_rounds(l, f, count, rounds, mpps);

	if (err && l->refused) {
		pr_warn("the kernel refused BPF_PROG_TEST_RUN in live-frames mode (%s: %s): sending by AF_PACKET instead",
			strerrorname_np(l->refused), strerror(l->refused));
		l->refused = 0;
		l->sender = SENDER_PACKET;
		err = packet_open(l);
		if (!err)
			err = live_rounds(l, f, count, rounds, mpps);
	}
	return err;
}

int bench_live(bool json, unsigned int count, unsigned int rounds, enum live_sender sender)
{
	static const struct {
		const char *name;
		unsigned int payload;
		unsigned int divide; /* fewer of the big frames */
	} kinds[] = { { "ack", 0, 1 }, { "send", LIVE_PAYLOAD, 4 } };
	struct live l = { .sender = sender, .packet_fd = -1 };
	struct frame *f = malloc(sizeof(*f));
	double *mpps = calloc(2 * rounds, sizeof(*mpps));
	int err = -ENOMEM;

	if (!f || !mpps) {
		pr_warn("Couldn't allocate the frames: %s", strerror(errno));
		goto out;
	}
	err = pair_open(&l, LIVE_MTU);
	if (err)
		goto out;
	if (!json)
		printf("Live veth, one core, median of %u rounds; Mpps per core:\n\n%5s %6s %6s %8s %8s %7s  %s\n",
		       rounds, "frame", "family", "bytes", "pass", "roceval", "ratio", "sender");
	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !err; k++) {
		__u32 n = count / kinds[k].divide;
		double pass_m, roceval_m;

		frame_build(f, kinds[k].payload, false, 1);
		err = live_rounds_any(&l, f, n, rounds, mpps);
		if (err)
			break;
		pass_m = median(mpps, rounds);
		roceval_m = median(mpps + rounds, rounds);
		if (json)
			print_live_json(kinds[k].name, f->len, sender_name(&l, f), pass_m, roceval_m);
		else
			printf("%5s %6s %6zu %8.3f %8.3f %7.3f  %s\n", kinds[k].name, "ipv4", f->len, pass_m,
			       roceval_m, roceval_m / pass_m, sender_name(&l, f));
	}
out:
	pair_close(&l);
	free(mpps);
	free(f);
	return err;
}

/* The session IDs of the do-nothing program's frames: the row's plus this. */
#define PASS_SESSION 512

/* A mirrored frame's row: what it is, and one figure per icrc_sample. */
struct mirror_row {
	const char *name;
	size_t frame_bytes, mirrored_bytes;
	const char *sender;
	double pass_mpps;
};

/*
 * Cores per 100 Gb/s of mirrored traffic at `mpps` frames a core: the
 * frames as they crossed the mirrored link, each with the 24 bytes the wire
 * adds (FCS, preamble, inter-frame gap).
 */
static double cores_per_100g(size_t frame_bytes, double mpps)
{
	return 100e9 / ((frame_bytes + 24) * 8.0) / (mpps * 1e6);
}

static void print_mirror_row(bool json, const struct mirror_row *m, __u32 sample, double mpps)
{
	/* what roceval adds to a frame: the do-nothing program's time per frame taken off */
	double added_ns = 1000 / mpps - 1000 / m->pass_mpps;
	struct json_writer w;

	if (!json) {
		printf("%5s %6zu %6zu %8.3f %6u %8.3f %6.3f %7.1f %6.2f %6.2f  %s\n", m->name, m->frame_bytes,
		       m->mirrored_bytes, m->pass_mpps, sample, mpps, mpps / m->pass_mpps, added_ns,
		       cores_per_100g(m->frame_bytes, mpps), cores_per_100g(m->frame_bytes, 1000 / added_ns),
		       m->sender);
		return;
	}
	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "live", m->name);
	json_string(&w, "encap", "erspan2");
	json_string(&w, "family", "ipv4");
	json_u64(&w, "frame_bytes", m->frame_bytes);
	json_u64(&w, "mirrored_bytes", m->mirrored_bytes);
	json_string(&w, "sender", m->sender);
	json_u64(&w, "icrc_sample", sample);
	json_double(&w, "pass_mpps", m->pass_mpps, 4);
	json_double(&w, "roceval_mpps", mpps, 4);
	json_double(&w, "roceval_vs_pass", mpps / m->pass_mpps, 3);
	json_double(&w, "roceval_ns", added_ns, 1);
	json_double(&w, "cores_per_100g", cores_per_100g(m->frame_bytes, mpps), 3);
	json_double(&w, "roceval_cores_per_100g", cores_per_100g(m->frame_bytes, 1000 / added_ns), 3);
	json_object_end(&w);
	json_end(&w);
}

/*
 * Every frame roceval received was a RoCE frame of a mirror session, and
 * the frame's session counted them and the frames its numbers skipped, at
 * most as many as were sent (the last ones lost skip no number).
 */
static int check_session(const struct live *l, unsigned int session, __u64 sent)
{
	struct roceval_counters c;
	struct mirror_entry *e;
	struct mirror_fds fds = mirror_fds_of(l->skel->obj);
	int n = mirrors_collect(&fds, &e);
	__u64 all = 0, frames = 0, lost = 0;
	int err = n < 0 ? n : counters_read(bpf_map__fd(l->skel->maps.counters), &c);

	if (err) {
		pr_warn("Couldn't read the counters: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < n; i++) {
		all += e[i].frames;
		if (e[i].key.session == session) {
			frames = e[i].frames;
			lost = e[i].lost;
		}
	}
	free(e);
	if (all == c.total[TOTAL_ROCE] && all == c.total[TOTAL_MIRROR_FRAMES] && frames && frames + lost <= sent)
		return 0;
	pr_warn("mirror run: %llu RoCE frames, %llu mirrored, %llu in the sessions; session %u: %llu frames "
		"and %llu lost of %llu sent", (unsigned long long)c.total[TOTAL_ROCE], (unsigned long long)c.total[TOTAL_MIRROR_FRAMES],
		(unsigned long long)all, session, (unsigned long long)frames, (unsigned long long)lost, (unsigned long long)sent);
	return -EPROTO;
}

int bench_live_mirror(bool json, unsigned int count, unsigned int rounds, enum live_sender sender)
{
	static const struct {
		const char *name;
		unsigned char opcode;
		unsigned int payload, divide; /* fewer of the big frames */
	} kinds[] = { { "ack", OP_RC_ACKNOWLEDGE, 0, 1 },
		      { "write", OP_RC_RDMA_WRITE_ONLY, 1024, 2 },
		      { "write", OP_RC_RDMA_WRITE_ONLY, 4096, 4 } };
	static const __u32 samples[] = { 1, 8 };
	enum { NSAMPLES = sizeof(samples) / sizeof(samples[0]) };
	struct live l = { .sender = sender, .packet_fd = -1, .seq_at = ERSPAN2_SEQ_AT, .samples = samples,
			  .nsamples = NSAMPLES };
	struct frame *f = malloc(sizeof(*f)), *pf = malloc(sizeof(*pf));
	double *mpps = calloc((1 + NSAMPLES) * rounds, sizeof(*mpps));
	int err = -ENOMEM;

	l.pass_frame = pf;
	l.bufs = calloc(LIVE_BATCH, sizeof(*l.bufs));
	if (!f || !pf || !mpps || !l.bufs) {
		pr_warn("Couldn't allocate the frames: %s", strerror(errno));
		goto out;
	}
	err = pair_open(&l, LIVE_MIRROR_MTU);
	/* the 4 KB WRITE goes by the socket whatever sends the others */
	if (!err && l.packet_fd < 0)
		err = packet_open(&l);
	if (err)
		goto out;
	if (!json)
		printf("Live veth, ERSPAN II mirrors, one core, median of %u rounds; Mpps per core:\n\n"
		       "%5s %6s %6s %8s %6s %8s %6s %7s %6s %6s  %s\n", rounds, "frame", "bytes", "mirror", "pass",
		       "icrc_s", "roceval", "ratio", "+ns", "cores", "prog", "sender");
	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !err; k++) {
		__u32 n = count / kinds[k].divide;
		struct mirror_row m = { .name = kinds[k].name };

		frame_build_op(f, kinds[k].opcode, kinds[k].payload, false, 1);
		m.frame_bytes = f->len;
		*pf = *f;
		if (frame_wrap_erspan2(f, k + 1) || frame_wrap_erspan2(pf, PASS_SESSION + k + 1)) {
			err = -E2BIG;
			break;
		}
		m.mirrored_bytes = f->len;
		err = live_rounds_any(&l, f, n, rounds, mpps);
		if (!err)
			err = check_session(&l, k + 1, l.seq[1]);
		if (err)
			break;
		m.sender = sender_name(&l, f);
		m.pass_mpps = median(mpps, rounds);
		for (int s = 0; s < NSAMPLES; s++)
			print_mirror_row(json, &m, samples[s], median(mpps + (1 + s) * rounds, rounds));
		/* the next frame is another session's, numbered from 0 */
		l.seq[0] = l.seq[1] = 0;
	}
	if (!err && !json)
		printf("\n+ns is what roceval adds to a frame over the do-nothing program; cores is the cores\n"
		       "needed per 100 Gb/s of mirrored RoCE frames (each with the 24 bytes of FCS, preamble\n"
		       "and gap it took on the mirrored link) at roceval's Mpps, sender included; prog the\n"
		       "same at +ns alone.\n");
out:
	pair_close(&l);
	free(mpps);
	free(pf);
	free(f);
	return err;
}
