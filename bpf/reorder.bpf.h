/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Reordering told from loss (docs/sequence.md, "Reordering"): each request flow keeps,
 * while its requests are out of order, a window of the PSNs behind the
 * newest it saw (struct roceval_flow_window).  A request ahead of the
 * expected PSN leaves holes there instead of counting a psn_gap; a request
 * that fills a hole is reordered, unless the request after it shows a
 * go-back starting there (a NAK the observer did not see); a hole becomes
 * one psn_gap per run of PSNs when it leaves the window, when a PSN
 * sequence error NAK comes (any hole filled after one is a retransmission)
 * or a go-back passes over it, when it opened longer than reorder_time ago
 * (by its own age, not the newest hole's: as it is filled, or live by a
 * timer), when the flow is evicted, or when a replay ends.
 *
 * What is settled later than its frame (psn_gap, opcode_sequence across a
 * gap, psn_reorder of requests, the uncompared retries of a late go-back)
 * is counted on the totals and the flow, not as a rule the frame broke, so
 * trace does not sample it; flow_evicted is counted the same way.
 *
 * In order, a flow never reaches its window: the hot path pays a test of
 * SPACE_WINDOW.  Responses keep bits of their own (flow.bpf.h).
 */
#ifndef ROCEVAL_REORDER_BPF_H
#define ROCEVAL_REORDER_BPF_H

#include "clock.bpf.h"
#include "flow_table.bpf.h"
#include "frame.bpf.h"
#include "tally.bpf.h"

/* One slot a flow, at its cold slot; sized with the flow table by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_flow_window);
} flow_window SEC(".maps");

/*
 * Live, a flow that goes idle with holes open would keep them open until it
 * sends again, and its losses uncounted: a timer settles the holes older
 * than reorder_time.  A bit a slot says which windows may hold some (set
 * as one opens, cleared by the timer once it is empty, both under the
 * window's lock), so that a pass reads a few KB rather than the flow
 * table.  A replay settles them at its end.  The timer runs on any CPU,
 * while a frame of the flow may be judged on another: each entry point
 * below changes a window only under its lock, and the timer writes
 * nothing of the flow's own state.
 */
#define SWEEP_NS 10000000ULL /* between passes, while a window is open */
#define CLOCK_MONOTONIC 1

/* Set by the loader with the flow table's size: 64-bit words of window_open. */
const volatile __u32 window_words = 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} window_open SEC(".maps");

/* Word k of window_open, off the frame's common path: rare_lookup (frame.bpf.h). */
static __noinline __u64 *window_word(__u32 k)
{
	return rare_lookup(&window_open, &k);
}

struct reorder_sweep {
	struct bpf_timer timer;
	__u32 armed;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct reorder_sweep);
} reorder_sweep SEC(".maps");

/*
 * x in a register of its own, to compare.  Under BPF v3 clang compares the
 * live 32-bit register, the verifier narrows its range on each side of the
 * branch, and states that differ in those ranges alone no longer meet again
 * (roceval_reorder_ahead: 42k instructions checked, 7k through copies).  The
 * xor gives a copy the verifier does not tie to x; one a compare, since a
 * copy kept for several would be narrowed in turn (and take stack the
 * deepest call chain does not have).
 */
static __always_inline __u32 cmp_copy(__u32 x)
{
	asm volatile("%0 ^= 0" : "+r"(x));
	return x;
}

/* 128 bits of a window, bit i for PSN next_psn - 2 - i: i + 1 behind the newest. */
struct bits {
	__u64 lo, hi;
};

static __always_inline struct bits bits_shl(struct bits b, __u32 n)
{
	struct bits r = {};

	if (n >= 64) {
		/* n >= 128 shifts everything out: a mask, not a branch */
		r.hi = (b.lo << (n & 63)) & (__u64)(((__s64)n - 128) >> 63);
		return r;
	}
	/* the low word's bits carried up, in two shifts so that n = 0 carries none */
	r.hi = b.hi << n | (b.lo >> 1) >> (63 - n);
	r.lo = b.lo << n;
	return r;
}

/* bit i becomes bit i of its older neighbour (i + 1) */
static __always_inline struct bits bits_older(struct bits b)
{
	return (struct bits){ b.lo >> 1 | b.hi << 63, b.hi >> 1 };
}

