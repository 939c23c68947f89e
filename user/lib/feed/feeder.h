/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * roceval feed: frames from a capture stream (a pcap pipe from tcpdump or
 * ibdump, or the RDMA sniffer itself) run through the replay program as
 * they arrive, its maps pinned under a name as an attachment's are
 * (mode LIVE_MODE_FEED), so status, stats, top and the daemon read them.
 * The counters outlive the stream until `roceval detach NAME`; a new feed
 * of the name continues them.
 */
#ifndef ROCEVAL_FEEDER_H
#define ROCEVAL_FEEDER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "roceval.h"

/* What the ICRCs of the source showed (struct feed_state.icrc). */
enum feed_icrc {
	FEED_ICRC_DECIDING, /* no RoCEv2 frame yet, or frames held until one of the below */
	FEED_ICRC_VALID,    /* a valid ICRC came: the copies are the wire's, checked */
	FEED_ICRC_UNPROVEN, /* none valid, failures not both ways: checked, a sender's fault counts */
	FEED_ICRC_ARTEFACT, /* every ICRC failed, both ways between two hosts: checking off */
};

/* How a feed ended (struct feed_state.end). */
enum feed_end {
	FEED_RUNNING,
	FEED_END_EOF,	  /* the stream ended at a record's end */
	FEED_END_BROKEN,  /* it broke mid-record */
	FEED_END_STOPPED, /* SIGINT or SIGTERM */
	FEED_END_FAILED,  /* BPF or the device failed */
	FEED_END_DETACHED, /* `roceval detach NAME` removed its pins */
};

enum feed_clock {
	FEED_CLOCK_CAPTURE, /* the capture's timestamps */
	FEED_CLOCK_NIC,	    /* the NIC's completion timestamps */
	FEED_CLOCK_POLL,    /* the host's clock when the sniffer's ring was polled */
};

/* Value of the pinned "feed" map: what the feed of a name is doing, or did last. */
struct feed_state {
	__u64 frames;	     /* this feed's, run through the program */
	__u64 started;	     /* CLOCK_REALTIME seconds */
	__u64 pid_start;     /* the feeding process's start (/proc/PID/stat field 22): pids are reused */
	__u32 pid;
	__u32 icrc;	     /* enum feed_icrc */
	__u32 end;	     /* enum feed_end */
	__u32 clock;	     /* enum feed_clock */
	__u32 rdma;	     /* the source is the RDMA sniffer, not a pcap stream */
	__u32 pad;
	char source[64];     /* the stream's path ("-": standard input) or DEV:PORT */
	char hosts[96];	     /* FEED_ICRC_ARTEFACT: the two hosts whose ICRCs all failed both ways */
};

/* The feed pinned as li's name, read; false where li is no feed's or it cannot be read. */
struct live_iface;
bool feed_state_read(const struct live_iface *li, struct feed_state *st);
/* The start time of process pid (clock ticks after boot), or 0 when there is none. */
unsigned long long feed_pid_start(unsigned int pid);
/* Whether the process st names still feeds. */
bool feed_running(const struct feed_state *st);
/* "checked", "off: capture-path artefact", "deciding", or "undecided" when the feed ended so */
const char *feed_icrc_word(const struct feed_state *st);
const char *feed_end_word(const struct feed_state *st);	 /* "end of stream", "broken stream", ... */
const char *feed_clock_word(const struct feed_state *st); /* "capture", "nic" or "poll" */
/* status's lines for a feed, after its first. */
void feed_status_text(const struct feed_state *st);

/*
 * A feed of `name` loaded: the replay program over the name's pinned maps
 * (a new feed's pinned first), `cfg` written to its settings.  Refuses a
 * name roceval is attached to as an interface, and a feed another process
 * runs.  NULL with the reason said.
 */
struct feed;
struct feed *feed_open(const char *name, const struct roceval_settings *cfg, const char *source, bool rdma,
		       enum feed_clock clock);
/*
 * One frame, as replay_frame() takes it.  From the first RoCEv2 frame whose
 * ICRC can be judged until the source's kind is decided, frames are held (in
 * order) rather than run; 0 or -errno.
 */
int feed_frame(struct feed *f, const void *data, __u32 caplen, __u32 wire, __u64 time_ns);
/*
 * Starts the thread that runs what came every FEED_TICK_MS even while the
 * source is quiet, and stops the feed (feed_stop, and SIGTERM to the calling
 * thread, the reader) when the name is detached.
 */
int feed_start(struct feed *f);
/*
 * Ends the feed: what is held and queued run, the state written with *end
 * (FEED_END_DETACHED instead where the pins went meanwhile), *frames this
 * feed's; 0 or -errno.
 */
int feed_close(struct feed *f, enum feed_end *end, unsigned long long *frames);

#define FEED_TICK_MS 200
/* Frames held at most, and for at most this long, while the ICRCs are undecided. */
#define FEED_HOLD_FRAMES 4096
#define FEED_HOLD_MS 1000

/*
 * The ICRC probe: every whole RoCEv2 frame's ICRC checked in userspace
 * (icrc.c) and counted per direction between two hosts.
 */
struct feed_probe;
struct feed_probe *feed_probe_new(const struct roceval_settings *cfg);
/*
 * Whether the frame is a whole RoCEv2 datagram whose ICRC could be judged;
 * *verdict the decision so far, FEED_ICRC_DECIDING while none is made.
 */
bool feed_probe_frame(struct feed_probe *p, const unsigned char *data, __u32 caplen, __u32 wire,
		      enum feed_icrc *verdict);
/* The two hosts of an artefact, "A and B". */
const char *feed_probe_hosts(const struct feed_probe *p);
void feed_probe_free(struct feed_probe *p);

/*
 * Sources.  Each reads until its end, its stop flag or a failure, and
 * returns the feed_end it met; *msg (static) says more for BROKEN/FAILED.
 */
extern volatile int feed_stop; /* set by SIGINT and SIGTERM */
struct pcap;
enum feed_end feed_pcap(struct feed *f, struct pcap *pcap, const char **msg);

/*
 * The RDMA sniffer on port `port` of device `dev`, with the clock its frames
 * get: 0, or -errno with the reason said (-EOPNOTSUPP: a build without
 * libibverbs; no such device, no privileges, a device without the rule).
 */
struct feed_rdma;
int feed_rdma_open(const char *dev, unsigned int port, struct feed_rdma **out, enum feed_clock *clock);
enum feed_end feed_rdma_run(struct feed *f, struct feed_rdma *s, const char **msg);
void feed_rdma_close(struct feed_rdma *s);

#endif
