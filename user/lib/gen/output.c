// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The generator's output: a pcap or pcapng capture, or an interface, paced or as fast as it takes. */
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "generator.h"
#include "log.h"

#define TS_BASE 1767225600ULL /* 2026-01-01 00:00 UTC: fixed so a seed repeats byte for byte */


static double now_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Interface statistics through netlink (getifaddrs), so they come from our network namespace. */
uint64_t gen_if_tx_dropped(const char *ifname)
{
	struct ifaddrs *ifa, *i;
	uint64_t v = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET && i->ifa_data &&
		    !strcmp(i->ifa_name, ifname))
			v = ((struct rtnl_link_stats *)i->ifa_data)->tx_dropped;
	freeifaddrs(ifa);
	return v;
}

int gen_out_open_iface(struct gen_out *o, const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = {};
	int sndbuf = 4 << 20;

	o->ifname = ifname;
	o->ifindex = if_nametoindex(ifname);
	if (!o->ifindex) {
		pr_warn("%s: no such interface", ifname);
		return -ENODEV;
	}
	/* protocol 0: this socket only sends, it never receives a copy of anything */
	o->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (o->fd < 0) {
		pr_warn("Couldn't open an AF_PACKET socket: %s", strerror(errno));
		return -errno;
	}
	sll.sll_ifindex = o->ifindex;
	if (bind(o->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		pr_warn("%s: couldn't bind the AF_PACKET socket: %s", ifname, strerror(errno));
		return -errno;
	}
	setsockopt(o->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(o->fd, SIOCGIFMTU, &ifr) == 0)
		o->mtu = ifr.ifr_mtu;
	o->tx_dropped0 = gen_if_tx_dropped(ifname);
	return 0;
}

void gen_out_progress(struct gen_out *o, bool final)
{
	double t = now_since(&o->start);

	if (!o->progress)
		return;
	if (!final && now_since(&o->last_progress) < 0.25)
		return;
	clock_gettime(CLOCK_MONOTONIC, &o->last_progress);
	if (final)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\rroceval gen: %llu frames, %.1f s, %.0f frames/s\033[K",
			(unsigned long long)o->n, t, t > 0 ? o->n / t : 0);
}

int gen_out_frame(struct gen_out *o, const uint8_t *frame, size_t len)
{
	static uint8_t wrapped[PKT_MAX_FRAME + GEN_ENCAP_ROOM];

	if (o->encap.kind) { /* every frame is built in a PKT_MAX_FRAME buffer */
		len = gen_encap_wrap(&o->encap, frame, len, wrapped, gen_out_time(o));
		frame = wrapped;
	}
	if (o->fd >= 0) {
		if (o->pps) {
			double due = (double)o->n / o->pps, t = now_since(&o->start);

			if (due > t) {
				struct timespec ts = { .tv_sec = (time_t)(due - t),
						       .tv_nsec = (long)(((due - t) - (time_t)(due - t)) * 1e9) };

				nanosleep(&ts, NULL);
			}
		}
		if (o->mtu && len - 14 > o->mtu + (len > 18 && frame[12] == 0x81 && frame[13] == 0x00 ? 4 : 0)) {
			pr_warn("%s: a %zu-byte frame does not fit the MTU of %u; lower --pmtu or raise the MTU",
				o->ifname, len, o->mtu);
			return -EMSGSIZE;
		}
		for (;;) {
			if (send(o->fd, frame, len, 0) == (ssize_t)len)
				break;
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				if (*o->stop)
					return -EINTR;
				usleep(50); /* the device queue is full: wait, never drop */
				continue;
			}
			pr_warn("%s: couldn't send a frame: %s", o->ifname, strerror(errno));
			return -errno;
		}
	} else {
		/* one frame per microsecond of capture time, and the waits */
		uint64_t ts_ns = TS_BASE * 1000000000ULL + gen_out_time(o);

		if (capture_frame(&o->cap, 0, ts_ns, frame, len, len, NULL)) {
			pr_warn("Couldn't write the capture: %s", strerror(errno));
			return -EIO;
		}
	}
	o->n++;
	if (o->pps || (o->n & 255) == 0) /* paced runs are slow enough to look at the clock each frame */
		gen_out_progress(o, false);
	return 0;
}

uint64_t gen_out_time(const struct gen_out *o)
{
	return o->n * 1000 + o->late_ns;
}

void gen_out_wait(struct gen_out *o, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL) };

	if (o->fd < 0) {
		o->late_ns += ns;
		return;
	}
	while (nanosleep(&ts, &ts) && errno == EINTR && !*o->stop)
		;
}