/*
 * Bits 0 .. k-1 of a word (none for k <= 0, all for k >= 64) as arithmetic:
 * with no branch the verifier walks it once, not once per range of k (31k
 * of roceval_reorder_ahead's 53k instructions).  bits_shl keeps its
 * branches: without them it spills, and the deepest chain outgrows the stack.
 */
static __always_inline __u64 bits_word_below(__u64 k)
{
	__u64 pos = ~(__u64)((__s64)(k - 1) >> 63), full = ~(__u64)((__s64)(k - 64) >> 63);

	return (((1ULL << (k & 63)) - 1) & pos) | full;
}

/* Bits 0 .. n-1. */
static __always_inline struct bits bits_below(__u32 n)
{
	return (struct bits){ bits_word_below(n), bits_word_below((__s64)n - 64) };
}

static __always_inline struct bits bits_and(struct bits a, struct bits b)
{
	return (struct bits){ a.lo & b.lo, a.hi & b.hi };
}

static __always_inline struct bits bits_or(struct bits a, struct bits b)
{
	return (struct bits){ a.lo | b.lo, a.hi | b.hi };
}

static __always_inline struct bits bits_not(struct bits a)
{
	return (struct bits){ ~a.lo, ~a.hi };
}

static __always_inline bool bits_test(struct bits b, __u32 i)
{
	return i < 64 ? (b.lo >> i) & 1 : i < 128 ? (b.hi >> (i - 64)) & 1 : 0;
}

static __always_inline __u32 bits_count(struct bits b)
{
	return __builtin_popcountll(b.lo) + __builtin_popcountll(b.hi);
}

static __always_inline __u32 msb64(__u64 x)
{
	__u32 r = 0;

#pragma unroll
	for (int sh = 32; sh; sh >>= 1) {
		if (x >> sh) {
			x >>= sh;
			r += sh;
		}
	}
	return r;
}

/* The highest bit set (b not empty). */
static __always_inline __u32 bits_top(struct bits b)
{
	return b.hi ? 64 + msb64(b.hi) : msb64(b.lo);
}

/* reorder_window, within what the window holds; 0: strict. */
static __always_inline __u32 reorder_win(const struct roceval_settings *cfg)
{
	return cfg->reorder_window < ROCEVAL_REORDER_MAX ? cfg->reorder_window : ROCEVAL_REORDER_MAX;
}

/*
 * What a flow's window is judged with, found from the flow's slot: the
 * entry points below are global functions taking scalars, so the verifier
 * checks each once rather than at every call in the frame's paths.  They
 * change the window under its lock, where no helper may run: what they
 * settle is tallied, and counted once the lock is let go.  reorder_ctx is
 * one copy, not one in every entry point.
 */
struct reorder_ctx {
	struct roceval_flow *f;
	struct roceval_flow_window *w;
	__u64 now;
	__u64 aged;		    /* reorder_time, in ns */
	__u16 win;
	__u16 gaps, seqs;	    /* psn_gap and opcode_sequence settled */
	__u8 reorder_lo, reorder_n; /* requests settled reordered, by lo .. lo + n - 1 PSNs */
};

static __noinline bool reorder_ctx(__u32 slot, struct reorder_ctx *c)
{
	const struct roceval_settings *cfg = settings_get();

	c->f = flow_at(slot);
	c->w = rare_lookup(&flow_window, &slot);
	if (!cfg || !c->f || !c->w)
		return false;
	c->win = reorder_win(cfg);
	c->aged = cfg->reorder_time * 1000ULL;
	c->now = 0;
	c->gaps = c->seqs = c->reorder_n = c->reorder_lo = 0;
	return true;
}

/* What c settled, counted (tally.bpf.h). */
static __always_inline void reorder_tally(__u32 slot, const struct reorder_ctx *c)
{
	roceval_reorder_tally(slot, c->gaps, c->seqs, c->reorder_lo | (__u32)c->reorder_n << 8);
}

static __always_inline struct bits window_missing(const struct roceval_flow_window *w)
{
	return (struct bits){ w->missing[0], w->missing[1] };
}

static __always_inline void window_set_missing(struct roceval_flow_window *w, struct bits m)
{
	w->missing[0] = m.lo;
	w->missing[1] = m.hi;
}

