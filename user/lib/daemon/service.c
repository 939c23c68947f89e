// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval daemon: keeps the configured interfaces attached, serves the
 * counters to Prometheus and logs what moved.  The main thread polls a
 * signalfd and a timerfd, so a signal and a tick are handled one after the
 * other; scrapes are answered by the HTTP server's threads (http.c), and the
 * served set is shared with them under d->lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "conf_file.h"
#include "http.h"
#include "json.h"
#include "live/live.h"
#include "live/loader.h"
#include "lockfile.h"
#include "log.h"
#include "report/report.h"
#include "rule_names.h"
#include "service.h"
#include "settings.h"

struct served {
	char ifname[IF_NAMESIZE];
	struct live_iface li;
	bool attached; /* li is open */
	ino_t pin_ino; /* of the pin directory li came from */
	int lock_fd;
	struct roceval_counters last; /* at the previous tick */
};

struct daemon {
	struct daemon_config cfg;
	const struct daemon_options *opts;
	struct served *ifs[DAEMON_MAX_IFACES];
	int n_ifs;
	struct http_server *http; /* NULL: listen = none */
	int sig_fd, timer_fd;
	FILE *log;
	struct timespec last_tick;
	double start_time; /* wall clock, for roceval_start_time_seconds */
	/* ifs[] and each served interface's state: the main thread and the HTTP threads */
	pthread_mutex_t lock;
};

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) + (a->tv_nsec - b->tv_nsec) / 1e9;
}

static ino_t pin_dir_ino(const char *ifname)
{
	char path[PATH_MAX];
	struct stat st;

	if (live_pin_dir(path, sizeof(path), ifname))
		return 0;
	return stat(path, &st) ? 0 : st.st_ino;
}

static void lock_path(char *path, size_t len, const char *ifname)
{
	/*
	 * The prefix keeps these apart from other commands' locks in the same
	 * directory; the namespace, from daemons of other namespaces.
	 */
	snprintf(path, len, "%s/daemon-%s-%s.lock", DAEMON_LOCK_DIR, live_netns(), ifname);
}

/*
 * One lock file per interface, so daemons serving different interfaces can
 * coexist; removed when the daemon stops serving the interface
 * (lockfile_lock()), so they do not pile up in DAEMON_LOCK_DIR.
 */
static int lock_iface(const char *ifname, bool quiet_busy)
{
	char path[PATH_MAX], pid[32] = "";
	int fd;

	lock_path(path, sizeof(path), ifname);
	fd = lockfile_lock(path, false);
	if (fd == -EWOULDBLOCK) {
		int pfd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = pfd < 0 ? 0 : pread(pfd, pid, sizeof(pid) - 1, 0);

		if (pfd >= 0)
			close(pfd);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (quiet_busy)
			pr_debug("%s: served by another daemon (pid %s)", ifname, pid);
		else
			pr_warn("%s: already served by another roceval daemon (pid %s, lock %s)", ifname,
				*pid ? pid : "unknown", path);
		return -EBUSY;
	}
	if (fd < 0) {
		pr_warn("%s: couldn't lock %s: %s", ifname, path, strerror(-fd));
		return fd;
	}
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "%d\n", (int)getpid());
	return fd;
}

/* Removes the lock file while still holding it, then lets it go. */
static void unlock_iface(const char *ifname, int fd)
{
	char path[PATH_MAX];

	lock_path(path, sizeof(path), ifname);
	lockfile_unlock(path, fd);
}

static void apply_settings(const struct daemon_config *cfg, struct served *s)
{
	struct roceval_settings cur, want;
	int err;

	if (!cfg->n_settings)
		return;
	/* Read-modify-write: only the keys the file names, so a running trace keeps its fields. */
	err = roceval_settings_read(s->li.settings_fd, &cur);
	if (err) {
		pr_warn("%s: couldn't read the settings map: %s", s->ifname, strerror(-err));
		return;
	}
	want = cur;
	config_apply_settings(cfg, &want);
	if (!memcmp(&cur, &want, sizeof(cur)))
		return;
	err = roceval_settings_write(s->li.settings_fd, &want);
	if (err)
		pr_warn("%s: couldn't write the settings map: %s", s->ifname, strerror(-err));
}

