// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <linux/types.h>

#include "cm.h"
#include "json.h"
#include "op_names.h"
#include "rule_names.h"
#include "sample.h"
#include "wire.h"

/* What a sample's bytes say, as far as the snap length kept them. */
struct decoded {
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	__u16 sport, dport;
	bool has_ip, has_bth;
	__u8 saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	__u8 opcode;
	__u32 dqpn, psn;
	const __u8 *ip;	 /* the IP datagram in the sample */
	__u32 ip_caplen; /* its bytes in the sample */
	__u32 ip_len;	 /* its length per the IP header */
	bool ipv6;
	bool v1; /* RoCEv1: GIDs for addresses, no UDP ports */
};

/* The IP header (RoCEv1: the GRH) at `off`; the offset after it, or 0 if it is not there. */
static __u32 decode_ip(const __u8 *f, __u32 cap, __u32 off, __u16 proto, struct decoded *d)
{
	if (proto == 0x0800 && off + 20 <= cap) {
		memcpy(d->saddr, f + off + 12, 4);
		memcpy(d->daddr, f + off + 16, 4);
		d->ip_len = get16(f + off + 2);
		return off + (f[off] & 0x0F) * 4;
	}
	if ((proto == 0x86DD && off + 40 <= cap) || (proto == ROCE_ETH_P_ROCEV1 && off + ROCE_GRH_LEN <= cap)) {
		memcpy(d->saddr, f + off + 8, 16);
		memcpy(d->daddr, f + off + 24, 16);
		d->ip_len = 40 + get16(f + off + 4);
		d->ipv6 = true;
		d->v1 = proto == ROCE_ETH_P_ROCEV1;
		/* RoCEv1 has no fragment header; IPv6 may have one before UDP */
		return off + 40 + (!d->v1 && f[off + 6] == 44 ? 8 : 0);
	}
	return 0;
}

static void decode(const __u8 *f, __u32 cap, struct decoded *d)
{
	__u32 off = 14, l4;
	__u16 proto;

	memset(d, 0, sizeof(*d));
	if (cap < 14)
		return;
	proto = get16(f + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8) && off + 4 <= cap; i++) {
		proto = get16(f + off + 2);
		off += 4;
	}
	l4 = decode_ip(f, cap, off, proto, d);
	if (!l4)
		return;
	inet_ntop(d->ipv6 ? AF_INET6 : AF_INET, d->saddr, d->src, sizeof(d->src));
	inet_ntop(d->ipv6 ? AF_INET6 : AF_INET, d->daddr, d->dst, sizeof(d->dst));
	d->has_ip = true;
	d->ip = f + off;
	d->ip_caplen = cap - off;
	if (!d->v1) {
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

static void rule_list(const struct roceval_rule_set *rules, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < RULE__COUNT && used < len; i++)
		if (rule_set_has(rules, i))
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "", rule_ids[i]);
}

/* Everything a report shows of one sample. */
struct sample {
	const struct roceval_trace_event *ev;
	const char *ifname;
	__u32 cap;
	struct decoded d;
	char op[48];
	bool has_cm;
	struct roceval_cm_end cm;
	char svc[64];
	const char *diag;
	__u64 real_ns;
};

static void print_json(const struct sample *s)
{
	const struct roceval_trace_event *ev = s->ev;
	time_t secs = s->real_ns / 1000000000;
	char when[80], hex[16];
	struct json_writer w;
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when) - 16, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), 16, ".%06ldZ", (long)(s->real_ns % 1000000000 / 1000));
	json_init(&w, stdout);
	json_object_begin(&w, NULL);
	json_string(&w, "time", when);
	json_string(&w, "interface", s->ifname);
	json_u64(&w, "frame_len", ev->frame_len);
	json_u64(&w, "cap_len", s->cap);
	if (s->d.has_ip) {
		json_string(&w, "src", s->d.src);
		json_string(&w, "dst", s->d.dst);
		if (s->d.v1) {
			json_bool(&w, "rocev1", true);
		} else {
			json_u64(&w, "sport", s->d.sport);
			json_u64(&w, "dport", s->d.dport);
		}
	}
	if (s->d.has_bth) {
		json_u64(&w, "opcode", s->d.opcode);
		json_string(&w, "opcode_name", s->op);
		json_u64(&w, "dqpn", s->d.dqpn);
		json_u64(&w, "psn", s->d.psn);
	}
	if (s->has_cm) {
		json_string(&w, "service", s->svc);
		json_u64(&w, "peer_qpn", s->cm.peer_qpn);
	}
	json_array_begin(&w, "rules");
	for (int i = 0; i < RULE__COUNT; i++)
		if (rule_set_has(&ev->rules, i))
			json_string(&w, NULL, rule_ids[i]);
	json_array_end(&w);
	if (ev->retx_from & ROCEVAL_RETX_HELD) {
		json_object_begin(&w, "retx_episode");
		json_u64(&w, "from_psn", ev->retx_from & ROCE_PSN_MASK);
		json_string(&w, "after", ev->retx_from & ROCEVAL_RETX_AFTER_NAK ? "nak" : "timeout");
		json_object_end(&w);
	}
	if (ev->flags & ROCEVAL_EV_ICRC_CHECKED) {
		snprintf(hex, sizeof(hex), "0x%08x", ev->icrc_expected);
		json_string(&w, "icrc_expected", hex);
		snprintf(hex, sizeof(hex), "0x%08x", ev->icrc_found);
		json_string(&w, "icrc_found", hex);
		if (s->diag)
			json_string(&w, "icrc_diagnosis", s->diag);
	}
	json_object_end(&w);
	json_end(&w);
}

