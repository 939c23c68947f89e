// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval trace: on-demand samples of violating frames.
 *
 * Sampling is off in the program unless settings.trace_on has a bit set.
 * Each trace takes a free slot of the interface (ROCEVAL_MAX_TRACES), puts
 * its filters and a ring buffer of its own there and sets its bit, for as
 * long as it runs; several traces on one interface each get what matches
 * their filters.  The slot is given back on the way out: --count reached,
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE, or an error.  A killed trace (SIGKILL)
 * leaves its slot taken; the next trace notices its owner is gone and frees it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cm.h"
#include "cmd.h"
#include "common.h"
#include "json.h"
#include "counters.h"
#include "live.h"
#include "loader.h"
#include "settings.h"
#include "wire.h"

extern const struct command cmd_trace;

#define MAX_IFACES 64
#define STR_(x) #x
#define STR(x) STR_(x)
/* Held only while slots are taken or given back; removed each time. */
#define TRACE_LOCK_DIR "/run/roceval"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

struct trace;

struct trace_iface {
	struct live_iface li;
	struct trace *t;
	__u32 idx; /* pcapng interface id */
	__u32 slot;   /* ours in trace_filters and trace_rbs */
	int rb_fd;    /* our ring buffer */
	__u64 skipped0; /* trace_skipped when the trace started */
	bool armed;   /* the slot is ours and must be given back */
};

struct trace {
	struct trace_iface ifs[MAX_IFACES];
	int n;
	bool json;
	__u32 count; /* stop after this many samples; 0 = never */
	__u32 seen;
	FILE *pcap;
	__s64 mono_to_real_ns; /* add to a bpf_ktime_get_ns() time for wall-clock nanoseconds */
};

/* ---- pcapng (https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html) ---- */

#define PCAPNG_SHB 0x0A0D0D0A
#define PCAPNG_IDB 0x00000001
#define PCAPNG_EPB 0x00000006
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_OPT_IF_NAME 2
#define PCAPNG_OPT_IF_TSRESOL 9
#define LINKTYPE_ETHERNET 1

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Appends one option (code, length, value padded to 4) at buf[*off]. */
static void pcapng_opt(__u8 *buf, size_t *off, __u16 code, const void *val, __u16 len)
{
	memcpy(buf + *off, &code, 2);
	memcpy(buf + *off + 2, &len, 2);
	memcpy(buf + *off + 4, val, len);
	memset(buf + *off + 4 + len, 0, pad4(len) - len);
	*off += 4 + pad4(len);
}

/* Writes a block: type, total length, body, total length again. */
static int pcapng_block(FILE *f, __u32 type, const __u8 *body, size_t len)
{
	__u32 total = 12 + len;

	if (fwrite(&type, 4, 1, f) != 1 || fwrite(&total, 4, 1, f) != 1 ||
	    (len && fwrite(body, len, 1, f) != 1) || fwrite(&total, 4, 1, f) != 1)
		return -EIO;
	return 0;
}

static int pcapng_header(FILE *f, const struct trace *t)
{
	__u8 buf[256];
	size_t off = 0;
	__u32 magic = 0x1A2B3C4D;
	__u16 major = 1, minor = 0;
	__s64 section_len = -1;
	const char *app = "roceval " ROCEVAL_VERSION " trace";
	int err;

	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &major, 2);
	memcpy(buf + 6, &minor, 2);
	memcpy(buf + 8, &section_len, 8);
	off = 16;
	pcapng_opt(buf, &off, 4 /* shb_userappl */, app, strlen(app));
	memset(buf + off, 0, 4); /* opt_endofopt */
	off += 4;
	err = pcapng_block(f, PCAPNG_SHB, buf, off);
	/* one interface description per traced interface, in order: EPB interface ids */
	for (int i = 0; i < t->n && !err; i++) {
		__u16 link = LINKTYPE_ETHERNET, reserved = 0;
		__u32 snaplen = 0; /* no limit */
		__u8 tsresol = 9;  /* nanoseconds */

		memcpy(buf, &link, 2);
		memcpy(buf + 2, &reserved, 2);
		memcpy(buf + 4, &snaplen, 4);
		off = 8;
		pcapng_opt(buf, &off, PCAPNG_OPT_IF_NAME, t->ifs[i].li.ifname, strlen(t->ifs[i].li.ifname));
		pcapng_opt(buf, &off, PCAPNG_OPT_IF_TSRESOL, &tsresol, 1);
		memset(buf + off, 0, 4);
		off += 4;
		err = pcapng_block(f, PCAPNG_IDB, buf, off);
	}
	return err;
}