/* Opens the existing attachment, if any; returns 0, -ENOENT, or another -errno. */
static int adopt(struct served *s)
{
	int err = live_open(s->ifname, &s->li);

	if (err)
		return err;
	s->attached = true;
	s->pin_ino = pin_dir_ino(s->ifname);
	if (counters_read(s->li.counters_fd, &s->last))
		memset(&s->last, 0, sizeof(s->last));
	return 0;
}

/*
 * Adopts the interface's attachment, or attaches when the interface is
 * configured (adopt-all only adopts); *fresh says whether we attached.
 */
static int bring_up(const struct daemon_config *cfg, struct served *s, bool *fresh)
{
	int err = adopt(s);

	*fresh = false;
	if (err == -ENOENT && !cfg->n_ifaces)
		return err; /* detached since it was listed */
	if (err == -ENOENT) {
		struct roceval_settings set;

		settings_defaults(&set);
		config_apply_settings(cfg, &set);
		err = live_attach(s->ifname, cfg->mode, false, &set, &s->li);
		if (err)
			return err;
		*fresh = true;
		s->attached = true;
		s->pin_ino = pin_dir_ino(s->ifname);
		memset(&s->last, 0, sizeof(s->last));
		fprintf(stderr, "roceval: %s: attached (%s mode, program %u)\n", s->ifname,
			live_mode_name(s->li.mode), s->li.prog_id);
	} else if (err == -EPROTO) {
		live_warn_layout(s->ifname);
	} else if (err) {
		pr_warn("%s: couldn't open the pinned attachment: %s", s->ifname, strerror(-err));
	} else {
		fprintf(stderr, "roceval: %s: adopted the existing attachment (%s mode, program %u)\n",
			s->ifname, live_mode_name(s->li.mode), s->li.prog_id);
		apply_settings(cfg, s);
	}
	return err;
}

/* Takes the interface's lock and brings it up.  On failure nothing is left behind. */
static struct served *serve(const struct daemon_config *cfg, const char *ifname, bool quiet_busy,
			    bool *fresh)
{
	struct served *s = calloc(1, sizeof(*s));

	*fresh = false;
	if (!s) {
		pr_warn("%s: out of memory", ifname);
		return NULL;
	}
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->lock_fd = lock_iface(ifname, quiet_busy);
	if (s->lock_fd < 0 || bring_up(cfg, s, fresh)) {
		if (s->lock_fd >= 0)
			unlock_iface(ifname, s->lock_fd);
		free(s);
		return NULL;
	}
	return s;
}

static void unserve(struct served *s, bool detach)
{
	if (s->attached)
		live_close(&s->li);
	if (detach && s->attached) {
		if (live_detach(s->ifname) == 0)
			fprintf(stderr, "roceval: %s: detached\n", s->ifname);
	} else if (s->attached) {
		fprintf(stderr, "roceval: %s: left attached; counters stay pinned\n", s->ifname);
	}
	unlock_iface(s->ifname, s->lock_fd);
	free(s);
}

static int open_listener(const struct daemon_config *cfg)
{
	int fd, err, one = 1;

	if (cfg->listen_off)
		return -1;
	fd = socket(cfg->listen_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		pr_warn("listen %s: couldn't create a socket: %s", cfg->listen, strerror(err));
		return -err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&cfg->listen_addr, cfg->listen_len) || listen(fd, 128)) {
		err = errno;
		pr_warn("listen %s: %s", cfg->listen, strerror(err));
		close(fd);
		return -err;
	}
	return fd;
}

static bool log_is_file(const struct daemon_config *cfg)
{
	return strcmp(cfg->json_log, "-") && strcmp(cfg->json_log, "none");
}

