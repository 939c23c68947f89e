// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "cooked.h"
#include "log.h"
#include "reader.h"

_Static_assert(REPLAY_DAMAGE_LEN == PCAP_ERRBUF_SIZE + 64, "the damage line holds libpcap's message");

/*
 * The length of the frame as its L3 header tells it: Ethernet, up to two
 * VLAN tags, then the IP total length (IPv4), 40 + payload length (IPv6) or
 * 40 + PayLen (a RoCEv1 GRH).  0 when the captured bytes do not say.
 */
static __u32 claimed_len(const unsigned char *d, __u32 caplen)
{
	__u32 off = 12;
	__u16 proto;

	for (int i = 0; i < 3; i++) {
		if (off + 2 > caplen)
			return 0;
		proto = d[off] << 8 | d[off + 1];
		if (proto != 0x8100 && proto != 0x88A8)
			break;
		off += 4;
	}
	off += 2;
	if (proto == 0x0800 && off + 4 <= caplen)
		return off + (d[off + 2] << 8 | d[off + 3]);
	if ((proto == 0x86DD || proto == ROCE_ETH_P_ROCEV1) && off + 6 <= caplen)
		return off + 40 + (d[off + 4] << 8 | d[off + 5]);
	return 0;
}

/*
 * A capture opened for libpcap with a 1 MiB stdio buffer, which `*buf`
 * holds until after pcap_close(): libpcap reads through stdio, whose own
 * 4 KiB made a read() call for every few frames (a quarter of a large
 * replay's time).  Standard input, and a file stdio cannot open, go to
 * libpcap as they are, so its messages stay its own.
 */
#define CAPTURE_BUF (1 << 20)

static pcap_t *capture_open(const char *path, char *errbuf, char **buf)
{
	FILE *fp;
	pcap_t *pcap;

	*buf = NULL;
	if (!strcmp(path, "-"))
		return pcap_open_offline(path, errbuf);
	fp = fopen(path, "rb");
	*buf = fp ? malloc(CAPTURE_BUF) : NULL;
	if (!*buf) {
		if (fp)
			fclose(fp);
		return pcap_open_offline(path, errbuf);
	}
	setvbuf(fp, *buf, _IOFBF, CAPTURE_BUF);
	pcap = pcap_fopen_offline(fp, errbuf);
	if (!pcap) {
		fclose(fp);
		free(*buf);
		*buf = NULL;
	}
	return pcap;
}

/*
 * Some capture paths cut frames and record the cut length as the wire
 * length too, so the record alone says the frame was short on the wire.
 * One such record may be a frame really cut on the way; but when a
 * capture's longest records all stop at one length, many times over, while
 * their IP lengths say more, that length is a snap length the capture did
 * not record.  snap_scan gathers that over a capture's records.
 */
#define SNAP_UNRECORDED_MIN 8

struct snap_scan {
	unsigned long long cut;
	bool whole;
	__u32 longest;
};

/* A record of caplen bytes of a frame of `wire`, its first `head` bytes at data. */
static void snap_scan_add(struct snap_scan *s, const unsigned char *data, __u32 head, __u32 caplen, __u32 wire)
{
	if (caplen > s->longest) {
		s->longest = caplen;
		s->cut = 0;
		s->whole = false;
	}
	if (caplen != s->longest)
		return;
	if (wire == caplen && claimed_len(data, head) > caplen)
		s->cut++;
	else
		s->whole = true;
}

static __u32 snap_scan_length(const struct snap_scan *s)
{
	return s->cut >= SNAP_UNRECORDED_MIN && !s->whole ? s->longest : 0;
}

/* A classic pcap file's magic numbers (microseconds, nanoseconds), and libpcap's longest record. */
#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_RECORD_MAX 262144u
#define LINKTYPE_ETHERNET 1

static __u32 pcap_u32(const unsigned char *p, bool swapped)
{
	__u32 v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap32(v) : v;
}

/* The file read a chunk at a time, and the bytes of a frame claimed_len() reads at most. */
#define SCAN_CHUNK (256 << 10)
#define SCAN_HEAD 64

/*
 * The snap scan of a classic pcap file of Ethernet frames, its records'
 * headers walked in chunks read with pread(): through libpcap the scan
 * copied every frame twice more before one was judged, and through a
 * mapping of the file its page faults cost more than reading it.  -1 for
 * any other file, or a record libpcap would not give as it stands (longer
 * than the file's snap length), which libpcap then reads.
 */
static long long snaplen_read(int fd, __u64 size, unsigned char *buf)
{
	struct snap_scan scan = {};
	__u64 lo = 0, have = 0, off;
	__u32 magic, snaplen, caplen;
	bool swapped;
	ssize_t got;

	if (size < 24 || pread(fd, buf, 24, 0) != 24)
		return -1;
	memcpy(&magic, buf, sizeof(magic));
	swapped = magic == __builtin_bswap32(PCAP_MAGIC_US) || magic == __builtin_bswap32(PCAP_MAGIC_NS);
	snaplen = pcap_u32(buf + 16, swapped);
	if ((!swapped && magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS) ||
	    pcap_u32(buf + 20, swapped) != LINKTYPE_ETHERNET || !snaplen || snaplen > PCAP_RECORD_MAX)
		return -1;
	/* a record cut short by the file's end ends libpcap's reading too */
	for (off = 24; off + 16 <= size; off += 16 + (__u64)caplen) {
		const unsigned char *rec;

		if (off + 16 + SCAN_HEAD > lo + have && lo + have < size) {
			got = pread(fd, buf, SCAN_CHUNK, off);
			/* short of what the file's size promised (a file being written): libpcap reads it */
			if (got < 0 || (__u64)got < (size - off < 16 + SCAN_HEAD ? size - off : 16 + SCAN_HEAD))
				return -1;
			lo = off;
			have = got;
		}
		rec = buf + (off - lo);
		caplen = pcap_u32(rec + 8, swapped);
		if (caplen > snaplen)
			return -1;
		if (caplen > size - off - 16)
			break;
		snap_scan_add(&scan, rec + 16, caplen < SCAN_HEAD ? caplen : SCAN_HEAD, caplen, pcap_u32(rec + 12, swapped));
	}
	return snap_scan_length(&scan);
}