/*
 * The runs of holes in region r of the window: one psn_gap for each whose
 * oldest PSN is in r (a run going on past r, older, is counted where it
 * ends; the bit past the window says whether one went on past it), and
 * one opcode_sequence for each whose newest PSN is in r and flagged in q:
 * the request after it would break its message were the run lost.
 */
static __always_inline void window_count(struct reorder_ctx *c, struct bits m, struct bits q, struct bits r)
{
	struct bits oldest = bits_and(bits_and(m, bits_not(bits_older(m))), r);
	struct bits newest = bits_and(bits_and(m, bits_not(bits_shl(m, 1))), bits_and(q, r));

	c->gaps += bits_count(oldest);
	c->seqs += bits_count(newest);
}

/* The holes at bits 0 .. top are losses, and cleared; top at the window's end or past: all of them. */
static __always_inline void window_settle(struct reorder_ctx *c, __u32 top)
{
	struct roceval_flow_window *w = c->w;
	struct bits m = window_missing(w), q = { w->seq[0], w->seq[1] };
	bool all = top + 1 >= c->win;

	window_count(c, m, q, bits_below(all ? c->win : top + 1));
	window_set_missing(w, all ? (struct bits){} : bits_and(m, bits_not(bits_below(top + 1))));
}

/* The holes at bits lo and older are losses, and cleared with the bit past the window. */
static __always_inline void window_settle_older(struct reorder_ctx *c, __u32 lo)
{
	struct roceval_flow_window *w = c->w;
	struct bits m = window_missing(w), q = { w->seq[0], w->seq[1] }, keep = bits_below(lo);

	window_count(c, m, q, bits_and(bits_below(c->win), bits_not(keep)));
	window_set_missing(w, bits_and(m, keep));
}

/* The fills awaiting their verdict were reordered: they came before anything went back over them. */
static __always_inline void window_fills_reordered(struct reorder_ctx *c)
{
	struct roceval_flow_window *w = c->w;
	__u32 newest = (c->f->req.next_psn - 1) & ROCE_PSN_MASK;
	__u32 fills = w->fills;

	if (!fills)
		return;
	w->fills = 0;
	/* consecutive single-PSN fills come 1 PSN closer each; a READ's fill is one, at its own PSN */
	if (((w->fill_next - w->fill_from) & ROCE_PSN_MASK) != fills)
		fills = 1;
	c->reorder_lo = (newest - w->fill_from - (fills - 1)) & ROCE_PSN_MASK;
	c->reorder_n = fills;
}

/* No hole in the window and no fill awaiting its verdict. */
static __always_inline bool window_empty(const struct reorder_ctx *c)
{
	struct bits m = bits_and(window_missing(c->w), bits_below(c->win));

	return !m.lo && !m.hi && !c->w->fills;
}

/* Nothing left to settle: the flow's requests no longer reach the window. */
static __always_inline void window_close_if_empty(struct reorder_ctx *c)
{
	if (window_empty(c))
		c->f->req.state &= ~SPACE_WINDOW;
}

/* Whether `since` is longer than reorder_time before the frame (never with reorder_time 0). */
static __always_inline bool window_aged(const struct reorder_ctx *c, __u64 since)
{
	return c->aged && (__s64)(c->now - since) > (__s64)c->aged;
}

/* The frame's time after old_ns, in young_t's units: 0 before it, saturated some 70 minutes after. */
static __always_inline __u32 window_offset(const struct reorder_ctx *c)
{
	__s64 d = c->now - c->w->old_ns;

	if (d <= 0)
		return 0;
	d >>= ROCEVAL_WINDOW_TIME_SHIFT;
	return d > 0xFFFFFFFFLL ? 0xFFFFFFFF : d;
}

static __always_inline __u64 window_young_ns(const struct roceval_flow_window *w)
{
	return w->old_ns + ((__u64)w->young_t << ROCEVAL_WINDOW_TIME_SHIFT);
}

/* The young holes' age becomes the oldest. */
static __always_inline void window_promote(struct roceval_flow_window *w)
{
	w->old_ns = window_young_ns(w);
	w->fill_t = w->fill_t > w->young_t ? w->fill_t - w->young_t : 0;
	w->young_top = ROCEVAL_WINDOW_ONE_AGE;
}

