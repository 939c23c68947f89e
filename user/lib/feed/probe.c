// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which kind of copy a feed gets, told live as replay tells it offline
 * (icrc_all_bad_both_directions): a single valid ICRC shows the capture
 * path delivers the wire's bytes; every ICRC failing both ways between two
 * hosts shows it does not, since a receiver drops a frame whose ICRC fails
 * and the conversation could not have gone on as captured.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feeder.h"
#include "icrc.h"

#define PROBE_PAIRS 256

/* ICRC failures from src to dst */
struct probe_dir {
	unsigned char src[16], dst[16];
	bool ipv6;
};

struct feed_probe {
	struct roceval_settings cfg;
	struct probe_dir dirs[PROBE_PAIRS];
	int ndirs;
	char hosts[96];
};

struct feed_probe *feed_probe_new(const struct roceval_settings *cfg)
{
	struct feed_probe *p = calloc(1, sizeof(*p));

	if (p)
		p->cfg = *cfg;
	return p;
}

void feed_probe_free(struct feed_probe *p)
{
	free(p);
}

const char *feed_probe_hosts(const struct feed_probe *p)
{
	return p->hosts;
}

static bool roce_port(const struct roceval_settings *cfg, __u16 port)
{
	if (port == 4791)
		return true;
	for (__u32 i = 0; i < cfg->n_ports && i < ROCEVAL_MAX_PORTS; i++)
		if (cfg->ports[i] == port)
			return true;
	return false;
}

/*
 * The IP datagram of a whole RoCEv2 frame: Ethernet, up to two VLAN tags,
 * IPv4 (not a fragment) or IPv6, UDP to a RoCE port; its length, or 0.
 */
static __u32 roce_datagram(const struct roceval_settings *cfg, const unsigned char *d, __u32 len,
			   const unsigned char **ip)
{
	__u32 off = 12, iplen, l4;
	__u16 proto = 0;

	for (int i = 0; i < 3 && off + 2 <= len; i++) {
		proto = d[off] << 8 | d[off + 1];
		if (proto != 0x8100 && proto != 0x88A8)
			break;
		off += 4;
	}
	off += 2;
	if (proto == 0x0800 && off + 20 <= len && (d[off] >> 4) == 4) {
		iplen = d[off + 2] << 8 | d[off + 3];
		l4 = (d[off] & 15) * 4;
		if (d[off + 9] != 17 || (d[off + 6] & 0x3F) || d[off + 7])
			return 0;
	} else if (proto == 0x86DD && off + 40 <= len && (d[off] >> 4) == 6) {
		iplen = 40 + (d[off + 4] << 8 | d[off + 5]);
		l4 = 40;
		if (d[off + 6] != 17)
			return 0;
	} else {
		return 0;
	}
	if (off + iplen > len || l4 + 8 > iplen || !roce_port(cfg, d[off + l4 + 2] << 8 | d[off + l4 + 3]))
		return 0;
	*ip = d + off;
	return iplen;
}

static void addresses(const unsigned char *ip, struct probe_dir *dir)
{
	memset(dir, 0, sizeof(*dir));
	dir->ipv6 = (ip[0] >> 4) == 6;
	memcpy(dir->src, ip + (dir->ipv6 ? 8 : 12), dir->ipv6 ? 16 : 4);
	memcpy(dir->dst, ip + (dir->ipv6 ? 24 : 16), dir->ipv6 ? 16 : 4);
}

static bool same(const struct probe_dir *a, const unsigned char *src, const unsigned char *dst, bool ipv6)
{
	return a->ipv6 == ipv6 && !memcmp(a->src, src, 16) && !memcmp(a->dst, dst, 16);
}

/* Counts a failure from d's source to its destination; whether the other way failed too. */
static bool failed_both_ways(struct feed_probe *p, const struct probe_dir *d)
{
	bool here = false, back = false;

	for (int i = 0; i < p->ndirs; i++) {
		here |= same(&p->dirs[i], d->src, d->dst, d->ipv6);
		back |= same(&p->dirs[i], d->dst, d->src, d->ipv6);
	}
	if (!here && p->ndirs < PROBE_PAIRS)
		p->dirs[p->ndirs++] = *d;
	if (back) {
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		int af = d->ipv6 ? AF_INET6 : AF_INET;

		snprintf(p->hosts, sizeof(p->hosts), "%s and %s", inet_ntop(af, d->src, a, sizeof(a)),
			 inet_ntop(af, d->dst, b, sizeof(b)));
	}
	return back;
}

bool feed_probe_frame(struct feed_probe *p, const unsigned char *data, __u32 caplen, __u32 wire,
		      enum feed_icrc *verdict)
{
	const unsigned char *ip;
	struct probe_dir d;
	uint32_t icrc;
	__u32 len;

	*verdict = FEED_ICRC_DECIDING;
	if (wire > caplen) /* snapped: the ICRC is not in the copy */
		return false;
	len = roce_datagram(&p->cfg, data, caplen, &ip);
	if (!len || roce_icrc(ip, len, &icrc))
		return false;
	addresses(ip, &d);
	if (icrc == roce_icrc_load(ip + len - 4))
		*verdict = FEED_ICRC_VALID;
	else if (failed_both_ways(p, &d))
		*verdict = FEED_ICRC_ARTEFACT;
	return true;
}