static long long snaplen_pcap(const char *path)
{
	int fd = open(path, O_RDONLY);
	unsigned char *buf = malloc(SCAN_CHUNK);
	long long ret = -1;
	struct stat st;

	if (fd >= 0 && buf && !fstat(fd, &st) && S_ISREG(st.st_mode))
		ret = snaplen_read(fd, st.st_size, buf);
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* The snap length the capture at `path` did not record, or 0 (snap_scan). */
static __u32 unrecorded_snaplen(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hdr;
	const unsigned char *data;
	struct snap_scan scan = {};
	struct to_ether conv;
	long long pcap_scan = snaplen_pcap(path);
	char *buf;
	pcap_t *pcap;

	if (pcap_scan >= 0)
		return pcap_scan;
	pcap = capture_open(path, errbuf, &buf);
	if (!pcap)
		return 0;
	to_ether_init(&conv, pcap_datalink(pcap));
	while (pcap_next_ex(pcap, &hdr, &data) == 1) {
		__u32 caplen = hdr->caplen, wire = hdr->len;

		data = to_ether_frame(&conv, data, &caplen, &wire);
		if (!data)
			break;
		snap_scan_add(&scan, data, caplen, caplen, wire);
	}
	to_ether_free(&conv);
	pcap_close(pcap);
	free(buf);
	return snap_scan_length(&scan);
}

int replay_file_open(struct replay_file *f, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	const char *why;
	size_t plen = strlen(path);

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->pcap = capture_open(path, errbuf, &f->buf);
	if (!f->pcap) {
		/* libpcap names the file itself in some messages, not in others */
		if (!strncmp(errbuf, path, plen) && !strncmp(errbuf + plen, ": ", 2))
			pr_warn("%s", errbuf);
		else
			pr_warn("%s: %s", path, errbuf);
		return -EINVAL;
	}
	why = to_ether_refused(pcap_datalink(f->pcap));
	if (why) {
		pr_warn("%s: %s", path, why);
		replay_file_close(f);
		return -EINVAL;
	}
	/* standard input cannot be read twice */
	f->snap_unrecorded = strcmp(path, "-") ? unrecorded_snaplen(path) : 0;
	return 0;
}

int replay_file_run(struct replay_file *f, struct replay *r)
{
	struct pcap_pkthdr *hdr;
	const unsigned char *data;
	struct to_ether conv;
	int ret, err = 0;

	to_ether_init(&conv, pcap_datalink(f->pcap));
	while ((ret = pcap_next_ex(f->pcap, &hdr, &data)) == 1) {
		__u32 caplen = hdr->caplen, wire = hdr->len;

		data = to_ether_frame(&conv, data, &caplen, &wire);
		if (!data) {
			pr_warn("Couldn't allocate a frame buffer: %s", strerror(ENOMEM));
			err = -ENOMEM;
			break;
		}
		if (f->snap_unrecorded && caplen == f->snap_unrecorded && wire == caplen &&
		    claimed_len(data, caplen) > caplen) {
			wire = ROCEVAL_WIRE_UNKNOWN;
			f->unrecorded++;
		}
		err = replay_frame(r, data, caplen, wire, hdr->ts.tv_sec * 1000000000ULL + hdr->ts.tv_usec * 1000ULL);
		if (err)
			break;
		f->frames++;
	}
	to_ether_free(&conv);
	if (!err && ret == PCAP_ERROR) {
		f->damaged = true;
		snprintf(f->damage, sizeof(f->damage), "%s: capture damaged after %llu frames: %s", f->path, f->frames,
			 pcap_geterr(f->pcap));
	}
	return err ?: replay_flush(r);
}

void replay_file_close(struct replay_file *f)
{
	if (f->pcap)
		pcap_close(f->pcap);
	f->pcap = NULL;
	free(f->buf);
	f->buf = NULL;
}

/*
 * The fewest bytes a frame that makes a table entry takes in a file: a
 * pcap record header (a pcapng packet block takes 32) and the shortest
 * frame that names a flow, a raw-IP one (link type RAW) holding an IPv4
 * header, UDP and the BTH.  Other frames make no entry.
 */
#define FRAME_BYTES_MIN (16 + 20 + 8 + 12)

__u64 replay_frame_bound(char *const *paths, int n, bool join)
{
	__u64 frames = 0, one;
	struct stat st;

	for (int i = 0; i < n; i++) {
		if (!strcmp(paths[i], "-") || stat(paths[i], &st) || !S_ISREG(st.st_mode))
			return 0;
		one = (__u64)st.st_size / FRAME_BYTES_MIN;
		frames = join ? frames + one : one > frames ? one : frames;
	}
	return frames;
}
