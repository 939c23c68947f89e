// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Replay runs batches of frames through BPF_PROG_TEST_RUN on a worker
 * thread while the caller reads and queues the next batch: reading the
 * capture and validating it overlap.  Batches still run one at a time, in
 * order, so what the program sees is the capture's order exactly.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common.h"
#include "counters.h"
#include "loader.h"
#include "replay.h"

struct batch {
	__u32 nframes;
	size_t used;
	unsigned char data[ROCEVAL_BATCH_BYTES];
};

struct replay {
	struct roceval_bpf *skel;
	int prog_fd;
	struct batch *fill;   /* what replay_frame() adds to */
	struct batch *spare;  /* the other buffer, when the worker is done with it */
	struct batch *queued; /* handed to the worker; NULL when it is idle */
	int err;	      /* the worker's first error, reported from then on */
	bool quit;
	bool started;
	pthread_t worker;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static int run_batch(int prog_fd, struct batch *b)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	size_t size = b->used;
	int err;

	memcpy(b->data, &b->nframes, 4); /* the host is little-endian, as BPF on it is */
	if (size < 64) {		 /* test runs refuse frames shorter than Ethernet's minimum */
		memset(b->data + size, 0, 64 - size);
		size = 64;
	}
	opts.data_in = b->data;
	opts.data_size_in = size;
	opts.repeat = 1;
	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err) {
		err = -errno;
		pr_warn("Couldn't run the replay program: %s", strerror(-err));
		return err;
	}
	if (opts.retval != b->nframes) {
		pr_warn("replay batch validated %u of %u frames", opts.retval, b->nframes);
		return -EPROTO;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct replay *r = arg;
	struct batch *b;
	int err;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->queued && !r->quit)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->queued)
			break;
		b = r->queued;
		pthread_mutex_unlock(&r->lock);
		err = r->err ? 0 : run_batch(r->prog_fd, b);
		pthread_mutex_lock(&r->lock);
		if (err && !r->err)
			r->err = err;
		r->queued = NULL;
		r->spare = b;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * Per-CPU state in the program, the icrc_sample countdown above all, then
 * behaves as on one CPU whatever the scheduler does: pin the worker to the
 * CPU the replay started on.
 */
static void pin_worker(struct replay *r)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(r->worker, sizeof(set), &set);
}

struct replay *replay_new(const struct roceval_settings *cfg)
{
	struct replay *r = calloc(1, sizeof(*r));
	int err;

	if (r) {
		r->fill = malloc(sizeof(*r->fill));
		r->spare = malloc(sizeof(*r->spare));
	}
	if (!r || !r->fill || !r->spare) {
		pr_warn("Couldn't allocate the replay buffers: %s", strerror(errno));
		replay_free(r);
		return NULL;
	}
	r->fill->nframes = 0;
	r->fill->used = 4;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->skel = roceval_load(LOAD_REPLAY, false);
	if (!r->skel) {
		replay_free(r);
		return NULL;
	}
	err = roceval_settings_write(bpf_map__fd(r->skel->maps.settings), cfg);
	if (err) {
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
		replay_free(r);
		return NULL;
	}
	r->prog_fd = bpf_program__fd(r->skel->progs.roceval_replay);
	err = pthread_create(&r->worker, NULL, worker, r);
	if (err) {
		pr_warn("Couldn't start the replay thread: %s", strerror(err));
		replay_free(r);
		return NULL;
	}
	r->started = true;
	pin_worker(r);
	return r;
}

/* Hands the filled batch to the worker once it is idle, and takes the other buffer. */
static int submit(struct replay *r)
{
	int err;

	pthread_mutex_lock(&r->lock);
	while (r->queued)
		pthread_cond_wait(&r->cond, &r->lock);
	err = r->err;
	if (!err) {
		r->queued = r->fill;
		r->fill = r->spare;
		r->spare = NULL;
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	r->fill->nframes = 0;
	r->fill->used = 4;
	return err;
}

int replay_flush(struct replay *r)
{
	int err = 0;

	if (r->fill->nframes)
		err = submit(r);
	pthread_mutex_lock(&r->lock);
	while (r->queued)
		pthread_cond_wait(&r->cond, &r->lock);
	if (!err)
		err = r->err;
	pthread_mutex_unlock(&r->lock);
	return err;
}

int replay_frame(struct replay *r, const void *data, size_t len)
{
	struct batch *b = r->fill;
	__u32 len32;
	int err;

	/* A frame larger than a batch is cut to what fits: its IP length then tells it was cut. */
	if (len > sizeof(b->data) - 8)
		len = sizeof(b->data) - 8;
	if (b->nframes == ROCEVAL_BATCH_MAX_FRAMES || b->used + 4 + len > sizeof(b->data)) {
		err = submit(r);
		if (err)
			return err;
		b = r->fill;
	}
	len32 = len;
	memcpy(b->data + b->used, &len32, 4);
	memcpy(b->data + b->used + 4, data, len);
	b->used += 4 + len;
	b->nframes++;
	return 0;
}

int replay_counters_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.counters);
}

int replay_counters(struct replay *r, struct roceval_counters *out)
{
	int err = counters_read(replay_counters_fd(r), out);

	if (err)
		pr_warn("Couldn't read the counters: %s", strerror(-err));
	return err;
}

int replay_flows_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.flows);
}

struct roceval_bpf *replay_skel(struct replay *r)
{
	return r->skel;
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->lock);
		r->quit = true;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->worker, NULL);
	}
	roceval_bpf__destroy(r->skel);
	free(r->fill);
	free(r->spare);
	free(r);
}
