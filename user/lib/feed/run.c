// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frames into the program as they come: queued, and run when a batch is
 * full or on the next tick, so the counters move while a stream trickles.
 * The first frames wait for the ICRC probe's verdict on the source, so
 * that a capture path's artefact never reaches the icrc counters.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "feed_int.h"
#include "live/loader.h"
#include "log.h"
#include "roceval.skel.h"

volatile int feed_stop;

int feed_state_write(struct feed *f)
{
	__u32 key = 0;

	if (bpf_map_update_elem(f->state_fd, &key, &f->st, BPF_ANY)) {
		pr_warn("%s: Couldn't write the feed map: %s", f->name, strerror(errno));
		return -errno;
	}
	return 0;
}

struct feed *feed_open(const char *name, const struct roceval_settings *cfg, const char *source, bool rdma,
		       enum feed_clock clock)
{
	struct feed *f = calloc(1, sizeof(*f));

	if (!f || !(f->probe = feed_probe_new(cfg))) {
		pr_warn("Couldn't allocate the feed: %s", strerror(ENOMEM));
		free(f);
		return NULL;
	}
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->state_fd = -1;
	f->st.pid = getpid();
	f->st.pid_start = feed_pid_start(f->st.pid);
	f->st.started = time(NULL);
	f->st.clock = clock;
	f->st.rdma = rdma;
	snprintf(f->st.source, sizeof(f->st.source), "%s", source);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	if (feed_load(f, cfg, clock)) {
		replay_free(f->r);
		if (f->state_fd >= 0)
			close(f->state_fd);
		feed_probe_free(f->probe);
		free(f);
		return NULL;
	}
	return f;
}

static int run_frame(struct feed *f, const void *data, __u32 caplen, __u32 wire, __u64 time_ns)
{
	int err = replay_frame(f->r, data, caplen, wire, time_ns);

	f->st.frames += !err;
	return err;
}

static int hold(struct feed *f, const void *data, __u32 caplen, __u32 wire, __u64 time_ns)
{
	if (f->hold_used + caplen > f->hold_size) {
		size_t size = (f->hold_size ?: 1 << 20) * 2 + caplen;
		unsigned char *b = realloc(f->hold, size);

		if (!b)
			return -ENOMEM;
		f->hold = b;
		f->hold_size = size;
	}
	if (!f->held && !(f->held = calloc(FEED_HOLD_FRAMES, sizeof(*f->held))))
		return -ENOMEM;
	if (!f->nheld)
		clock_gettime(CLOCK_MONOTONIC, &f->hold_since);
	memcpy(f->hold + f->hold_used, data, caplen);
	f->held[f->nheld++] = (struct feed_held){ caplen, wire, time_ns, f->hold_used };
	f->hold_used += caplen;
	return 0;
}

/* The source's copies are not the wire's bytes: the program checks no ICRC of theirs. */
static int icrc_off(struct feed *f)
{
	int fd = bpf_map__fd(replay_skel(f->r)->maps.settings);
	struct roceval_settings cfg;
	int err = roceval_settings_read(fd, &cfg);

	if (!err) {
		cfg.icrc_sample = 0;
		err = roceval_settings_write(fd, &cfg);
	}
	if (err) {
		pr_warn("%s: Couldn't turn ICRC checking off: %s", f->name, strerror(-err));
		return err;
	}
	snprintf(f->st.hosts, sizeof(f->st.hosts), "%s", feed_probe_hosts(f->probe));
	printf("%s: the copies are not the wire's bytes: every ICRC fails, both ways between %s (a capture "
	       "path that rewrites frames, as the mlx5 sniffer does); checking is off for this feed "
	       "(icrc_sample=off)\n",
	       f->name, f->st.hosts);
	return 0;
}

/* The verdict on the source, then every frame held run in order. */
static int decide(struct feed *f, enum feed_icrc verdict)
{
	int err = 0;

	f->st.icrc = verdict;
	if (verdict == FEED_ICRC_ARTEFACT)
		err = icrc_off(f);
	for (__u32 i = 0; i < f->nheld && !err; i++)
		err = run_frame(f, f->hold + f->held[i].off, f->held[i].caplen, f->held[i].wire, f->held[i].time_ns);
	free(f->hold);
	free(f->held);
	f->hold = NULL;
	f->held = NULL;
	f->hold_used = f->hold_size = 0;
	f->nheld = 0;
	return err ?: feed_state_write(f);
}

int feed_frame(struct feed *f, const void *data, __u32 caplen, __u32 wire, __u64 time_ns)
{
	enum feed_icrc v = FEED_ICRC_DECIDING;
	int err;

	pthread_mutex_lock(&f->lock);
	err = f->err;
	if (!err && f->st.icrc == FEED_ICRC_DECIDING &&
	    /* what comes before the first RoCEv2 frame (a sniffer's ARP, TCP) cannot tell, nor wait */
	    (feed_probe_frame(f->probe, data, caplen, wire, &v) || f->nheld)) {
		err = hold(f, data, caplen, wire, time_ns);
		if (!err && (v != FEED_ICRC_DECIDING || f->nheld == FEED_HOLD_FRAMES))
			err = decide(f, v == FEED_ICRC_DECIDING ? FEED_ICRC_UNPROVEN : v);
	} else if (!err) {
		err = run_frame(f, data, caplen, wire, time_ns);
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

/* Every tick: an undecided source held too long is checked, what is queued runs, the state is written. */
static void *ticker(void *arg)
{
	struct feed *f = arg;
	struct timespec next;

	pthread_mutex_lock(&f->lock);
	while (!f->quit) {
		clock_gettime(CLOCK_REALTIME, &next);
		next.tv_nsec += FEED_TICK_MS * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&f->wake, &f->lock, &next) != ETIMEDOUT || f->err)
			continue;
		if (f->nheld && since(&f->hold_since) * 1000 >= FEED_HOLD_MS)
			f->err = decide(f, FEED_ICRC_UNPROVEN);
		if (!f->err)
			f->err = replay_flush(f->r);
		if (!f->err)
			feed_state_write(f);
		if (!f->detached && pin_dir_ino(f->name) != f->dir_ino) {
			/* counting on where no command can read it would be counting for nobody */
			f->detached = true;
			feed_stop = 1;
			pthread_kill(f->reader, SIGTERM);
		}
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int feed_start(struct feed *f)
{
	sigset_t stop, old;
	int err;

	/* SIGINT and SIGTERM go to the thread that reads, whose read they interrupt */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	f->reader = pthread_self();
	err = pthread_create(&f->ticker, NULL, ticker, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_warn("Couldn't start the feed's ticker: %s", strerror(err));
		return -err;
	}
	f->ticking = true;
	return 0;
}

int feed_close(struct feed *f, enum feed_end *end, unsigned long long *frames)
{
	int err;

	if (f->ticking) {
		pthread_mutex_lock(&f->lock);
		f->quit = true;
		pthread_cond_signal(&f->wake);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->ticker, NULL);
	}
	err = f->err;
	if (!err && f->nheld)
		err = decide(f, FEED_ICRC_UNPROVEN);
	/* the stream is over: what only a later frame of it could settle is settled */
	if (!err)
		err = replay_finish(f->r);
	if (f->detached)
		*end = FEED_END_DETACHED;
	else if (err)
		*end = FEED_END_FAILED;
	f->st.end = *end;
	feed_state_write(f);
	*frames = f->st.frames;
	replay_free(f->r);
	close(f->state_fd);
	feed_probe_free(f->probe);
	free(f->hold);
	free(f->held);
	free(f);
	return err;
}