/*
 * The two ages made to fit the holes at bits `from` and older: with no
 * older hole open the young ones' age becomes the oldest, and with none of
 * theirs it goes.
 */
static __always_inline void window_ages_from(struct reorder_ctx *c, __u32 from)
{
	struct roceval_flow_window *w = c->w;
	struct bits m, y;

	if (w->young_top == ROCEVAL_WINDOW_ONE_AGE)
		return;
	m = bits_and(bits_and(window_missing(w), bits_below(c->win)), bits_not(bits_below(from)));
	y = bits_and(m, bits_below(w->young_top + 1));
	if (!y.lo && !y.hi)
		w->young_top = ROCEVAL_WINDOW_ONE_AGE;
	else if (y.lo == m.lo && y.hi == m.hi)
		window_promote(w);
}

static __always_inline void window_ages(struct reorder_ctx *c)
{
	window_ages_from(c, 0);
}

/* The holes that opened longer than reorder_time before the frame are losses. */
static __always_inline void window_age(struct reorder_ctx *c)
{
	struct roceval_flow_window *w = c->w;

	if (!window_aged(c, w->old_ns))
		return;
	if (w->young_top != ROCEVAL_WINDOW_ONE_AGE && !window_aged(c, window_young_ns(w))) {
		window_settle_older(c, w->young_top + 1);
	} else {
		window_settle_older(c, 0);
		w->young_top = ROCEVAL_WINDOW_ONE_AGE;
	}
	window_ages(c);
}

/*
 * The holes of the flow in `slot` older than reorder_time are losses: before
 * a request jumps ahead, so that it finds the ages they took free.  Apart
 * from roceval_reorder_ahead, whose stack has no room for it.
 */
__noinline int roceval_reorder_age(__u32 slot)
{
	struct reorder_ctx c;

	if (!reorder_ctx(slot, &c) || !(c.f->req.state & SPACE_WINDOW))
		return 0;
	c.now = frame_time_ns();
	bpf_spin_lock(&c.w->lock);
	window_age(&c);
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	return 0;
}

/*
 * Settles the holes of the flow in `slot` at PSN `from` and after as
 * losses (the requester went back to it): the fills before them were
 * reordered.  Only a go-back comes here.
 */
__noinline int roceval_reorder_settle_from(__u32 slot, __u32 from)
{
	struct reorder_ctx c;
	__u32 i;

	if (!reorder_ctx(slot, &c) || !(c.f->req.state & SPACE_WINDOW))
		return 0;
	bpf_spin_lock(&c.w->lock);
	window_fills_reordered(&c);
	i = (c.f->req.next_psn - 2 - from) & ROCE_PSN_MASK;
	if (i < ROCE_PSN_WINDOW)
		window_settle(&c, i);
	window_ages(&c);
	window_close_if_empty(&c);
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	return 0;
}

/*
 * Every hole of the flow in `slot` a loss and every fill reordered: a NAK,
 * a replay's end, an eviction, a new connection on the flow's QP.
 */
__noinline int roceval_reorder_settle_all(__u32 slot)
{
	struct reorder_ctx c;

	if (!reorder_ctx(slot, &c) || !(c.f->req.state & SPACE_WINDOW))
		return 0;
	bpf_spin_lock(&c.w->lock);
	c.f->req.state &= ~SPACE_WINDOW;
	window_fills_reordered(&c);
	window_settle(&c, ROCEVAL_REORDER_MAX);
	c.w->young_top = ROCEVAL_WINDOW_ONE_AGE;
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	return 0;
}

/*
 * A request at next_psn + h consuming n PSNs moves the window on by
 * s = h + n: the h PSNs it jumped over are holes (bits n - 1 .. s - 2),
 * and what reaches `win` leaves, its runs counted.  `broken`: the request
 * would break its message were the holes before it lost, a flag on the
 * newest of them.
 */
