// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval bench: what validation costs per frame, against a do-nothing XDP
 * program and against zlib's crc32() over the same bytes, all in one
 * process so the ratios hold on a noisy machine.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cmd.h"
#include "common.h"
#include "counters.h"
#include "loader.h"
#include "settings.h"
#include "bench_pass.skel.h"

extern const struct command cmd_bench;

#define OP_RC_SEND_ONLY 0x04
#define OP_RC_ACKNOWLEDGE 0x11
#define FRAME_MAX 8192

static const unsigned int payloads[] = { 0, 256, 1024, 4096 };

enum { BASELINE, HEADERS, FULL, ZLIB, NMEASURE };

struct frame {
	unsigned int payload;
	bool ipv6;
	size_t len;		/* Ethernet header to ICRC */
	size_t icrc_len;	/* bytes the ICRC covers */
	unsigned char data[FRAME_MAX];
	unsigned char icrc_in[FRAME_MAX]; /* 8 x 0xFF and the masked datagram */
	double ns[NMEASURE];
};

static __u16 ipv4_csum(const unsigned char *h)
{
	__u32 sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return ~sum;
}

/*
 * A valid frame the program takes its longest path through: RC SEND_ONLY
 * with `payload` bytes, or an RC ACK for payload 0 (the commonest frame
 * without one), with a correct ICRC.
 */
