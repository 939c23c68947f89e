// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * feed --rdma: the NIC's own copy of its RoCE traffic, as libpcap's rdma
 * sniffer takes it, without a libpcap built for it: a raw-packet QP on the
 * device and an IBV_FLOW_ATTR_SNIFFER flow rule steering every frame the
 * port sends and receives into its receive queue.  Where the device stamps
 * completions with the wall clock, the stamps are the frames' times.
 *
 * Written against rdma-core's documented verbs API; it has not been run on
 * RDMA hardware (see docs/live.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feeder.h"
#include "log.h"

#ifdef ROCEVAL_IBVERBS
#include <poll.h>
#include <time.h>
#include <linux/capability.h>
#include <infiniband/verbs.h>

#include "caps.h"

/* Receive buffers: the ring the NIC fills; a burst beyond it is dropped, uncounted. */
#define RDMA_BUFS 512
#define RDMA_BUF_SIZE 16384

struct feed_rdma {
	char what[64];
	struct ibv_context *ctx;
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	struct ibv_mr *mr;
	unsigned char *buf;
	bool wallclock;
};

static struct ibv_context *open_device(const char *dev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev)) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				pr_warn("feed --rdma %s: Couldn't open the device: %s", dev, strerror(errno));
			ibv_free_device_list(list);
			return ctx;
		}
	if (list)
		ibv_free_device_list(list);
	pr_warn("feed --rdma %s: no such RDMA device (ibv_devices lists them)", dev);
	return NULL;
}

/* The completion queue, with the wall-clock completion stamp where the device gives it. */
static int make_cq(struct feed_rdma *s)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = RDMA_BUFS,
		.channel = s->chan,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};

	s->cq = ibv_create_cq_ex(s->ctx, &attr);
	s->wallclock = s->cq;
	if (!s->cq) {
		attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
		s->cq = ibv_create_cq_ex(s->ctx, &attr);
	}
	return s->cq ? 0 : -errno;
}

static int make_qp(struct feed_rdma *s, unsigned int port)
{
	struct ibv_cq *cq = ibv_cq_ex_to_cq(s->cq);
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = RDMA_BUFS, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RAW_PACKET,
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = port };

	s->qp = ibv_create_qp(s->pd, &init);
	if (!s->qp)
		return -errno;
	if (ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PORT))
		return -errno;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	return ibv_modify_qp(s->qp, &attr, IBV_QP_STATE) ? -errno : 0;
}

static int post(struct feed_rdma *s, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + (size_t)i * RDMA_BUF_SIZE), RDMA_BUF_SIZE, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad) ? -errno : 0;
}

/* The queues, the receive ring posted, then the sniffer rule that fills it. */
static int setup(struct feed_rdma *s, unsigned int port)
{
	struct ibv_flow_attr rule = { .type = IBV_FLOW_ATTR_SNIFFER, .size = sizeof(rule), .port = port };
	int err;

	if (!(s->chan = ibv_create_comp_channel(s->ctx)) || !(s->pd = ibv_alloc_pd(s->ctx)))
		return -errno;
	if ((err = make_cq(s)) || (err = make_qp(s, port)))
		return err;
	s->buf = malloc((size_t)RDMA_BUFS * RDMA_BUF_SIZE);
	if (!s->buf)
		return -ENOMEM;
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)RDMA_BUFS * RDMA_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return -errno;
	for (unsigned int i = 0; i < RDMA_BUFS; i++)
		if ((err = post(s, i)))
			return err;
	s->flow = ibv_create_flow(s->qp, &rule);
	if (!s->flow)
		return -errno;
	return ibv_req_notify_cq(ibv_cq_ex_to_cq(s->cq), 0) ? -errno : 0;
}