static int open_log(const struct daemon_config *cfg, FILE **out)
{
	FILE *f;

	*out = NULL;
	if (!log_is_file(cfg)) {
		*out = strcmp(cfg->json_log, "-") ? NULL : stdout;
		return 0;
	}
	f = fopen(cfg->json_log, "ae");
	if (!f) {
		int err = errno;

		pr_warn("json_log %s: %s", cfg->json_log, strerror(err));
		return -err;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	*out = f;
	return 0;
}

static void close_log(FILE *f)
{
	if (f && f != stdout)
		fclose(f);
}

static int arm_timer(int fd, unsigned int secs)
{
	struct itimerspec its = { .it_interval = { .tv_sec = secs }, .it_value = { .tv_sec = secs } };

	return timerfd_settime(fd, 0, &its, NULL) ? -errno : 0;
}

int daemon_config_load(const struct daemon_options *o, struct daemon_config *cfg)
{
	char err[512];

	config_defaults(cfg);
	if (o->config_path && config_load(cfg, o->config_path, err, sizeof(err))) {
		pr_warn("%s", err);
		return -EINVAL;
	}
	if (o->overrides.n_ifaces) {
		memcpy(cfg->ifaces, o->overrides.ifaces, sizeof(cfg->ifaces));
		cfg->n_ifaces = o->overrides.n_ifaces;
	}
	if (o->have_listen) {
		snprintf(cfg->listen, sizeof(cfg->listen), "%s", o->overrides.listen);
		cfg->listen_off = o->overrides.listen_off;
		cfg->listen_addr = o->overrides.listen_addr;
		cfg->listen_len = o->overrides.listen_len;
	}
	if (o->have_interval)
		cfg->interval = o->overrides.interval;
	return 0;
}

static int find_served(struct served *const *ifs, int n, const char *ifname)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(ifs[i]->ifname, ifname))
			return i;
	return -1;
}

/*
 * Builds the set of served interfaces for cfg into out[], reusing what is
 * already served.  All or nothing: on failure what this call set up is
 * undone (detached again if it attached) and the running set is untouched.
 */
static int build_set(struct daemon *d, const struct daemon_config *cfg, struct served **out,
		     int *n_out)
{
	char names[DAEMON_MAX_IFACES][IF_NAMESIZE];
	bool fresh[DAEMON_MAX_IFACES] = { false };
	bool reused[DAEMON_MAX_IFACES] = { false };
	int n_names, n = 0;

	if (cfg->n_ifaces) {
		memcpy(names, cfg->ifaces, sizeof(names));
		n_names = cfg->n_ifaces;
	} else {
		/* this namespace's attachments, stale ones left out */
		n_names = live_list_local(names, DAEMON_MAX_IFACES);
		if (n_names < 0) {
			pr_warn("couldn't list the attachments under %s: %s", live_pin_root(),
				strerror(-n_names));
			return n_names;
		}
	}
	for (int i = 0; i < n_names; i++) {
		int j = find_served(d->ifs, d->n_ifs, names[i]);

		if (j >= 0) {
			bool again;

			/* detached by hand since: a reload is the moment to put it back */
			if (!d->ifs[j]->attached)
				bring_up(cfg, d->ifs[j], &again);
			reused[n] = true;
			out[n++] = d->ifs[j];
			continue;
		}
		out[n] = serve(cfg, names[i], false, &fresh[n]);
		if (!out[n])
			goto undo;
		n++;
	}
	*n_out = n;
	return 0;
undo:
	for (int i = 0; i < n; i++)
		if (!reused[i])
			unserve(out[i], fresh[i]);
	return -EINVAL;
}

static void commit_set(struct daemon *d, struct served **set, int n)
{
	for (int i = 0; i < d->n_ifs; i++)
		if (find_served(set, n, d->ifs[i]->ifname) < 0)
			unserve(d->ifs[i], false);
	memcpy(d->ifs, set, n * sizeof(set[0]));
	d->n_ifs = n;
	for (int i = 0; i < n; i++)
		if (d->ifs[i]->attached)
			apply_settings(&d->cfg, d->ifs[i]);
}

static void render_metrics(void *ctx, FILE *f);

/* Opens the listening socket of cfg and serves on it; NULL when cfg says none or on failure. */
static int start_http(struct daemon *d, const struct daemon_config *cfg, struct http_server **out)
{
	int fd;

	*out = NULL;
	if (cfg->listen_off)
		return 0;
	fd = open_listener(cfg);
	if (fd < 0)
		return fd;
	*out = http_start(fd, render_metrics, d);
	return *out ? 0 : -EINVAL;
}