static __always_inline void window_advance(struct reorder_ctx *c, __u32 h, __u32 n, bool broken)
{
	struct roceval_flow_window *w = c->w;
	struct bits m = window_missing(w), q = { w->seq[0], w->seq[1] };
	__u32 win = c->win, s = h + n, lo = cmp_copy(s) < cmp_copy(win) ? win - s : 0;
	bool marker;

	window_count(c, m, q, bits_and(bits_below(win), bits_not(bits_below(lo))));
	/* the PSN that lands just past the window: was it a hole? */
	marker = cmp_copy(s) <= cmp_copy(win) ? bits_test(m, win - s)
					      : cmp_copy(s) > cmp_copy(win) + 1 && cmp_copy(h) && cmp_copy(n) - 1 <= cmp_copy(win);
	/* holes past the window at once: one run, next to the PSN seen before them */
	if (cmp_copy(h) && cmp_copy(s) - 2 >= cmp_copy(win)) {
		c->gaps++;
		if (broken && cmp_copy(n) > cmp_copy(win))
			c->seqs++;
	}
	m = bits_and(bits_shl(m, s), bits_below(win));
	if (cmp_copy(h))
		m = bits_or(m, bits_and(bits_shl(bits_below(h), n - 1), bits_below(win)));
	if (marker)
		m = bits_or(m, bits_shl((struct bits){ 1, 0 }, win));
	q = bits_and(bits_shl(q, s), bits_below(win));
	if (broken && cmp_copy(h) && cmp_copy(n) - 1 < cmp_copy(win))
		q = bits_or(q, bits_shl((struct bits){ 1, 0 }, n - 1));
	window_set_missing(w, m);
	w->seq[0] = q.lo;
	w->seq[1] = q.hi;
	if (w->young_top != ROCEVAL_WINDOW_ONE_AGE)
		w->young_top = w->young_top + s < ROCEVAL_WINDOW_ONE_AGE ? w->young_top + s : ROCEVAL_WINDOW_ONE_AGE - 1;
}

/*
 * The holes a request opened, at bits up to s - 2, get their age: with no
 * older hole in the window, the oldest; else the young ones'.  Where the window keeps
 * two ages already, the two of the three closest in time become one, at
 * the older of them: a hole is taken for older than it is by at most half
 * the time from the oldest to the newest, and the holes older than
 * reorder_time are settled before a jump (roceval_reorder_age).
 */
static __always_inline void window_jumped(struct reorder_ctx *c, __u32 s)
{
	struct roceval_flow_window *w = c->w;
	struct bits own = bits_and(bits_and(window_missing(w), bits_below(c->win)), bits_not(bits_below(s)));

	if (!own.lo && !own.hi) {
		w->old_ns = c->now;
		w->young_top = ROCEVAL_WINDOW_ONE_AGE;
		return;
	}
	window_ages_from(c, s);
	if (w->young_top != ROCEVAL_WINDOW_ONE_AGE &&
	    c->now - window_young_ns(w) < window_young_ns(w) - w->old_ns)
		return;
	w->young_top = s - 2 < ROCEVAL_WINDOW_ONE_AGE ? s - 2 : ROCEVAL_WINDOW_ONE_AGE - 1;
	w->young_t = window_offset(c);
}

/*
 * The window of the flow in `slot`, on the live sweep: its holes older
 * than reorder_time are losses, and its fills, when the last came longer
 * than reorder_time ago, were reordered.  1 while it stays open; once
 * empty, its bit of window_open (`word`) is cleared under its lock, where
 * a request that opens it again sets it.  The flow's state is the frames'
 * to write: one that finds its window emptied here closes it.
 */
__noinline int roceval_reorder_idle(__u32 slot, __u64 *word)
{
	struct reorder_ctx c;
	bool open;

	if (!reorder_ctx(slot, &c))
		return 0;
	c.now = frame_time_ns();
	bpf_spin_lock(&c.w->lock);
	/* the bit may be a CE window's or a go-back's: a slot's window left behind by an evicted flow is not its own */
	open = c.f->req.state & SPACE_WINDOW;
	if (open) {
		window_age(&c);
		if (c.w->fills && window_aged(&c, c.w->old_ns + ((__u64)c.w->fill_t << ROCEVAL_WINDOW_TIME_SHIFT)))
			window_fills_reordered(&c);
		open = !window_empty(&c);
	}
	/* a CE window flags its flow before it sets the bit (slot_marked), so none is lost here */
	if (!open && !c.f->cc_wait && word)
		__sync_fetch_and_and(word, ~(1ULL << (slot & 63)));
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	return open;
}

struct sweep_state {
	__u64 *word; /* the word of window_open being swept */
	__u64 bits;  /* the windows it had */
	__u32 base;  /* the slot of its bit 0 */
	bool any;    /* a window is still open somewhere */
};