static int pcapng_packet(FILE *f, __u32 ifidx, __u64 ts_ns, const __u8 *data, __u32 cap, __u32 len,
			 const char *comment)
{
	size_t clen = strlen(comment), off;
	__u32 hi = ts_ns >> 32, lo = (__u32)ts_ns;
	__u8 *buf = calloc(1, 20 + pad4(cap) + 4 + pad4(clen) + 4);
	int err;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &ifidx, 4);
	memcpy(buf + 4, &hi, 4);
	memcpy(buf + 8, &lo, 4);
	memcpy(buf + 12, &cap, 4);
	memcpy(buf + 16, &len, 4);
	memcpy(buf + 20, data, cap);
	off = 20 + pad4(cap);
	if (clen)
		pcapng_opt(buf, &off, PCAPNG_OPT_COMMENT, comment, clen);
	memset(buf + off, 0, 4);
	off += 4;
	err = pcapng_block(f, PCAPNG_EPB, buf, off);
	free(buf);
	return err;
}

/* ---- decoding a sampled frame ---- */

struct decoded {
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	__u16 sport, dport;
	bool has_ip, has_bth;
	__u8 saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	__u8 opcode;
	__u32 dqpn, psn;
	const __u8 *ip; /* the IP datagram in the sample */
	__u32 ip_caplen;  /* its bytes in the sample */
	__u32 ip_len;	  /* its length per the IP header */
	bool ipv6;
	bool v1; /* RoCEv1: GIDs for addresses, no UDP ports */
};

static void decode(const __u8 *f, __u32 cap, struct decoded *d)
{
	__u32 off = 14, l4 = 0;
	__u16 proto;

	memset(d, 0, sizeof(*d));
	if (cap < 14)
		return;
	proto = get16(f + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8) && off + 4 <= cap; i++) {
		proto = get16(f + off + 2);
		off += 4;
	}
	if (proto == 0x0800 && off + 20 <= cap) {
		inet_ntop(AF_INET, f + off + 12, d->src, sizeof(d->src));
		inet_ntop(AF_INET, f + off + 16, d->dst, sizeof(d->dst));
		memcpy(d->saddr, f + off + 12, 4);
		memcpy(d->daddr, f + off + 16, 4);
		l4 = off + (f[off] & 0x0F) * 4;
		d->ip_len = get16(f + off + 2);
	} else if (proto == 0x86DD && off + 40 <= cap) {
		inet_ntop(AF_INET6, f + off + 8, d->src, sizeof(d->src));
		inet_ntop(AF_INET6, f + off + 24, d->dst, sizeof(d->dst));
		memcpy(d->saddr, f + off + 8, 16);
		memcpy(d->daddr, f + off + 24, 16);
		l4 = off + 40 + (f[off + 6] == 44 ? 8 : 0);
		d->ip_len = 40 + get16(f + off + 4);
		d->ipv6 = true;
	} else if (proto == ROCE_ETH_P_ROCEV1 && off + ROCE_GRH_LEN <= cap) {
		inet_ntop(AF_INET6, f + off + 8, d->src, sizeof(d->src));
		inet_ntop(AF_INET6, f + off + 24, d->dst, sizeof(d->dst));
		d->ip_len = ROCE_GRH_LEN + get16(f + off + 4);
		d->ipv6 = d->v1 = true;
	} else {
		return;
	}
	d->has_ip = true;
	d->ip = f + off;
	d->ip_caplen = cap - off;
	if (d->v1) {
		l4 = off + ROCE_GRH_LEN; /* the BTH */
	} else {
		if (l4 + 8 > cap)
			return;
		d->sport = get16(f + l4);
		d->dport = get16(f + l4 + 2);
		l4 += 8;
	}
	if (l4 + ROCE_BTH_LEN > cap)
		return;
	d->has_bth = true;
	d->opcode = f[l4];
	d->dqpn = get24(f + l4 + 5);
	d->psn = get24(f + l4 + 9);
}

