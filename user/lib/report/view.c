// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <curses.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cm.h"
#include "congestion.h"
#include "counters.h"
#include "flows.h"
#include "latency.h"
#include "live/loader.h"
#include "log.h"
#include "mirrors.h"
#include "rule_names.h"
#include "view.h"

/*
 * One screen of top is a list of lines, built without regard to the
 * terminal; on a terminal ncurses shows what fits (each line cut at the
 * width, the list at the height), elsewhere every line is printed.
 */
struct top_line {
	char text[160];
	int sev; /* -1: plain; else the rule severity it is coloured by */
	bool bold;
};

struct top_screen {
	struct top_line *v;
	int n, cap;
};

static const char *const sort_names[TOP_SORT__COUNT] = { "rate", "count", "name" };

bool top_sort_parse(const char *s, enum top_sort *out)
{
	for (int i = 0; i < TOP_SORT__COUNT; i++) {
		if (!strcmp(s, sort_names[i])) {
			*out = i;
			return true;
		}
	}
	return false;
}

static void __attribute__((format(printf, 4, 5)))
top_add(struct top_screen *sc, int sev, bool bold, const char *fmt, ...)
{
	va_list ap;

	if (sc->n == sc->cap) {
		int cap = sc->cap ? sc->cap * 2 : 64;
		struct top_line *v = realloc(sc->v, cap * sizeof(*v));

		if (!v)
			return; /* a line less on the screen; the next refresh tries again */
		sc->v = v;
		sc->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(sc->v[sc->n].text, sizeof(sc->v[sc->n].text), fmt, ap);
	va_end(ap);
	sc->v[sc->n].sev = sev;
	sc->v[sc->n].bold = bold;
	sc->n++;
}

/* An interface name as it can be shown on a terminal: control bytes become '?'. */
static const char *printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* A rate, or "-" before there is an interval to measure it over. */
static const char *rate_text(double r, bool known, char *buf, size_t len)
{
	if (!known)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", r);
	return buf;
}

/* One reading of an attachment: the counters and the rates over two spans. */
struct top_sample {
	const struct roceval_settings *cfg;
	const struct roceval_counters *c;
	const double *tr, *rr; /* since the last refresh */
	const double *ta, *ra; /* since attach */
	bool current;	       /* tr and rr cover an interval already */
};

struct rule_order {
	const double *rate;
	const struct roceval_counters *c;
	enum top_sort sort;
};
static struct rule_order order; /* qsort() passes no context */

static int by_sort_key(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (order.sort == TOP_SORT_RATE && order.rate[x] != order.rate[y])
		return order.rate[x] < order.rate[y] ? 1 : -1;
	if (order.sort != TOP_SORT_NAME && order.c->rule[x] != order.c->rule[y])
		return order.c->rule[x] < order.c->rule[y] ? 1 : -1;
	return strcmp(rule_ids[x], rule_ids[y]);
}

static void top_build_totals(struct top_screen *sc, const struct live_iface *li, const struct top_sample *s)
{
	const struct roceval_counters *c = s->c;
	char name[IF_NAMESIZE * 2], a[32], b[32];

	top_add(sc, -1, true, "%s: %s%s, program %u, enforce %s", printable(li->ifname, name, sizeof(name)),
		live_mode_name(li->mode), li->mode == LIVE_MODE_FEED ? "" : " mode", li->prog_id,
		s->cfg->enforce ? "ON" : "off");
	top_add(sc, -1, false, "  %-7s %14llu %10s/s  avg %10.1f/s", "frames",
		(unsigned long long)c->total[TOTAL_FRAMES], rate_text(s->tr[TOTAL_FRAMES], s->current, a, sizeof(a)),
		s->ta[TOTAL_FRAMES]);
	top_add(sc, -1, false, "  %-7s %14llu %10s/s  avg %10.1f/s", "roce",
		(unsigned long long)c->total[TOTAL_ROCE], rate_text(s->tr[TOTAL_ROCE], s->current, b, sizeof(b)),
		s->ta[TOTAL_ROCE]);
	top_add(sc, -1, false, "  family rocev1 %llu rocev2_ipv4 %llu rocev2_ipv6 %llu",
		(unsigned long long)c->total[TOTAL_ROCEV1], (unsigned long long)c->total[TOTAL_ROCEV2_IPV4],
		(unsigned long long)c->total[TOTAL_ROCEV2_IPV6]);
	top_add(sc, -1, false, "  icrc ok %llu bad %llu unchecked %llu skipped %llu; dropped %llu",
		(unsigned long long)c->total[TOTAL_ICRC_OK], (unsigned long long)c->total[TOTAL_ICRC_BAD],
		(unsigned long long)c->total[TOTAL_ICRC_UNCHECKED],
		(unsigned long long)c->total[TOTAL_ICRC_SKIPPED], (unsigned long long)c->total[TOTAL_DROPPED]);
	if (c->rule[RULE_PSN_REORDER])
		top_add(sc, -1, false, "  reordered %llu, distance p50 <= %u p99 <= %u mean %.1f PSNs",
			(unsigned long long)c->rule[RULE_PSN_REORDER], reorder_quantile(c, 0.5),
			reorder_quantile(c, 0.99), (double)c->reorder_sum / (double)c->rule[RULE_PSN_REORDER]);
}

static void top_build_rules(struct top_screen *sc, const struct top_sample *s, enum top_sort sort)
{
	int idx[RULE__COUNT], fired = 0;
	char a[32];

	top_add(sc, -1, true, "  %-17s %10s %9s %9s %s", "RULE", "COUNT", "RATE/s", "AVG/s", "SEVERITY");
	for (int i = 0; i < RULE__COUNT; i++)
		if (s->c->rule[i])
			idx[fired++] = i;
	order = (struct rule_order){ .rate = s->rr, .c = s->c, .sort = sort };
	qsort(idx, fired, sizeof(idx[0]), by_sort_key);
	for (int k = 0; k < fired; k++) {
		int i = idx[k];

		/* bold while it fires: a rate over the last interval */
		top_add(sc, rule_sevs[i], s->current && s->rr[i] > 0, "  %-17s %10llu %9s %9.1f %s", rule_ids[i],
			(unsigned long long)s->c->rule[i], rate_text(s->rr[i], s->current, a, sizeof(a)), s->ra[i],
			severity_name(rule_sevs[i]));
	}
	if (!fired)
		top_add(sc, -1, false, "  (no rule has fired)");
}

static int by_packets(const void *a, const void *b)
{
	const struct flow_entry *x = a, *y = b;

	return x->val.packets < y->val.packets ? 1 : x->val.packets > y->val.packets ? -1 : 0;
}

static void top_flow_rows(struct top_screen *sc, const struct flow_entry *e, int n, int rows,
			  bool violating)
{
	char name[FLOW_NAME_MAX], p50[32], p99[32];
	const char *rest;
	int shown = 0, w;

	for (int i = 0; i < n && shown < rows; i++) {
		bool timed = flow_latency_count(&e[i].cold) > 0;

		if (violating && !e[i].cold.violations)
			break;
		flow_entry_name(&e[i], name, sizeof(name));
		w = flow_name_line(name, FLOW_NAME_W);
		top_add(sc, -1, false, "  %-*.*s %10llu %12llu %10llu %9s %9s", FLOW_NAME_W, w, name,
			(unsigned long long)e[i].val.packets, (unsigned long long)e[i].val.bytes,
			(unsigned long long)e[i].cold.violations,
			timed ? latency_text(latency_quantile16_ns(e[i].cold.latency, 0.5), p50, sizeof(p50)) : "-",
			timed ? latency_text(latency_quantile16_ns(e[i].cold.latency, 0.99), p99, sizeof(p99)) : "-");
		/* the rest of the name below, indented, within the name's column */
		for (rest = name + w + strspn(name + w, " "); *rest; rest += strspn(rest, " ")) {
			w = flow_name_line(rest, FLOW_NAME_W - 2);
			top_add(sc, -1, false, "    %.*s", w, rest);
			rest += w;
		}
		shown++;
	}
	if (!shown)
		top_add(sc, -1, false, "  (none)");
}

/* The flows that broke the most rules, then the busiest, from the flow table. */
static int top_build_flows(struct top_screen *sc, const struct live_iface *li, int rows)
{
	struct flow_entry *e = NULL;
	int n = flows_collect(li->flows_fd, li->flow_sets_fd, li->flow_cold_fd, &e);

	if (n < 0)
		return n;
	cm_annotate(li->cm_ends_fd, e, n);
	top_add(sc, -1, true, "  %-*s %10s %12s %10s %9s %9s", FLOW_NAME_W, "MOST VIOLATING FLOWS", "PACKETS",
		"BYTES", "VIOLATIONS", "P50", "P99");
	top_flow_rows(sc, e, n, rows, true);
	if (n) /* e is NULL for an empty table, which qsort() must not be given */
		qsort(e, n, sizeof(*e), by_packets);
	top_add(sc, -1, true, "  %-*s %10s %12s %10s %9s %9s", FLOW_NAME_W, "BUSIEST FLOWS", "PACKETS", "BYTES",
		"VIOLATIONS", "P50", "P99");
	top_flow_rows(sc, e, n, rows, false);
	top_add(sc, -1, false, "  (%d flow%s in the table)", n, n == 1 ? "" : "s");
	free(e);
	return 0;
}

static int by_loss(const void *a, const void *b)
{
	const struct mirror_entry *x = a, *y = b;

	if (x->lost != y->lost)
		return x->lost < y->lost ? 1 : -1;
	return x->frames < y->frames ? 1 : x->frames > y->frames ? -1 : 0;
}

/* The source column of the sessions table: an IPv4 address fits, an IPv6 one goes on a line of its own. */
#define MIRROR_SOURCE_W 23

/*
 * The mirror sessions losing frames first, then the busiest (nothing while
 * there is none).  LOST is "-" for a session without sequence numbers, or
 * whose numbers never advance: its loss cannot be told.
 */
static int top_build_mirrors(struct top_screen *sc, const struct live_iface *li, int rows)
{
	char src[INET6_ADDRSTRLEN], lost[24];
	struct mirror_entry *e;
	int n = mirrors_collect(&li->mirror, &e);

	if (n <= 0)
		return n;
	qsort(e, n, sizeof(*e), by_loss);
	top_add(sc, -1, true, "  %-*s %-7s %10s %11s %13s %8s", MIRROR_SOURCE_W, "MIRROR SESSIONS", "ENCAP",
		"SESSION", "FRAMES", "BYTES", "LOST");
	for (int i = 0; i < n && i < rows; i++) {
		if (!inet_ntop(e[i].key.ipv6 ? AF_INET6 : AF_INET, e[i].key.source, src, sizeof(src)))
			snprintf(src, sizeof(src), "?");
		if (strlen(src) > MIRROR_SOURCE_W) {
			top_add(sc, -1, false, "  %s", src);
			src[0] = '\0';
		}
		if (e[i].numbered)
			snprintf(lost, sizeof(lost), "%llu", (unsigned long long)e[i].lost);
		else
			snprintf(lost, sizeof(lost), "-");
		top_add(sc, e[i].lost ? SEV_WARNING : -1, false, "  %-*s %-7s %10u %11llu %13llu %8s",
			MIRROR_SOURCE_W, src, mirror_encap_id(e[i].key.encap), e[i].key.session,
			(unsigned long long)e[i].frames, (unsigned long long)e[i].bytes, lost);
	}
	top_add(sc, -1, false, "  (%d mirror session%s)", n, n == 1 ? "" : "s");
	free(e);
	return 0;
}

static void top_line(void *ctx, const char *text)
{
	top_add(ctx, -1, false, "%s", text);
}

/* CNPs, CE marks and their answers, senders' reactions, PFC by priority (congestion.c). */
static int top_build_congestion(struct top_screen *sc, const struct live_iface *li, const struct top_sample *s)
{
	struct roceval_latency_hist lat[LAT__COUNT];
	struct roceval_congestion cc;
	int err = 0;

	if (li->latency_fd >= 0)
		err = latency_read(li->latency_fd, lat);
	if (!err && li->congestion_fd >= 0)
		err = congestion_read(li->congestion_fd, &cc);
	if (err)
		return err;
	congestion_lines(s->c, li->latency_fd >= 0 ? &lat[LAT_CE_CNP] : NULL, li->congestion_fd >= 0 ? &cc : NULL,
			 s->cfg, top_line, sc);
	return 0;
}

/* Colour pairs by severity; 0 is the terminal's own. */
enum { PAIR_ERROR = 1, PAIR_WARNING = 2 };

static void top_draw(const struct top_screen *sc, const char *title)
{
	int rows = LINES, cols = COLS, y = 0;

	erase();
	/* the title and the key line are always there; the body gets what is left */
	attron(A_REVERSE);
	mvaddnstr(y++, 0, title, cols);
	for (int x = (int)strlen(title); x < cols; x++)
		addch(' ');
	attroff(A_REVERSE);
	for (int i = 0; i < sc->n && y < rows - 1; i++, y++) {
		int attr = sc->v[i].bold ? A_BOLD : 0;

		if (y == rows - 2 && i < sc->n - 1) {
			mvprintw(y, 0, "  (%d more line%s; a larger terminal shows them)", sc->n - i,
				 sc->n - i == 1 ? "" : "s");
			break;
		}
		if (has_colors() && sc->v[i].sev == SEV_ERROR)
			attr |= COLOR_PAIR(PAIR_ERROR);
		else if (has_colors() && sc->v[i].sev == SEV_WARNING)
			attr |= COLOR_PAIR(PAIR_WARNING);
		attron(attr);
		mvaddnstr(y, 0, sc->v[i].text, cols);
		attroff(attr);
	}
	if (rows > 1)
		mvaddnstr(rows - 1, 0, "q quit  p pause  s sort: rate/count/name", cols);
	refresh();
}

static void top_plain(const struct top_screen *sc, const char *title)
{
	printf("%s\n\n", title);
	for (int i = 0; i < sc->n; i++)
		printf("%s\n", sc->v[i].text);
	putchar('\n');
	fflush(stdout);
}

static void curses_end(void)
{
	if (!isendwin())
		endwin();
}

/* Full screen on the terminal, in colour where it has them; -1 with the reason printed. */
static int top_term_open(void)
{
	const char *term = getenv("TERM");

	setlocale(LC_ALL, "");
	if (!term || !*term || !newterm(term, stdout, stdin)) {
		pr_warn("top: %s%s%s: set TERM to your terminal's type, or run 'roceval top' with "
			"output to a pipe or a file", term && *term ? "unknown terminal type '" : "TERM is not set",
			term && *term ? term : "", term && *term ? "'" : "");
		return -1;
	}
	atexit(curses_end);
	cbreak();
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_ERROR, COLOR_RED, -1);
		init_pair(PAIR_WARNING, COLOR_YELLOW, -1);
	}
	return 0;
}