static void print_text(const struct sample *s, const char *rules, const char *icrc)
{
	time_t secs = s->real_ns / 1000000000;
	char when[64];
	struct tm tm;

	localtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s.%06ld %s ", when, (long)(s->real_ns % 1000000000 / 1000), s->ifname);
	if (s->d.has_ip && s->d.v1)
		printf("%s > %s: RoCEv1 ", s->d.src, s->d.dst);
	else if (s->d.has_ip)
		printf("%s.%u > %s.%u: ", s->d.src, s->d.sport, s->d.dst, s->d.dport);
	if (s->d.has_bth)
		printf("%s dqpn 0x%06x psn %u, ", s->op, s->d.dqpn, s->d.psn);
	if (s->has_cm)
		printf("%s peer qp 0x%06x, ", s->svc, s->cm.peer_qpn);
	printf("length %u: %s%s", s->ev->frame_len, rules, icrc);
	if (s->ev->retx_from & ROCEVAL_RETX_HELD)
		printf("; retransmission episode from psn %u after %s", s->ev->retx_from & ROCE_PSN_MASK,
		       s->ev->retx_from & ROCEVAL_RETX_AFTER_NAK ? "a NAK" : "a timeout");
	putchar('\n');
}

int sample_report(const struct sample_output *o, const char *ifname, uint32_t ifidx, int cm_ends_fd,
		  const void *data, size_t size)
{
	struct sample s = { .ev = data, .ifname = ifname };
	const __u8 *frame = (const __u8 *)(s.ev + 1);
	char rules[512], icrc[192] = "", comment[720];

	if (size < sizeof(*s.ev))
		return 0;
	s.cap = s.ev->cap_len <= size - sizeof(*s.ev) ? s.ev->cap_len : size - sizeof(*s.ev);
	decode(frame, s.cap, &s.d);
	rule_list(&s.ev->rules, rules, sizeof(rules));
	if (s.d.has_bth)
		roce_opcode_name(s.d.opcode, s.op, sizeof(s.op));
	/* the application and the peer QP of a connection CM announced */
	s.has_cm = s.d.has_bth && cm_ends_fd >= 0 &&
		   cm_end_lookup(cm_ends_fd, s.d.saddr, s.d.daddr, s.d.ipv6, s.d.dqpn, &s.cm);
	if (s.has_cm)
		cm_service_name(s.cm.service_id, s.svc, sizeof(s.svc));
	if (rule_set_has(&s.ev->rules, RULE_ICRC) && (s.ev->flags & ROCEVAL_EV_ICRC_CHECKED)) {
		s.diag = icrc_diagnosis(s.ev, &s.d);
		snprintf(icrc, sizeof(icrc), "; icrc expected 0x%08x found 0x%08x%s%s%s", s.ev->icrc_expected,
			 s.ev->icrc_found, s.diag ? " (" : "", s.diag ?: "", s.diag ? ")" : "");
	}
	s.real_ns = s.ev->ts_ns + o->mono_to_real_ns;
	if (o->json && !o->quiet)
		print_json(&s);
	else if (!o->quiet)
		print_text(&s, rules, icrc);
	if (!o->pcap)
		return 0;
	snprintf(comment, sizeof(comment), "roceval: %s%s", rules, icrc);
	return capture_frame(o->pcap, ifidx, s.real_ns, frame, s.cap, s.ev->frame_len, comment) ? -EIO : 0;
}