static void frame_build(struct frame *f, unsigned int payload, bool ipv6, unsigned int seed)
{
	static const unsigned char mac[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	unsigned int iphl = ipv6 ? 40 : 20, xth = payload ? 0 : ROCE_AETH_LEN;
	unsigned int udplen = 8 + ROCE_BTH_LEN + xth + payload + ROCE_ICRC_LEN;
	unsigned char *ip = f->data + 14, *udp = ip + iphl, *bth = udp + 8, *p;
	unsigned char *m = f->icrc_in + ROCE_LRH_MASK_LEN;
	__u32 crc;

	memset(f, 0, sizeof(*f));
	f->payload = payload;
	f->ipv6 = ipv6;
	memcpy(f->data, mac, 12);
	if (ipv6) {
		static const unsigned char src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
		static const unsigned char dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

		f->data[12] = 0x86, f->data[13] = 0xDD;
		ip[0] = 0x60;
		ip[4] = udplen >> 8, ip[5] = udplen;
		ip[6] = 17, ip[7] = 64;
		memcpy(ip + 8, src, 16);
		memcpy(ip + 24, dst, 16);
	} else {
		__u16 csum;

		f->data[12] = 0x08, f->data[13] = 0x00;
		ip[0] = 0x45;
		ip[2] = (iphl + udplen) >> 8, ip[3] = iphl + udplen;
		ip[6] = 0x40; /* DF */
		ip[8] = 64, ip[9] = 17;
		ip[12] = 192, ip[14] = 2, ip[15] = 1;
		ip[16] = 192, ip[18] = 2, ip[19] = 2;
		csum = ipv4_csum(ip);
		ip[10] = csum >> 8, ip[11] = csum;
	}
	udp[0] = 0xC0, udp[1] = 0x00; /* 49152 */
	udp[2] = ROCE_UDP_PORT >> 8, udp[3] = ROCE_UDP_PORT & 0xFF;
	udp[4] = udplen >> 8, udp[5] = udplen;
	bth[0] = payload ? OP_RC_SEND_ONLY : OP_RC_ACKNOWLEDGE;
	bth[1] = 0x40; /* MigReq, as ConnectX sends it */
	bth[2] = 0xFF, bth[3] = 0xFF;
	bth[7] = seed;	/* a DestQP per frame: one flow each, no PSN repeats across them */
	bth[11] = 0x01; /* PSN 1 */
	p = bth + ROCE_BTH_LEN + xth; /* an ACK's AETH is all zeros: ACK, MSN 0 */
	srand(seed);
	for (unsigned int i = 0; i < payload; i++)
		p[i] = rand();

	memset(f->icrc_in, 0xFF, ROCE_LRH_MASK_LEN);
	memcpy(m, ip, iphl + udplen - ROCE_ICRC_LEN);
	if (ipv6) {
		m[0] |= 0x0F;
		m[1] = m[2] = m[3] = m[7] = 0xFF;
	} else {
		m[1] = m[8] = m[10] = m[11] = 0xFF;
	}
	m[iphl + 6] = m[iphl + 7] = 0xFF;
	m[iphl + 8 + 4] = 0xFF;
	f->icrc_len = ROCE_LRH_MASK_LEN + iphl + udplen - ROCE_ICRC_LEN;
	crc = crc32(0, f->icrc_in, f->icrc_len);
	p += payload;
	p[0] = crc, p[1] = crc >> 8, p[2] = crc >> 16, p[3] = crc >> 24;
	f->len = p + 4 - f->data;
}

/* Average ns per run of the frame over `repeat` runs, as the kernel times them. */
static int run_prog(int prog_fd, const struct frame *f, unsigned int repeat, double *ns)
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

static double zlib_ns(const struct frame *f, unsigned int repeat)
{
	uLong acc = 0;
	double t0 = cpu_ns();

	for (unsigned int i = 0; i < repeat; i++)
		acc ^= crc32(0, f->icrc_in, f->icrc_len);
	bench_zlib_sink = acc;
	return (cpu_ns() - t0) / repeat;
}

static int set_icrc_sample(int settings_fd, struct roceval_settings *cfg, const char *n)
{
	char err[128];
	int ret;

	if (settings_set(cfg, "icrc_sample", n, err, sizeof(err))) {
		pr_warn("%s", err);
		return -EINVAL;
	}
	ret = roceval_settings_write(settings_fd, cfg);
	if (ret)
		pr_warn("Couldn't write the settings map: %s", strerror(-ret));
	return ret;
}

/*
 * Runs each frame once with every check on and makes sure the program saw
 * a RoCEv2 frame with a good ICRC and nothing wrong: a benchmark of frames
 * the program rejects early would time the wrong path.
 */
static int check_frames(struct roceval_bpf *skel, struct frame *frames, int n)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int measure(struct roceval_bpf *skel, int pass_fd, struct frame *frames, int nframes,
		   unsigned int repeat, unsigned int rounds)
{
	int settings_fd = bpf_map__fd(skel->maps.settings);
	int roceval_fd = bpf_program__fd(skel->progs.roceval_xdp);
	struct roceval_settings cfg;
	double *samples;
	int err = 0;

	samples = calloc((size_t)nframes * NMEASURE * rounds, sizeof(*samples));
	if (!samples) {
		pr_warn("Couldn't allocate the samples: %s", strerror(errno));
		return -ENOMEM;
	}
#define SAMPLE(f, m, r) samples[((size_t)(f) * NMEASURE + (m)) * rounds + (r)]
	settings_defaults(&cfg);
	/* Rounds outside, so drift of the machine spreads over every figure alike. */
	for (unsigned int r = 0; r < rounds && !err; r++) {
		for (int i = 0; i < nframes && !err; i++) {
			struct frame *f = &frames[i];

			err = run_prog(pass_fd, f, repeat, &SAMPLE(i, BASELINE, r));
			/* ICRC sampled so rarely that it is never checked here: the header path alone. */
			if (!err)
				err = set_icrc_sample(settings_fd, &cfg, "1000000000");
			if (!err)
				err = run_prog(roceval_fd, f, repeat, &SAMPLE(i, HEADERS, r));
			if (!err)
				err = set_icrc_sample(settings_fd, &cfg, "1");
			if (!err)
				err = run_prog(roceval_fd, f, repeat, &SAMPLE(i, FULL, r));
			SAMPLE(i, ZLIB, r) = zlib_ns(f, repeat);
		}
	}
	for (int i = 0; i < nframes && !err; i++)
		for (int m = 0; m < NMEASURE; m++)
			frames[i].ns[m] = median(&SAMPLE(i, m, 0), rounds);
#undef SAMPLE
	free(samples);
	return err;
}

static void print_json(const struct frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		const struct frame *f = &frames[i];

		printf("{\"payload\": %u, \"family\": \"%s\", \"baseline_ns\": %.1f, \"headers_ns\": %.1f, "
		       "\"full_ns\": %.1f, \"zlib_ns\": %.1f, \"icrc_vs_zlib\": %.3f, "
		       "\"headers_over_baseline_ns\": %.1f}\n",
		       f->payload, f->ipv6 ? "ipv6" : "ipv4", f->ns[BASELINE], f->ns[HEADERS], f->ns[FULL],
		       f->ns[ZLIB], (f->ns[FULL] - f->ns[HEADERS]) / f->ns[ZLIB],
		       f->ns[HEADERS] - f->ns[BASELINE]);
	}
}