/* cnp.bpf.h: a CE window waiting on the slot's flow, judged if overdue; 1 while it waits */
int roceval_cc_idle(__u32 slot);

static long sweep_bit(__u64 b, void *ctx)
{
	struct sweep_state *st = ctx;
	__u32 slot = st->base + (b & 63);
	bool waits;

	if (!((st->bits >> (b & 63)) & 1))
		return 0;
	/* first, so that a CE window it settles lets the bit go in this pass */
	waits = roceval_cc_idle(slot);
	if (roceval_reorder_idle(slot, st->word) || waits)
		st->any = true;
	return 0;
}

/* One word of window_open: its windows settled as far as they have aged. */
static long sweep_word(__u64 i, void *ctx)
{
	struct sweep_state *st = ctx;
	__u32 k = i;
	__u64 *word = window_word(k);

	if (!word || !*word)
		return 0;
	st->word = word;
	st->bits = *word;
	st->base = k * 64;
	bpf_loop(64, sweep_bit, st, 0);
	return 0;
}

/* A pass over every window, again in SWEEP_NS while one is open. */
static int sweep_fire(void *map, __u32 *key, struct reorder_sweep *sw)
{
	struct sweep_state st = {};

	bpf_loop(window_words, sweep_word, &st, 0);
	if (st.any)
		bpf_timer_start(&sw->timer, SWEEP_NS, 0);
	else
		sw->armed = 0;
	return 0;
}

/*
 * A window opened: live, the sweep's timer armed if it is not.  This and
 * slot_marked are one copy each, their lookups and timer calls sites the
 * kernel patches at load once, not once for every caller.
 */
static __noinline void sweep_arm(void)
{
	__u32 zero = 0;
	struct reorder_sweep *sw;

	if (replay_clock)
		return;
	sw = rare_lookup(&reorder_sweep, &zero);
	if (!sw || sw->armed)
		return;
	sw->armed = 1;
	bpf_timer_init(&sw->timer, &reorder_sweep, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&sw->timer, sweep_fire);
	bpf_timer_start(&sw->timer, SWEEP_NS, 0);
}

/*
 * Something other than a reorder window waits on the flow in `slot`, for
 * the sweep or a replay's end to judge: a CE window (cnp.bpf.h), a go-back
 * awaiting its NAK's PSN (retx.bpf.h).  Its bit set outside any window's
 * lock: the waiter's own flag is set first, and the sweep reads that flag
 * before it lets a bit go.
 */
static __noinline void slot_marked(__u32 slot)
{
	__u64 *word = window_word(slot / 64);

	if (word)
		__sync_fetch_and_or(word, 1ULL << (slot & 63));
}

/*
 * A request at or ahead of the expected PSN of the flow in `slot`, whose
 * window is open or that jumps h > 0 PSNs, consuming n: the fills before it
 * were reordered, the holes aged past reorder_time lost, the window moves
 * on, and a jump into an empty window opens it.  In order, a flow whose
 * window is closed never comes here.
 */
__noinline int roceval_reorder_ahead(__u32 slot, __u32 h, __u32 n, __u32 broken)
{
	__u64 *word = window_word(slot / 64);
	struct reorder_ctx c;
	bool was_empty;

	if (!reorder_ctx(slot, &c))
		return 0;
	if (cmp_copy(h))
		c.now = frame_time_ns();
	bpf_spin_lock(&c.w->lock);
	if (!(c.f->req.state & SPACE_WINDOW)) {
		c.w->missing[0] = c.w->missing[1] = c.w->seq[0] = c.w->seq[1] = 0;
		c.w->fills = 0;
		c.w->young_top = ROCEVAL_WINDOW_ONE_AGE;
		c.f->req.state |= SPACE_WINDOW;
	}
	window_fills_reordered(&c);
	was_empty = window_empty(&c);
	window_advance(&c, h, n, broken);
	if (cmp_copy(h))
		window_jumped(&c, h + n);
	else
		window_ages(&c);
	window_close_if_empty(&c);
	/* the sweep clears the bit of a window it found empty, under this lock */
	was_empty = was_empty && !window_empty(&c);
	if (was_empty && word)
		__sync_fetch_and_or(word, 1ULL << (slot & 63));
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	if (was_empty)
		sweep_arm();
	return 0;
}