int feed_rdma_open(const char *dev, unsigned int port, struct feed_rdma **out, enum feed_clock *clock)
{
	struct feed_rdma *s;
	int err;

	if (!caps_have(CAP_NET_RAW) || !caps_have(CAP_NET_ADMIN)) {
		pr_warn("feed --rdma %s: the sniffer needs CAP_NET_RAW and CAP_NET_ADMIN; run as root", dev);
		return -EPERM;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->what, sizeof(s->what), "%s:%u", dev, port);
	s->ctx = open_device(dev);
	if (!s->ctx) {
		free(s);
		return -ENODEV;
	}
	err = setup(s, port);
	if (err) {
		pr_warn("feed --rdma %s: Couldn't set up the sniffer: %s%s", s->what, strerror(-err),
			err == -EPERM || err == -EACCES ? " (it needs CAP_NET_RAW and CAP_NET_ADMIN)"
			: err == -EOPNOTSUPP || err == -EINVAL ? " (the device or its firmware offers no sniffer rule)"
							       : "");
		feed_rdma_close(s);
		return -EIO; /* said: -EOPNOTSUPP is for a build without the sniffer */
	}
	*clock = s->wallclock ? FEED_CLOCK_NIC : FEED_CLOCK_POLL;
	*out = s;
	return 0;
}

/* Every completion there is into the feed, each buffer posted again; 0 or -errno. */
static int drain(struct feed *f, struct feed_rdma *s, const char **msg)
{
	struct ibv_poll_cq_attr attr = {};
	int ret = ibv_start_poll(s->cq, &attr);

	if (ret == ENOENT)
		return 0;
	for (; !ret; ret = ibv_next_poll(s->cq)) {
		unsigned int i = s->cq->wr_id, len;
		struct timespec now;
		int err = 0;

		/* a failed completion (a frame larger than a buffer) only gives its buffer back */
		if (s->cq->status == IBV_WC_SUCCESS) {
			clock_gettime(CLOCK_REALTIME, &now);
			len = ibv_wc_read_byte_len(s->cq);
			err = feed_frame(f, s->buf + (size_t)i * RDMA_BUF_SIZE, len, len,
					 s->wallclock ? ibv_wc_read_completion_wallclock_ns(s->cq)
						      : now.tv_sec * 1000000000ULL + now.tv_nsec);
		}
		err = err ?: post(s, i);
		if (err) {
			ibv_end_poll(s->cq);
			*msg = strerror(-err);
			return err;
		}
	}
	ibv_end_poll(s->cq);
	return ret == ENOENT ? 0 : -ret;
}

enum feed_end feed_rdma_run(struct feed *f, struct feed_rdma *s, const char **msg)
{
	struct pollfd pfd = { .fd = s->chan->fd, .events = POLLIN };

	while (!feed_stop) {
		struct ibv_cq *cq;
		void *ctx;

		if (drain(f, s, msg))
			return FEED_END_FAILED;
		if (poll(&pfd, 1, FEED_TICK_MS) <= 0)
			continue;
		if (ibv_get_cq_event(s->chan, &cq, &ctx) || ibv_req_notify_cq(cq, 0)) {
			*msg = strerror(errno);
			return FEED_END_FAILED;
		}
		ibv_ack_cq_events(cq, 1);
	}
	return FEED_END_STOPPED;
}

void feed_rdma_close(struct feed_rdma *s)
{
	if (!s)
		return;
	if (s->flow)
		ibv_destroy_flow(s->flow);
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq));
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->chan)
		ibv_destroy_comp_channel(s->chan);
	ibv_close_device(s->ctx);
	free(s->buf);
	free(s);
}

#else /* a build without libibverbs: the option says so */

int feed_rdma_open(const char *dev, unsigned int port, struct feed_rdma **out, enum feed_clock *clock)
{
	pr_warn("feed: --rdma is unavailable: this roceval was built without libibverbs (install "
		"libibverbs-dev and rebuild)");
	return -EOPNOTSUPP;
}

enum feed_end feed_rdma_run(struct feed *f, struct feed_rdma *s, const char **msg)
{
	*msg = strerror(EOPNOTSUPP);
	return FEED_END_FAILED;
}

void feed_rdma_close(struct feed_rdma *s)
{
}

#endif