/* A reading of the counters: at attach (zero), at the last refresh, now. */
struct reading {
	struct roceval_counters c;
	double t; /* CLOCK_MONOTONIC seconds */
};

struct top_state {
	const struct live_iface *li;
	int n;
	struct reading prev[LIVE_MAX_IFACES], first[LIVE_MAX_IFACES];
	struct top_screen sc;
	bool current; /* a refresh has been shown: rates over an interval exist */
};

/* Reads every attachment and builds the screen from it. */
static int top_sample(struct top_state *st, const struct top_view *view)
{
	int err = 0;

	st->sc.n = 0;
	for (int i = 0; i < st->n && !err; i++) {
		struct roceval_settings cfg;
		double tr[TOTAL__COUNT], rr[RULE__COUNT], ta[TOTAL__COUNT], ra[RULE__COUNT];
		struct top_sample s = { &cfg, NULL, tr, rr, ta, ra, st->current };
		struct reading cur;

		err = counters_read(st->li[i].counters_fd, &cur.c);
		if (!err)
			err = roceval_settings_read(st->li[i].settings_fd, &cfg);
		if (err)
			break;
		cur.t = mono_now();
		s.c = &cur.c;
		counters_rates(&st->prev[i].c, &cur.c, cur.t - st->prev[i].t, tr, rr);
		counters_rates(&st->first[i].c, &cur.c, cur.t - st->first[i].t, ta, ra);
		if (i)
			top_add(&st->sc, -1, false, "%s", "");
		top_build_totals(&st->sc, &st->li[i], &s);
		top_build_rules(&st->sc, &s, view->sort);
		err = top_build_congestion(&st->sc, &st->li[i], &s);
		if (!err)
			err = top_build_mirrors(&st->sc, &st->li[i], view->flow_rows);
		if (!err && st->li[i].flows_fd >= 0)
			err = top_build_flows(&st->sc, &st->li[i], view->flow_rows);
		st->prev[i] = cur;
	}
	return err;
}