/*
 * Why an ICRC might not match, when one explanation fits: the sender stored
 * it in the wrong byte order, or computed it without masking the variant
 * fields (or without the 8 bytes of 0xFF standing for the LRH).  The last
 * two need the whole datagram in the sample.
 */
static const char *icrc_diagnosis(const struct roceval_trace_event *ev, const struct decoded *d)
{
	static const __u8 lrh[ROCE_LRH_MASK_LEN] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
	__u32 n;
	uLong crc;

	if (__builtin_bswap32(ev->icrc_expected) == ev->icrc_found)
		return "stored byte-swapped";
	if (!d->has_ip || d->ip_len < 4 || d->ip_len > d->ip_caplen)
		return NULL;
	n = d->ip_len - ROCE_ICRC_LEN;
	crc = crc32(crc32(0, lrh, sizeof(lrh)), d->ip, n);
	if ((__u32)crc == ev->icrc_found)
		return "would match if the variant fields were not masked";
	if (__builtin_bswap32((__u32)crc) == ev->icrc_found)
		return "would match if the variant fields were not masked and the ICRC not byte-swapped";
	return NULL;
}

static void rule_list(__u64 rules, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < RULE__COUNT && used < len; i++)
		if (rules & (1ULL << i))
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "", rule_ids[i]);
}

static void json_rule_list(__u64 rules)
{
	bool first = true;

	putchar('[');
	for (int i = 0; i < RULE__COUNT; i++) {
		if (!(rules & (1ULL << i)))
			continue;
		printf("%s\"%s\"", first ? "" : ", ", rule_ids[i]);
		first = false;
	}
	putchar(']');
}

static int trace_disarm(struct trace_iface *ti);