static void reload(struct daemon *d)
{
	struct served *set[DAEMON_MAX_IFACES];
	struct daemon_config cfg;
	struct http_server *http = d->http;
	bool new_listener = false;
	FILE *log = d->log;
	int n;

	if (daemon_config_load(d->opts, &cfg))
		goto reject;
	if (cfg.listen_off != d->cfg.listen_off || strcmp(cfg.listen, d->cfg.listen)) {
		/* The old socket is still bound: a new one on the same address only on a change. */
		if (start_http(d, &cfg, &http))
			goto reject;
		new_listener = true;
	}
	/* A file is reopened on every reload, so logrotate can move it and send SIGHUP. */
	if ((strcmp(cfg.json_log, d->cfg.json_log) || log_is_file(&cfg)) && open_log(&cfg, &log)) {
		if (new_listener)
			http_stop(http);
		goto reject;
	}
	pthread_mutex_lock(&d->lock);
	if (build_set(d, &cfg, set, &n)) {
		pthread_mutex_unlock(&d->lock);
		if (new_listener)
			http_stop(http);
		if (log != d->log)
			close_log(log);
		goto reject;
	}
	if (cfg.interval != d->cfg.interval)
		arm_timer(d->timer_fd, cfg.interval);
	if (log != d->log)
		close_log(d->log);
	d->log = log;
	d->cfg = cfg;
	commit_set(d, set, n);
	pthread_mutex_unlock(&d->lock);
	if (new_listener) {
		/* not under the lock: stopping waits for a scrape in progress, which takes it */
		http_stop(d->http);
		d->http = http;
	}
	fprintf(stderr, "roceval: configuration reloaded%s%s: %d interface%s, metrics on %s\n",
		d->opts->config_path ? " from " : "", d->opts->config_path ?: "", n, n == 1 ? "" : "s", cfg.listen);
	return;
reject:
	pr_warn("reload failed; still running with the previous configuration");
}

/* "2026-01-02T03:04:05.678Z": UTC, to the millisecond. */
static const char *log_time(char *buf, size_t len)
{
	struct timespec now;
	struct tm tm;
	char secs[32];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", secs, now.tv_nsec / 1000000);
	return buf;
}

/* key: {the counters that moved, as deltas or as the new totals, and "rules": {likewise}}. */
static void moved_json(struct json_writer *w, const char *key, const struct roceval_counters *prev,
		       const struct roceval_counters *cur, bool delta)
{
	json_object_begin(w, key);
	for (int i = 0; i < TOTAL__COUNT; i++)
		if (cur->total[i] != prev->total[i])
			json_u64(w, total_ids[i], delta ? cur->total[i] - prev->total[i] : cur->total[i]);
	json_object_begin(w, "rules");
	for (int i = 0; i < RULE__COUNT; i++)
		if (cur->rule[i] != prev->rule[i])
			json_u64(w, rule_ids[i], delta ? cur->rule[i] - prev->rule[i] : cur->rule[i]);
	json_object_end(w);
	json_object_end(w);
}

/* One line: what moved since the previous tick, deltas then the new totals. */
static void log_moved(FILE *f, const struct served *s, const struct roceval_counters *prev,
		      const struct roceval_counters *cur, double secs)
{
	struct json_writer w;
	char when[48];

	bool moved = false;

	for (int i = 0; i < TOTAL__COUNT; i++)
		moved |= cur->total[i] != prev->total[i];
	for (int i = 0; i < RULE__COUNT; i++)
		moved |= cur->rule[i] != prev->rule[i];
	if (!f || !moved)
		return;
	json_init(&w, f);
	json_object_begin(&w, NULL);
	json_string(&w, "time", log_time(when, sizeof(when)));
	json_string(&w, "interface", s->ifname);
	json_double(&w, "seconds", secs, 3);
	moved_json(&w, "delta", prev, cur, true);
	moved_json(&w, "total", prev, cur, false);
	json_object_end(&w);
	json_end(&w);
}

/*
 * Notices an attachment removed or replaced behind our back (roceval detach,
 * a re-attach, the interface gone): the pin directory is gone or is another
 * one.  A replaced one is adopted, with its counters as the new baseline.
 */