static void top_show(const struct top_state *st, const struct top_view *view, bool interactive)
{
	char title[192], now[32];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(now, sizeof(now), "%H:%M:%S", &tm);
	snprintf(title, sizeof(title), "roceval top - %s  every %.1fs  sort %s%s%s", now, view->delay,
		 sort_names[view->sort], view->paused ? "  PAUSED" : "", st->current ? "" : "  measuring");
	if (interactive)
		top_draw(&st->sc, title);
	else
		top_plain(&st->sc, title);
}

/*
 * Waits out the delay on the keyboard; returns true when only the screen is
 * to be redrawn (a resize, a pause), false when the counters are to be read
 * again.
 */
static bool top_keys(struct top_view *view)
{
	for (double until = mono_now() + view->delay; !stop_requested;) {
		double left = until - mono_now();
		int ch;

		if (left <= 0)
			break;
		timeout((int)(left * 1000) + 1);
		ch = getch();
		if (ch == 'q' || ch == 'Q') {
			stop_requested = 1;
		} else if (ch == KEY_RESIZE) {
			return true;
		} else if (ch == 'p' || ch == ' ') {
			view->paused = !view->paused;
			/* rates after a pause are over the time since the last reading */
			return true;
		} else if (ch == 's') {
			view->sort = (view->sort + 1) % TOP_SORT__COUNT;
			/* re-sorted from fresh counters */
			break;
		}
	}
	return false;
}

int top_run(const struct live_iface *li, int n, struct top_view *view, __u32 iterations)
{
	struct top_state st = { .li = li, .n = n };
	bool interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO), redraw_only = false;
	__u32 done = 0;
	int err = 0;

	if (interactive && top_term_open())
		return 1;
	/* averages since attach: the counters were zero at attach time */
	for (int i = 0; i < n; i++) {
		st.first[i].t = mono_now() - (boot_now_ns() - li[i].attached_boot_ns) / 1e9;
		st.prev[i] = st.first[i];
	}
	while (!stop_requested) {
		if (!redraw_only && !view->paused && (err = top_sample(&st, view)))
			break;
		top_show(&st, view, interactive);
		if (!view->paused)
			st.current = true;
		if (iterations && ++done >= iterations)
			break;
		if (interactive)
			redraw_only = top_keys(view);
		else
			nap(view->delay);
	}
	if (interactive)
		curses_end();
	free(st.sc.v);
	if (err)
		pr_warn("Couldn't read the maps: %s", strerror(-err));
	return err ? 1 : 0;
}