static int on_event(void *ctx, void *data, size_t size)
{
	struct trace_iface *ti = ctx;
	struct trace *t = ti->t;
	const struct roceval_trace_event *ev = data;
	const __u8 *frame = (const __u8 *)(ev + 1);
	char op[48] = "", rules[512], when[64], comment[640], icrc[192] = "", svc[64];
	struct roceval_cm_end cm;
	bool has_cm;
	const char *diag = NULL;
	struct decoded d;
	__u32 cap;
	__u64 real_ns;
	time_t secs;
	struct tm tm;

	if (size < sizeof(*ev) || (t->count && t->seen >= t->count))
		return 0;
	cap = ev->cap_len <= size - sizeof(*ev) ? ev->cap_len : size - sizeof(*ev);
	decode(frame, cap, &d);
	rule_list(ev->rules, rules, sizeof(rules));
	if (d.has_bth)
		roce_opcode_name(d.opcode, op, sizeof(op));
	/* the application and the peer QP of a connection CM announced */
	has_cm = d.has_bth && cm_end_lookup(ti->li.cm_ends_fd, d.saddr, d.daddr, d.ipv6, d.dqpn, &cm);
	if (has_cm)
		cm_service_name(cm.service_id, svc, sizeof(svc));
	if ((ev->rules & (1ULL << RULE_ICRC)) && (ev->flags & ROCEVAL_EV_ICRC_CHECKED)) {
		diag = icrc_diagnosis(ev, &d);
		snprintf(icrc, sizeof(icrc), "; icrc expected 0x%08x found 0x%08x%s%s%s", ev->icrc_expected,
			 ev->icrc_found, diag ? " (" : "", diag ?: "", diag ? ")" : "");
	}
	real_ns = ev->ts_ns + t->mono_to_real_ns;
	secs = real_ns / 1000000000;

	if (t->pcap == stdout) {
		/* the pcapng goes to stdout: nothing else may */
	} else if (t->json) {
		gmtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		printf("{\"time\": \"%s.%06ldZ\", \"interface\": ", when,
		       (long)(real_ns % 1000000000 / 1000));
		json_str(stdout, ti->li.ifname);
		printf(", \"frame_len\": %u, \"cap_len\": %u", ev->frame_len, cap);
		if (d.has_ip) {
			fputs(", \"src\": ", stdout);
			json_str(stdout, d.src);
			fputs(", \"dst\": ", stdout);
			json_str(stdout, d.dst);
			if (d.v1)
				fputs(", \"rocev1\": true", stdout);
			else
				printf(", \"sport\": %u, \"dport\": %u", d.sport, d.dport);
		}
		if (d.has_bth) {
			printf(", \"opcode\": %u, \"opcode_name\": ", d.opcode);
			json_str(stdout, op);
			printf(", \"dqpn\": %u, \"psn\": %u", d.dqpn, d.psn);
		}
		if (has_cm) {
			fputs(", \"service\": ", stdout);
			json_str(stdout, svc);
			printf(", \"peer_qpn\": %u", cm.peer_qpn);
		}
		fputs(", \"rules\": ", stdout);
		json_rule_list(ev->rules);
		if (ev->flags & ROCEVAL_EV_ICRC_CHECKED) {
			printf(", \"icrc_expected\": \"0x%08x\", \"icrc_found\": \"0x%08x\"", ev->icrc_expected,
			       ev->icrc_found);
			if (diag) {
				fputs(", \"icrc_diagnosis\": ", stdout);
				json_str(stdout, diag);
			}
		}
		puts("}");
	} else {
		localtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		printf("%s.%06ld %s ", when, (long)(real_ns % 1000000000 / 1000), ti->li.ifname);
		if (d.has_ip && d.v1)
			printf("%s > %s: RoCEv1 ", d.src, d.dst);
		else if (d.has_ip)
			printf("%s.%u > %s.%u: ", d.src, d.sport, d.dst, d.dport);
		if (d.has_bth)
			printf("%s dqpn 0x%06x psn %u, ", op, d.dqpn, d.psn);
		if (has_cm)
			printf("%s peer qp 0x%06x, ", svc, cm.peer_qpn);
		printf("length %u: %s%s\n", ev->frame_len, rules, icrc);
	}
	if (t->pcap) {
		snprintf(comment, sizeof(comment), "roceval: %s%s", rules, icrc);
		if (pcapng_packet(t->pcap, ti->idx, real_ns, frame, cap, ev->frame_len, comment)) {
			pr_warn("Couldn't write the pcapng file: %s", strerror(errno));
			stop = SIGPIPE;
		}
	}
	t->seen++;
	if (t->count && t->seen >= t->count) {
		/* switch sampling off now rather than after the poll returns: fewer frames sampled in vain */
		for (int i = 0; i < t->n; i++)
			trace_disarm(&t->ifs[i]);
		stop = -1;
	}
	return 0;
}

/* ---- switching sampling on and off ---- */

/* Serialises taking and giving back slots among the traces of one interface. */
static int slots_lock(const struct trace_iface *ti, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/trace-%s-%s.lock", TRACE_LOCK_DIR, ti->li.netns, ti->li.ifname);
	fd = lockfile_lock(path, true);
	if (fd < 0)
		pr_warn("Couldn't lock %s: %s", path, strerror(-fd));
	return fd;
}

/* Sets or clears our bit in trace_on; only that bit, so a 'roceval config' meanwhile stays. */
static int set_trace_bit(const struct trace_iface *ti, bool on)
{
	struct roceval_settings cur;
	int err = roceval_settings_read(ti->li.settings_fd, &cur);

	if (err)
		return err;
	if (on)
		cur.trace_on |= 1u << ti->slot;
	else
		cur.trace_on &= ~(1u << ti->slot);
	return roceval_settings_write(ti->li.settings_fd, &cur);
}

static void free_slot(const struct trace_iface *ti, __u32 slot)
{
	struct roceval_trace_filter none = {};
	struct trace_iface other = *ti;

	other.slot = slot;
	set_trace_bit(&other, false);
	bpf_map_delete_elem(ti->li.trace_rbs_fd, &slot);
	bpf_map_update_elem(ti->li.trace_filters_fd, &slot, &none, BPF_ANY);
}