static void recheck(struct served *s)
{
	ino_t ino = pin_dir_ino(s->ifname);

	if (s->attached && ino == s->pin_ino)
		return;
	if (s->attached) {
		live_close(&s->li);
		s->attached = false;
		fprintf(stderr, "roceval: %s: the attachment went away (detached by someone else?)\n",
			s->ifname);
	}
	if (ino && adopt(s) == 0)
		fprintf(stderr, "roceval: %s: adopted the new attachment (program %u)\n", s->ifname,
			s->li.prog_id);
}

static void tick(struct daemon *d)
{
	struct timespec now;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &now);
	secs = ts_diff(&now, &d->last_tick);
	d->last_tick = now;
	if (!d->cfg.n_ifaces) {
		/* Adopt-all: pick up attachments made since, unless another daemon serves them. */
		char names[DAEMON_MAX_IFACES][IF_NAMESIZE];
		int n = live_list_local(names, DAEMON_MAX_IFACES);

		for (int i = 0; i < n && d->n_ifs < DAEMON_MAX_IFACES; i++) {
			bool fresh;

			if (find_served(d->ifs, d->n_ifs, names[i]) >= 0)
				continue;
			d->ifs[d->n_ifs] = serve(&d->cfg, names[i], true, &fresh);
			if (d->ifs[d->n_ifs])
				d->n_ifs++;
		}
	}
	for (int i = 0; i < d->n_ifs; i++) {
		struct served *s = d->ifs[i];
		struct roceval_counters cur;

		recheck(s);
		if (!s->attached && !d->cfg.n_ifaces) {
			/* adopt-all serves attachments, and this one is gone */
			unserve(s, false);
			memmove(&d->ifs[i], &d->ifs[i + 1], (d->n_ifs - i - 1) * sizeof(d->ifs[0]));
			d->n_ifs--;
			i--;
			continue;
		}
		if (!s->attached || counters_read(s->li.counters_fd, &cur))
			continue;
		log_moved(d->log, s, &s->last, &cur, secs);
		s->last = cur;
	}
}

/* Flows in the table, or -1 when there is no table or it cannot be read. */
static long long flow_count(int sets_fd)
{
	struct roceval_flow_set *sets;
	long long n = 0;
	int nsets;

	if (sets_fd < 0 || (nsets = flow_sets_read(sets_fd, &sets)) < 0)
		return -1;
	for (int i = 0; i < nsets; i++)
		for (int w = 0; w < ROCEVAL_FLOW_WAYS; w++)
			n += sets[i].tag[w] != 0;
	free(sets);
	return n;
}

static long long flow_capacity(int flows_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (flows_fd < 0 || bpf_obj_get_info_by_fd(flows_fd, &info, &len))
		return -1;
	return info.max_entries;
}

/* The HTTP threads' view of the served set, under d->lock. */
static void render_metrics(void *ctx, FILE *f)
{
	static struct roceval_counters c[DAEMON_MAX_IFACES];
	static __u64 rej[DAEMON_MAX_IFACES][ROCEVAL_CM_REJ_SLOTS];
	static struct roceval_latency_hist lat[DAEMON_MAX_IFACES][LAT__COUNT];
	static struct roceval_congestion cc[DAEMON_MAX_IFACES];
	struct roceval_settings cfg;
	static struct prom_iface pi[DAEMON_MAX_IFACES];
	static struct mirror_entry *mirrors[DAEMON_MAX_IFACES];
	struct daemon *d = ctx;
	int n = 0;

	/* static: 64 interfaces' counters are too big for a pool thread's stack; the lock guards them */
	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < d->n_ifs; i++) {
		struct served *s = d->ifs[i];

		recheck(s);
		if (!s->attached)
			continue;
		pi[n] = (struct prom_iface){
			.ifname = s->ifname,
			.mode = live_mode_name(s->li.mode),
			.hook = live_hook_name(s->li.mode),
			.prog_id = s->li.prog_id,
			.attached_since = s->li.attached_since,
			.c = counters_read(s->li.counters_fd, &c[n]) ? NULL : &c[n],
			.flows = flow_count(s->li.flow_sets_fd),
			.flows_max = flow_capacity(s->li.flows_fd),
			.cm_rej = cm_rej_read(s->li.cm_rej_fd, rej[n]) ? NULL : rej[n],
			.latency = s->li.latency_fd < 0 || latency_read(s->li.latency_fd, lat[n]) ? NULL : lat[n],
			.cc = s->li.congestion_fd < 0 || congestion_read(s->li.congestion_fd, &cc[n]) ? NULL : &cc[n],
			.link_speed = roceval_settings_read(s->li.settings_fd, &cfg) ? 0 : cfg.link_speed,
		};
		pi[n].nmirrors = mirrors_collect(&s->li.mirror, &mirrors[n]);
		if (s->li.mirror.sessions < 0)
			pi[n].nmirrors = -1;
		pi[n].mirrors = mirrors[n];
		n++;
	}
	prom_write(f, pi, n, d->start_time);
	for (int i = 0; i < n; i++)
		free(mirrors[i]);
	pthread_mutex_unlock(&d->lock);
}

