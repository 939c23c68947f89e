// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen --encap: every frame wrapped as one mirror session of a switch sends
 * it to a collector, in the layouts docs/collector.md describes and tshark
 * decodes.  The switch and the collector have documentation addresses, so
 * a generated mirror never names a real host.
 */
#include <arpa/inet.h>
#include <string.h>

#include "generator.h"
#include "pktgen.h"
#include "report/report.h"
#include "wire.h"

/* The mirroring switch [0] and the collector [1] */
static const uint8_t encap_mac[2][6] = { { 0x02, 0, 0, 0, 0, 0xFE }, { 0x02, 0, 0, 0, 0, 0xFF } };
static const uint8_t encap_addr4[2][4] = { { 198, 51, 100, 1 }, { 198, 51, 100, 2 } };
static const uint8_t encap_addr6[2][16] = {
	{ 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 1 },
	{ 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 2 },
};

#define GRE_S 0x1000
#define GRE_K 0x2000
#define VXLAN_PORT 4789
#define ERSPAN_SESSIONS 1024 /* a 10-bit session ID */
/* ERSPAN III's last 16 bits: P (an Ethernet PDU, as Linux's ip6erspan sets it), the timestamp in 100 ns units */
#define ERSPAN3_P 0x8000
#define ERSPAN3_GRA_100NS 0x0002

/* The encapsulations gen makes: the table's rows but Geneve, which needs a setting to be read. */
static const int gen_kinds[] = { MIRROR_ERSPAN1, MIRROR_ERSPAN2, MIRROR_ERSPAN3, MIRROR_GRE, MIRROR_VXLAN };

int gen_encap_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(gen_kinds) / sizeof(gen_kinds[0]); i++)
		if (!strcmp(name, mirror_encap_id(gen_kinds[i])))
			return gen_kinds[i];
	return -1;
}

bool gen_encap_numbered(int kind)
{
	return kind == MIRROR_ERSPAN2 || kind == MIRROR_ERSPAN3 || kind == MIRROR_GRE;
}

const char *gen_encap_settle(struct gen_encap *e, double loss_rate)
{
	if (!e->kind)
		return e->session >= 0 || e->family || loss_rate ?
			       "--encap-family, --session and --mirror-loss shape a mirror: add --encap" : NULL;
	if (loss_rate && !gen_encap_numbered(e->kind))
		return "--mirror-loss needs sequence numbers to count the loss by: --encap erspan2, erspan3 or gre";
	if (e->session >= 0 && e->kind == MIRROR_ERSPAN1)
		return "--session: ERSPAN type I carries no session ID";
	if ((e->kind == MIRROR_ERSPAN2 || e->kind == MIRROR_ERSPAN3) && e->session >= ERSPAN_SESSIONS)
		return "--session: an ERSPAN session ID is 0 to 1023";
	if (e->kind == MIRROR_VXLAN && e->session > 0xFFFFFF)
		return "--session: a VXLAN VNI is 0 to 16777215";
	if (e->session < 0) /* the session a switch's first mirror gets; type I names none */
		e->session = e->kind != MIRROR_ERSPAN1;
	e->family = e->family ?: 4;
	return NULL;
}

const char *gen_encap_source(const struct gen_encap *e)
{
	static char buf[INET6_ADDRSTRLEN];

	return inet_ntop(e->family == 6 ? AF_INET6 : AF_INET, e->family == 6 ? encap_addr6[0] : encap_addr4[0], buf, sizeof(buf));
}

/* ERSPAN II and III's first word: version, the VLAN the frame was tagged with (kept in it), session */
static uint32_t erspan_word(int version, const uint8_t *frame, size_t len, uint32_t session)
{
	bool tagged = len >= 18 && get16(frame + 12) == 0x8100;
	uint32_t vlan = tagged ? get16(frame + 14) & 0x0FFF : 0;

	/* II's En 3: the VLAN tag is kept in the frame; III's BSO stays 0, a good frame */
	return (uint32_t)version << 28 | vlan << 16 | (tagged && version == 1 ? 3u << 11 : 0) | session;
}

/* The GRE header and what follows it, or VXLAN's UDP and VXLAN headers; returns their length. */
static size_t tunnel_header(struct gen_encap *e, const uint8_t *frame, size_t len, uint8_t *p, uint64_t now_ns)
{
	switch (e->kind) {
	case MIRROR_ERSPAN1:
		put16(p, 0);
		put16(p + 2, 0x88BE);
		return 4;
	case MIRROR_ERSPAN2:
		put16(p, GRE_S);
		put16(p + 2, 0x88BE);
		put32(p + 4, e->seq++);
		put32(p + 8, erspan_word(1, frame, len, e->session));
		put32(p + 12, 0); /* reserved, port index */
		return 16;
	case MIRROR_ERSPAN3:
		put16(p, GRE_S);
		put16(p + 2, 0x22EB);
		put32(p + 4, e->seq++);
		put32(p + 8, erspan_word(2, frame, len, e->session));
		put32(p + 12, (uint32_t)(now_ns / 100));
		put32(p + 16, ERSPAN3_P | ERSPAN3_GRA_100NS); /* no SGT, FT 0 (Ethernet), no platform sub-header */
		return 20;
	case MIRROR_GRE:
		put16(p, GRE_K | GRE_S);
		put16(p + 2, 0x6558);
		put32(p + 4, e->session);
		put32(p + 8, e->seq++);
		return 12;
	default: /* VXLAN: the source port spreads sessions over receive queues, as a hash of the frame would */
		put16(p, 49152 | (get16(frame + 6) ^ get16(frame + 10)) >> 2);
		put16(p + 2, VXLAN_PORT);
		put16(p + 4, 16 + len);
		put16(p + 6, 0);
		put32(p + 8, 0x08000000); /* the I flag: the VNI is valid */
		put32(p + 12, e->session << 8);
		return 16;
	}
}

size_t gen_encap_wrap(struct gen_encap *e, const uint8_t *frame, size_t len, uint8_t *out, uint64_t now_ns)
{
	bool ipv6 = e->family == 6;
	size_t l3 = 14, l4 = l3 + (ipv6 ? 40 : 20);
	size_t th = tunnel_header(e, frame, len, out + l4, now_ns);
	size_t n = l4 + th + len;
	uint8_t proto = e->kind == MIRROR_VXLAN ? 17 : 47;
	struct pkt_layout lay = { .l3 = l3, .l4 = l4, .ipv6 = ipv6 };
	uint8_t *ip = out + l3;

	memcpy(out, encap_mac[1], 6);
	memcpy(out + 6, encap_mac[0], 6);
	put16(out + 12, ipv6 ? 0x86DD : 0x0800);
	if (ipv6) {
		put32(ip, 0x60000000);
		put16(ip + 4, th + len);
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, encap_addr6[0], 16);
		memcpy(ip + 24, encap_addr6[1], 16);
	} else {
		ip[0] = 0x45;
		ip[1] = 0;
		put16(ip + 2, 20 + th + len);
		put16(ip + 4, e->ip_id++);
		put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, encap_addr4[0], 4);
		memcpy(ip + 16, encap_addr4[1], 4);
		pkt_ipv4_csum(out, &lay);
	}
	memcpy(out + l4 + th, frame, len);
	/* IPv6 forbids a zero UDP checksum; over IPv4 VXLAN senders leave it 0 */
	if (e->kind == MIRROR_VXLAN && ipv6)
		put16(out + l4 + 6, pkt_udp_csum(out, &lay));
	e->bytes += n;
	return n;
}