/* A free slot, after freeing those of traces that were killed; -EBUSY when all run. */
static int find_slot(const struct trace_iface *ti)
{
	int found = -EBUSY;

	for (__u32 slot = 0; slot < ROCEVAL_MAX_TRACES; slot++) {
		struct roceval_trace_filter f;

		if (bpf_map_lookup_elem(ti->li.trace_filters_fd, &slot, &f))
			return -errno;
		if (f.owner && kill(f.owner, 0) && errno == ESRCH) {
			pr_warn("%s: a trace that was killed (pid %u) left sampling on; taking over",
				ti->li.ifname, f.owner);
			free_slot(ti, slot);
			f.owner = 0;
		}
		if (!f.owner && found < 0)
			found = slot;
	}
	return found;
}

static int trace_arm(struct trace_iface *ti, const struct roceval_trace_filter *want)
{
	struct roceval_trace_filter mine = *want;
	struct roceval_counters c;
	char path[PATH_MAX];
	int lock, slot, err;

	err = counters_read(ti->li.counters_fd, &c);
	if (err) {
		pr_warn("%s: Couldn't read the maps: %s", ti->li.ifname, strerror(-err));
		return err;
	}
	ti->skipped0 = c.total[TOTAL_TRACE_SKIPPED];
	ti->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "roceval_trace", 0, 0, ROCEVAL_TRACE_RB_BYTES, NULL);
	if (ti->rb_fd < 0) {
		err = -errno;
		pr_warn("%s: Couldn't create a trace ring buffer: %s", ti->li.ifname, strerror(-err));
		return err;
	}
	lock = slots_lock(ti, path, sizeof(path));
	if (lock < 0)
		return lock;
	slot = find_slot(ti);
	if (slot < 0) {
		err = slot;
		if (err == -EBUSY)
			pr_warn("%s: %d traces already run on this interface; stop one first", ti->li.ifname,
				ROCEVAL_MAX_TRACES);
		else
			pr_warn("%s: Couldn't read the trace slots: %s", ti->li.ifname, strerror(-err));
		goto out;
	}
	ti->slot = slot;
	mine.owner = getpid();
	if (bpf_map_update_elem(ti->li.trace_rbs_fd, &ti->slot, &ti->rb_fd, BPF_ANY) ||
	    bpf_map_update_elem(ti->li.trace_filters_fd, &ti->slot, &mine, BPF_ANY)) {
		err = -errno;
		pr_warn("%s: Couldn't set up the trace slot: %s", ti->li.ifname, strerror(-err));
		free_slot(ti, ti->slot);
		goto out;
	}
	err = set_trace_bit(ti, true);
	if (err) {
		pr_warn("%s: Couldn't write the settings: %s", ti->li.ifname, strerror(-err));
		free_slot(ti, ti->slot);
		goto out;
	}
	ti->armed = true;
out:
	lockfile_unlock(path, lock);
	return err;
}

/* Gives our slot back; the other traces on the interface go on. */
static int trace_disarm(struct trace_iface *ti)
{
	char path[PATH_MAX];
	int lock, err;

	if (!ti->armed)
		return 0;
	lock = slots_lock(ti, path, sizeof(path));
	/* our bit first, so the program stops using the slot before it is emptied */
	err = set_trace_bit(ti, false);
	if (!err) {
		free_slot(ti, ti->slot);
		ti->armed = false;
	} else {
		pr_warn("%s: Couldn't switch trace sampling off: %s; the next trace will", ti->li.ifname,
			strerror(-err));
	}
	if (lock >= 0)
		lockfile_unlock(path, lock);
	return err;
}

/* ---- the command ---- */

static int parse_addr(const char *s, struct roceval_trace_filter *want)
{
	memset(want->addr, 0, sizeof(want->addr));
	if (inet_pton(AF_INET, s, want->addr) == 1)
		want->addr_family = 4;
	else if (inet_pton(AF_INET6, s, want->addr) == 1)
		want->addr_family = 6;
	else
		return -EINVAL;
	return 0;
}

static int parse_rules(const char *list, __u64 *mask)
{
	char tmp[512], *save, *tok;

	if (strlen(list) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, list);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int r = rule_lookup(tok);

		if (r < 0) {
			command_usage_error(&cmd_trace, "--rule %s: no such rule; 'roceval rules' lists them", tok);
			return -EINVAL;
		}
		*mask |= 1ULL << r;
	}
	return 0;
}

