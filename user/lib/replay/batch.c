// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "batch.h"
#include "live/loader.h"
#include "log.h"
#include "report/report.h"
#include "reset.h"
#include "roceval.skel.h"

struct replay {
	struct roceval_bpf *skel;
	struct map_reset *reset;
	int prog_fd;
	bool pinned;
	cpu_set_t cpus; /* the thread's affinity before the replay */
	__u32 nframes;
	size_t used;
	unsigned char batch[ROCEVAL_BATCH_BYTES];
};

/*
 * Per-CPU state in the program, the icrc_sample countdown above all, then
 * behaves as on one CPU whatever the scheduler would do between batches:
 * the thread stays on the CPU the replay started on until replay_free().
 */
static void pin(struct replay *r)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	if (cpu < 0 || sched_getaffinity(0, sizeof(r->cpus), &r->cpus))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	r->pinned = !sched_setaffinity(0, sizeof(one), &one);
}

/* A replay of captures, its arrays made mappable before the load so that replay_reset() is a memset. */
struct replay *replay_new(const struct roceval_settings *cfg)
{
	struct roceval_bpf *skel = roceval_open(LOAD_REPLAY, false);
	struct replay *r;

	if (!skel)
		return NULL;
	map_reset_prepare(skel);
	if (roceval_load_opened(skel))
		return NULL;
	r = replay_from(skel, cfg);
	if (!r)
		return NULL;
	r->reset = map_reset_new(skel);
	if (!r->reset) {
		replay_free(r);
		return NULL;
	}
	return r;
}

struct replay *replay_from(struct roceval_bpf *skel, const struct roceval_settings *cfg)
{
	struct replay *r = calloc(1, sizeof(*r));
	int err;

	if (!r) {
		pr_warn("Couldn't allocate the replay buffer: %s", strerror(errno));
		roceval_bpf__destroy(skel);
		return NULL;
	}
	r->skel = skel;
	err = roceval_settings_write(bpf_map__fd(r->skel->maps.settings), cfg);
	if (err) {
		pr_warn("Couldn't write the settings map: %s", strerror(-err));
		replay_free(r);
		return NULL;
	}
	r->prog_fd = bpf_program__fd(r->skel->progs.roceval_replay);
	r->used = 4;
	pin(r);
	return r;
}

int replay_flush(struct replay *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	size_t size = r->used;
	int err;

	if (!r->nframes)
		return 0;
	memcpy(r->batch, &r->nframes, 4); /* the host is little-endian, as BPF on it is */
	if (size < 64) {		   /* test runs refuse frames shorter than Ethernet's minimum */
		memset(r->batch + size, 0, 64 - size);
		size = 64;
	}
	opts.data_in = r->batch;
	opts.data_size_in = size;
	opts.repeat = 1;
	err = bpf_prog_test_run_opts(r->prog_fd, &opts);
	if (err) {
		err = -errno;
		pr_warn("Couldn't run the replay program: %s", strerror(errno));
		return err;
	}
	if (opts.retval != r->nframes) {
		pr_warn("replay batch validated %u of %u frames", opts.retval, r->nframes);
		return -EPROTO;
	}
	r->nframes = 0;
	r->used = 4;
	return 0;
}

int replay_finish(struct replay *r)
{
	/* a frame, for the test run's sake: the program reads none */
	unsigned char frame[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame), .repeat = 1);
	int err = replay_flush(r);

	if (err)
		return err;
	if (bpf_prog_test_run_opts(bpf_program__fd(r->skel->progs.roceval_replay_end), &opts)) {
		err = -errno;
		pr_warn("Couldn't run the end of the replay: %s", strerror(errno));
	}
	return err;
}

int replay_frame(struct replay *r, const void *data, size_t len, __u32 wire, __u64 time_ns)
{
	__u32 rec[2];
	int err;

	/* A frame larger than a batch is cut to what fits: it then counts as snapped. */
	if (len > sizeof(r->batch) - 4 - ROCEVAL_REC_HDR)
		len = sizeof(r->batch) - 4 - ROCEVAL_REC_HDR;
	if (r->nframes == ROCEVAL_BATCH_MAX_FRAMES ||
	    r->used + ROCEVAL_REC_HDR + len > sizeof(r->batch)) {
		err = replay_flush(r);
		if (err)
			return err;
	}
	rec[0] = len;
	rec[1] = wire > len ? wire : len;
	memcpy(r->batch + r->used, rec, sizeof(rec));
	memcpy(r->batch + r->used + sizeof(rec), &time_ns, sizeof(time_ns));
	memcpy(r->batch + r->used + ROCEVAL_REC_HDR, data, len);
	r->used += ROCEVAL_REC_HDR + len;
	r->nframes++;
	return 0;
}

int replay_reset(struct replay *r)
{
	return map_reset_run(r->reset);
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

int replay_flow_sets_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.flow_sets);
}

int replay_flow_cold_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.flow_cold);
}

int replay_latency_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.latency);
}

int replay_congestion_fd(struct replay *r)
{
	return bpf_map__fd(r->skel->maps.congestion);
}

void replay_cm_fds(struct replay *r, int *conns_fd, int *ends_fd, int *rej_fd)
{
	*conns_fd = bpf_map__fd(r->skel->maps.cm_conns);
	*ends_fd = bpf_map__fd(r->skel->maps.cm_ends);
	*rej_fd = bpf_map__fd(r->skel->maps.cm_rej_reasons);
}

struct mirror_fds replay_mirror_fds(struct replay *r)
{
	return mirror_fds_of(r->skel->obj);
}

struct roceval_bpf *replay_skel(struct replay *r)
{
	return r->skel;
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	if (r->pinned)
		sched_setaffinity(0, sizeof(r->cpus), &r->cpus);
	map_reset_free(r->reset);
	roceval_bpf__destroy(r->skel);
	free(r);
}