/*
 * Filled holes at `psn` and the n - 1 PSNs after it: the first missing
 * request PSN, which a NAK must name, moves on to the oldest hole left.
 */
static __always_inline void window_fill(struct reorder_ctx *c, __u32 psn, __u32 i, __u32 n)
{
	struct roceval_flow *f = c->f;
	struct bits m = window_missing(c->w), filled;

	n = n < i + 1 ? n : i + 1;
	filled = bits_and(bits_below(i + 1), bits_not(bits_below(i + 1 - n)));
	m = bits_and(m, bits_not(filled));
	window_set_missing(c->w, m);
	if (!(f->retx_missing & ROCEVAL_RETX_HELD) || ((f->retx_missing - psn) & ROCE_PSN_MASK) >= n)
		return;
	m = bits_and(m, bits_below(c->win));
	f->retx_missing = m.lo | m.hi ? ((f->req.next_psn - 2 - bits_top(m)) & ROCE_PSN_MASK) | ROCEVAL_RETX_HELD : 0;
}

/* The request at `psn` (consuming n) filled hole i: it awaits its verdict with the fills before it. */
static __always_inline void window_fill_wait(struct reorder_ctx *c, __u32 psn, __u32 i, __u32 n)
{
	struct roceval_flow_window *w = c->w;

	if (w->fills && psn == w->fill_next && n == 1 && ((w->fill_next - w->fill_from) & ROCE_PSN_MASK) == w->fills) {
		w->fills++;
	} else {
		window_fills_reordered(c);
		w->fill_from = psn;
		w->fills = 1;
	}
	w->fill_next = (psn + n) & ROCE_PSN_MASK;
	w->fill_t = window_offset(c);
	window_fill(c, psn, i, n);
}

/*
 * The fills awaiting their verdict were a go-back whose NAK this observer
 * did not see: the holes they filled are back, and settled as losses.
 * Returns how many; s->goback is the first | HELD.
 */
static __always_inline int window_fills_goback(struct reorder_ctx *c, struct roceval_scratch *s)
{
	struct roceval_flow_window *w = c->w;
	__u32 first = (c->f->req.next_psn - 2 - w->fill_from) & ROCE_PSN_MASK;
	__u32 last = (c->f->req.next_psn - 1 - w->fill_next) & ROCE_PSN_MASK;
	struct bits m = bits_or(window_missing(w), bits_and(bits_below(first + 1), bits_not(bits_below(last))));
	int fills = w->fills;

	window_set_missing(w, m);
	w->fills = 0;
	s->goback = w->fill_from | ROCEVAL_RETX_HELD;
	window_settle(c, first);
	return fills;
}

/*
 * The frame's request (consuming n) is behind the expected PSN of the flow
 * in `slot`, whose window is open.  1: it filled a hole, and awaits its
 * verdict with the fills before it.  0: a PSN seen, a duplicate; or its
 * hole opened longer than reorder_time ago, and it is the retransmission of
 * a loss.  Minus the fills awaiting, when it is the PSN after them on a
 * reliable connection: they were a go-back (window_fills_goback).
 */
__noinline int roceval_reorder_behind(__u32 slot, __u32 n, __u32 reliable)
{
	__u32 psn, i;
	struct roceval_scratch *s = scratch_get();
	struct reorder_ctx c;
	int v = 0;

	if (!s || !reorder_ctx(slot, &c))
		return 0;
	psn = s->fi.psn;
	n = n ? n : 1;
	c.now = frame_time_ns();
	bpf_spin_lock(&c.w->lock);
	/* a hole older than reorder_time is a loss, and what fills it a retransmission */
	window_age(&c);
	i = (c.f->req.next_psn - 2 - psn) & ROCE_PSN_MASK;
	if (i < c.win && bits_test(window_missing(c.w), i)) {
		window_fill_wait(&c, psn, i, n);
		window_ages(&c);
		v = 1;
	} else {
		if (c.w->fills && reliable && psn == c.w->fill_next)
			v = -window_fills_goback(&c, s);
		window_fills_reordered(&c);
		window_ages(&c);
		window_close_if_empty(&c);
	}
	bpf_spin_unlock(&c.w->lock);
	reorder_tally(slot, &c);
	return v;
}

#endif /* ROCEVAL_REORDER_BPF_H */