static __s64 mono_to_real_offset_ns(void)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return (r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

static int do_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rule", required_argument, NULL, 'r' },  { "qpn", required_argument, NULL, 'q' },
		{ "addr", required_argument, NULL, 'a' },  { "count", required_argument, NULL, 'c' },
		{ "snaplen", required_argument, NULL, 's' }, { "pcap", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },	   { NULL, 0, NULL, 0 },
	};
	static struct trace t;
	struct roceval_trace_filter want = {};
	struct ring_buffer *rb = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	char names[MAX_IFACES][IF_NAMESIZE];
	const char *ifname = NULL, *pcap_path = NULL;
	__u64 skipped = 0;
	int opt, n, err = 0;

	want.qpn = ROCEVAL_ANY_QPN;
	want.snaplen = ROCEVAL_DEFAULT_SNAPLEN;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "r:q:a:c:s:w:j", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (parse_rules(optarg, &want.rules))
				return EXIT_USAGE;
			break;
		case 'q':
			if (!parse_u32(optarg, 0xFFFFFF, &want.qpn))
				return command_usage_error(&cmd_trace, "--qpn %s: expected a QP number 0-0xffffff",
							   optarg);
			break;
		case 'a':
			if (parse_addr(optarg, &want))
				return command_usage_error(&cmd_trace, "--addr %s: expected an IPv4 or IPv6 address",
							   optarg);
			break;
		case 'c':
			if (!parse_u32(optarg, 0xFFFFFFFF, &t.count) || !t.count)
				return command_usage_error(&cmd_trace, "--count %s: expected a count from 1", optarg);
			break;
		case 's':
			if (!parse_u32(optarg, ROCEVAL_MAX_SNAPLEN, &want.snaplen) || want.snaplen < 14)
				return command_usage_error(&cmd_trace, "--snaplen %s: expected bytes, 14-%d", optarg,
							   ROCEVAL_MAX_SNAPLEN);
			break;
		case 'w':
			pcap_path = optarg;
			break;
		case 'j':
			t.json = true;
			break;
		default:
			return command_bad_option(&cmd_trace, argv);
		}
	}
	if (optind < argc)
		ifname = argv[optind++];
	if (optind < argc)
		return command_usage_error(&cmd_trace, "one interface at a time ('%s'?)", argv[optind]);
	if (require_caps(true))
		return 1;

	if (ifname) {
		snprintf(names[0], IF_NAMESIZE, "%s", ifname);
		n = 1;
	} else {
		n = live_list_local(names, MAX_IFACES);
		if (n <= 0) {
			pr_warn("no interface has roceval attached; see 'roceval help attach'");
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		struct trace_iface *ti = &t.ifs[t.n];

		ti->rb_fd = -1;
		if (live_open_report(names[i], &ti->li)) {
			err = -ENOENT;
			goto out;
		}
		ti->t = &t;
		ti->idx = t.n++;
		if (ti->li.trace_rbs_fd < 0) {
			pr_warn("%s: the attached program has no trace slots (attached by an older roceval?); "
				"detach and attach again", ti->li.ifname);
			err = -ENOTSUP;
			goto out;
		}
	}
	if (pcap_path) {
		t.pcap = !strcmp(pcap_path, "-") ? stdout : fopen(pcap_path, "wb");
		if (!t.pcap || pcapng_header(t.pcap, &t)) {
			err = -errno;
			pr_warn("Couldn't write %s: %s", pcap_path, strerror(errno));
			goto out;
		}
	}

	/* from here on every way out goes through trace_disarm() */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	t.mono_to_real_ns = mono_to_real_offset_ns();
	for (int i = 0; i < t.n && !err; i++) {
		struct trace_iface *ti = &t.ifs[i];

		err = trace_arm(ti, &want);
		if (err)
			break;
		if (!rb)
			rb = ring_buffer__new(ti->rb_fd, on_event, ti, NULL);
		else if (ring_buffer__add(rb, ti->rb_fd, on_event, ti))
			err = -errno;
		if (!rb || err) {
			err = err ?: -errno;
			pr_warn("Couldn't open the trace ring buffer of %s: %s", ti->li.ifname, strerror(-err));
		}
	}
	if (err)
		goto out;
	/* stderr, so it never mixes with samples on stdout; scripts may wait for it */
	fprintf(stderr, "roceval: tracing %s; Ctrl-C to stop\n", ifname ?: "every attached interface");
	fflush(stderr);
	while (!err && !stop) {
		int ret = ring_buffer__poll(rb, 200);

		if (ret < 0 && ret != -EINTR) {
			err = ret;
			pr_warn("Couldn't poll the trace ring buffer: %s", strerror(-ret));
		}
	}
	for (int i = 0; i < t.n; i++) {
		struct roceval_counters c;

		if (trace_disarm(&t.ifs[i]))
			err = err ?: -EIO;
		if (!counters_read(t.ifs[i].li.counters_fd, &c))
			skipped += c.total[TOTAL_TRACE_SKIPPED] - t.ifs[i].skipped0;
	}
	/* samples already in the ring when sampling stopped are still reported */
	if (!err && (!t.count || t.seen < t.count))
		ring_buffer__consume(rb);
	if (t.pcap && fflush(t.pcap)) {
		pr_warn("Couldn't write %s: %s", pcap_path, strerror(errno));
		err = err ?: -EIO;
	}
	fflush(stdout);
	fprintf(stderr, "%u sample%s, %llu skipped (rate limit or ring buffer full)\n", t.seen,
		t.seen == 1 ? "" : "s", (unsigned long long)skipped);
out:
	for (int i = 0; i < t.n; i++) {
		trace_disarm(&t.ifs[i]);
		live_close(&t.ifs[i].li);
	}
	if (t.n < n)
		live_close(&t.ifs[t.n].li);
	ring_buffer__free(rb);
	for (int i = 0; i < t.n; i++)
		if (t.ifs[i].rb_fd >= 0)
			close(t.ifs[i].rb_fd);
	if (t.pcap && t.pcap != stdout)
		fclose(t.pcap);
	return err ? 1 : 0;
}