static void print_table(const struct frame *frames, int n, unsigned int repeat, unsigned int rounds)
{
	printf("Median of %u rounds of %u runs per frame; ns per frame.\n\n", rounds, repeat);
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
	printf("\nicrc/zlib = (full - headers) / zlib; hdr-base = headers - baseline.\n"
	       "Mpps and Gb/s are one core running the full program; frame is the Ethernet\n"
	       "frame without FCS, and Gb/s counts those bytes.\n");
}

static int do_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	enum { NFRAMES = 2 * sizeof(payloads) / sizeof(payloads[0]) };
	unsigned int repeat = 20000, rounds = 9;
	struct bench_pass_bpf *pass = NULL;
	struct roceval_bpf *skel = NULL;
	struct frame *frames;
	bool json = false;
	int opt, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, ":jr:n:", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'r':
			if (!parse_u32(optarg, 10000000, &repeat) || !repeat)
				return command_usage_error(&cmd_bench, "--repeat %s: expected 1-10000000",
							   optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, 1000, &rounds) || !rounds)
				return command_usage_error(&cmd_bench, "--rounds %s: expected 1-1000",
							   optarg);
			break;
		case ':':
			return command_usage_error(&cmd_bench, "option '%s' needs a value", argv[optind - 1]);
		default:
			if (!strncmp(argv[optind - 1], "--", 2))
				return command_bad_option(&cmd_bench, argv);
			return command_usage_error(&cmd_bench, "unknown option '-%c'", optopt);
		}
	}
	if (optind != argc)
		return command_usage_error(&cmd_bench, "unexpected argument '%s'", argv[optind]);
	if (require_root())
		return 1;

	frames = calloc(NFRAMES, sizeof(*frames));
	if (!frames) {
		pr_warn("Couldn't allocate the frames: %s", strerror(errno));
		return 1;
	}
	for (int i = 0; i < NFRAMES; i++)
		frame_build(&frames[i], payloads[i / 2], i % 2, i + 1);

	err = -1;
	skel = roceval_load(LOAD_LIVE, true);
	if (!skel)
		goto out;
	pass = bench_pass_bpf__open_and_load();
	if (!pass) {
		pr_warn("Couldn't load the baseline XDP program: %s", strerror(errno));
		goto out;
	}
	err = check_frames(skel, frames, NFRAMES);
	if (!err)
		err = measure(skel, bpf_program__fd(pass->progs.bench_pass), frames, NFRAMES, repeat,
			      rounds);
	if (!err) {
		if (json)
			print_json(frames, NFRAMES);
		else
			print_table(frames, NFRAMES, repeat, rounds);
	}
out:
	bench_pass_bpf__destroy(pass);
	roceval_bpf__destroy(skel);
	free(frames);
	return err ? 1 : 0;
}

const struct command cmd_bench = {
	.name = "bench",
	.args = "[--json] [--repeat N] [--rounds N]",
	.summary = "measure what validation costs per frame, against XDP_PASS and zlib",
	.help = "Builds valid RoCEv2 frames, an RC ACK (payload 0) and RC SEND_ONLY with 256, 1024\n"
		"and 4096 bytes of payload (a multi-buffer frame), over IPv4 and IPv6, and times\n"
		"each with BPF_PROG_TEST_RUN in this process:\n\n"
		"  baseline  a do-nothing XDP_PASS program: the cost of the test harness itself\n"
		"  headers   roceval with the ICRC check sampled out (icrc_sample=1000000000)\n"
		"  full      roceval checking everything, the default configuration\n"
		"  zlib      zlib's crc32() in userspace over the bytes the ICRC covers\n\n"
		"Each figure is the median over the rounds of the kernel's average time per run.\n"
		"Before timing, every frame is run once and must count as RoCEv2 with a good ICRC\n"
		"and no rule broken.  The machine's load shows in the figures: compare ratios.\n\n"
		"Options:\n"
		"  -j, --json        one JSON object per line, per payload and family: payload,\n"
		"                    family, baseline_ns, headers_ns, full_ns, zlib_ns,\n"
		"                    icrc_vs_zlib ((full_ns - headers_ns) / zlib_ns) and\n"
		"                    headers_over_baseline_ns (headers_ns - baseline_ns)\n"
		"  -r, --repeat N    runs per frame and round (default 20000)\n"
		"  -n, --rounds N    rounds; the median is reported (default 9)\n\n"
		"The table adds Mpps/core and Gb/s/core of the full program (1000 / full_ns, and\n"
		"frame bits / full_ns).  Needs root.  Exit status: 0, 1 when BPF failed, 2 for a\n"
		"bad option.\n\n"
		"Example:\n"
		"  roceval bench --repeat 5000 --rounds 3\n",
	.run = do_bench,
};