static void stop(struct daemon *d)
{
	/* first, so no scrape runs while the set is torn down */
	http_stop(d->http);
	d->http = NULL;
	for (int i = 0; i < d->n_ifs; i++)
		unserve(d->ifs[i], d->cfg.detach_on_exit);
	d->n_ifs = 0;
	close_log(d->log);
}

static int run_loop(struct daemon *d)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = d->sig_fd, .events = POLLIN },
			{ .fd = d->timer_fd, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_warn("poll: %s", strerror(errno));
			return 1;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					reload(d);
					continue;
				}
				fprintf(stderr, "roceval: SIG%s: stopping\n", sigabbrev_np(si.ssi_signo));
				return 0;
			}
		}
		if (p[1].revents & POLLIN) {
			__u64 expirations;

			if (read(d->timer_fd, &expirations, sizeof(expirations)) == sizeof(expirations)) {
				pthread_mutex_lock(&d->lock);
				tick(d);
				pthread_mutex_unlock(&d->lock);
			}
		}
	}
}

/*
 * Signals blocked (before anything is attached, so one is never lost or
 * fatal halfway) and read from a signalfd, the interval timer, the log, the
 * listener, then the served set.
 */
static int daemon_start(struct daemon *d)
{
	struct served *set[DAEMON_MAX_IFACES];
	struct timespec now;
	sigset_t mask;
	int n, fd = -1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (d->sig_fd < 0 || d->timer_fd < 0) {
		pr_warn("couldn't create the signal and timer descriptors: %s", strerror(errno));
		return -1;
	}
	if (open_log(&d->cfg, &d->log))
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	d->start_time = now.tv_sec + now.tv_nsec / 1e9;
	/* bound before anything is attached, served once the set is built */
	if (!d->cfg.listen_off && (http_load() || (fd = open_listener(&d->cfg)) < 0))
		return -1;
	if (build_set(d, &d->cfg, set, &n)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	commit_set(d, set, n);
	if (fd >= 0 && !(d->http = http_start(fd, render_metrics, d)))
		return -1;
	if (!n)
		fprintf(stderr, "roceval: no interface configured and none attached yet; "
				"adopting attachments as they appear\n");
	clock_gettime(CLOCK_MONOTONIC, &d->last_tick);
	if (arm_timer(d->timer_fd, d->cfg.interval)) {
		pr_warn("couldn't arm the interval timer: %s", strerror(errno));
		return -1;
	}
	fprintf(stderr, "roceval: daemon running: %d interface%s, metrics on %s, every %us\n", n,
		n == 1 ? "" : "s", d->cfg.listen_off ? "none" : d->cfg.listen, d->cfg.interval);
	return 0;
}

int daemon_run(const struct daemon_options *o, const struct daemon_config *cfg)
{
	struct daemon d = { .cfg = *cfg, .opts = o, .sig_fd = -1, .timer_fd = -1,
			    .lock = PTHREAD_MUTEX_INITIALIZER };
	int ret = 1;

	libbpf_setup_logging();
	if (live_ensure_bpffs())
		return 1;
	if (!daemon_start(&d))
		ret = run_loop(&d);
	stop(&d);
	if (d.sig_fd >= 0)
		close(d.sig_fd);
	if (d.timer_fd >= 0)
		close(d.timer_fd);
	return ret;
}