const struct command cmd_trace = {
	.name = "trace",
	.args = "[IFACE] [--rule ID[,ID...]] [--qpn N] [--addr IP] [--count N] [--snaplen N] "
		"[--pcap FILE] [--json]",
	.summary = "sample violating frames live, decoded like tcpdump, optionally to pcapng",
	.help = "Switches sampling of violating frames on in the attached program for as long as the\n"
		"trace runs (it is off, and costs nothing, otherwise) and prints one line per frame:\n"
		"time, interface, addresses and UDP ports, opcode, DestQP, PSN, length, the rules the\n"
		"frame broke and, for icrc, the expected and found values with a diagnosis where one\n"
		"fits (stored byte-swapped; would match if the variant fields were not masked).\n\n"
		"Filters run in the program.  Samples are rate-limited there by a per-CPU token bucket\n"
		"(settings trace_rate, trace_burst); frames turned away are counted in trace_skipped and\n"
		"reported when the trace ends.  Sampling is switched off again however the trace ends.\n"
		"Up to " STR(ROCEVAL_MAX_TRACES) " traces can run on one interface at once, as with tcpdump: each has its\n"
		"own filters, ring buffer and rate limit, and one ending does not stop the others.\n\n"
		"Options:\n"
		"  -r, --rule ID[,ID]  only frames that broke one of these rules ('roceval rules')\n"
		"  -q, --qpn N         only frames to DestQP N\n"
		"  -a, --addr IP       only frames from or to IP (IPv4 or IPv6)\n"
		"  -c, --count N       stop after N samples\n"
		"  -s, --snaplen N     bytes of each frame to capture, 14-9216 (default: its headers,\n"
		"                      Ethernet to the last transport header, never payload; the\n"
		"                      unmasked-ICRC diagnosis needs the whole frame)\n"
		"  -w, --pcap FILE     also write the samples to FILE as pcapng ('-' for stdout), each\n"
		"                      with a comment naming the rules it broke\n"
		"  -j, --json          one JSON object per sample and line instead of text\n\n"
		"Examples:\n"
		"  roceval trace eth0 --rule icrc --count 10\n"
		"  roceval trace eth0 --qpn 0x11 --snaplen 9216 --pcap bad.pcapng\n",
	.run = do_trace,
};
