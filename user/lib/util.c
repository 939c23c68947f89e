// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "common.h"

int verbose;

/* One write per message: stderr is unbuffered, and a line in pieces can interleave. */
static void vlog(const char *fmt, va_list ap)
{
	char line[8192];
	int n = snprintf(line, sizeof(line), "roceval: ");

	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	if (line[n - 1] != '\n')
		line[n++] = '\n';
	line[n] = '\0';
	fputs(line, stderr);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 2)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

/*
 * libbpf prints the verifier log and other detail at WARN level; our users
 * want one line unless they ask for more with -v.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_WARN && verbose < 1) || (level == LIBBPF_INFO && verbose < 1) ||
	    (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void libbpf_setup_logging(void)
{
	libbpf_set_print(libbpf_print);
}

static const struct {
	int cap;
	const char *name;
} needed_caps[] = {
	/* load programs and maps, read and write maps (verifier: no pointer leaks) */
	{ CAP_BPF, "CAP_BPF" },
	/* load XDP programs, attach them to interfaces */
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN" },
	/* the verifier's full program checks rather than the unprivileged subset */
	{ CAP_PERFMON, "CAP_PERFMON" },
	/* the pins are root's, directories 0700: any other uid needs to override that */
	{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
};

int require_caps(bool pins)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	char missing[128] = "";
	size_t n = sizeof(needed_caps) / sizeof(needed_caps[0]);

	if (syscall(SYS_capget, &hdr, data)) {
		pr_warn("Couldn't read this process's capabilities: %s", strerror(errno));
		return -errno;
	}
	if (!pins || geteuid() == 0)
		n--; /* CAP_DAC_OVERRIDE is last */
	for (size_t i = 0; i < n; i++) {
		int cap = needed_caps[i].cap;

		if (!(data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? " " : "", needed_caps[i].name);
	}
	if (!*missing)
		return 0;
	pr_warn("needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON%s (missing: %s); run as root or grant them",
		pins && geteuid() ? ", and CAP_DAC_OVERRIDE unless uid 0" : "", missing);
	return -EPERM;
}

volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

void stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void nap(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	while (!stop_requested && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double boot_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int lockfile_lock(const char *path, bool wait)
{
	struct stat locked, named;
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST)
		return -errno;
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
			int err = -errno;

			close(fd);
			return err;
		}
		/* the holder before us may have removed the file: then this lock guards nothing */
		if (!fstat(fd, &locked) && !stat(path, &named) && locked.st_ino == named.st_ino)
			return fd;
		close(fd);
	}
}

void lockfile_unlock(const char *path, int fd)
{
	/* removed while still held, so nobody can lock it between the two */
	unlink(path);
	close(fd);
}

bool parse_u32(const char *s, unsigned long max, __u32 *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = (__u32)v;
	return true;
}

bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "on", "yes", "true", "1" }, *const no[] = { "off", "no", "false", "0" };

	for (size_t i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return true;
		}
	}
	return false;
}

#define RULE_FIELD_ID(e, id, sev, ref, desc) [RULE_##e] = id,
#define RULE_FIELD_DESC(e, id, sev, ref, desc) [RULE_##e] = desc,
#define RULE_FIELD_REF(e, id, sev, ref, desc) [RULE_##e] = ref,
#define RULE_FIELD_SEV(e, id, sev, ref, desc) [RULE_##e] = sev,
#define TOTAL_FIELD_ID(e, id, metric, label, desc) [TOTAL_##e] = id,
#define TOTAL_FIELD_METRIC(e, id, metric, label, desc) [TOTAL_##e] = metric,
#define TOTAL_FIELD_LABEL(e, id, metric, label, desc) [TOTAL_##e] = label,
#define TOTAL_FIELD_DESC(e, id, metric, label, desc) [TOTAL_##e] = desc,

const char *const rule_ids[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_ID) };
const char *const rule_descs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_DESC) };
const char *const rule_refs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_REF) };
const int rule_sevs[RULE__COUNT] = { ROCEVAL_RULES(RULE_FIELD_SEV) };
const char *const total_ids[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_ID) };
const char *const total_metrics[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_METRIC) };
const char *const total_labels[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_LABEL) };
const char *const total_descs[TOTAL__COUNT] = { ROCEVAL_TOTALS(TOTAL_FIELD_DESC) };

const char *severity_name(int sev)
{
	static const char *const names[] = { [SEV_INFO] = "info", [SEV_WARNING] = "warning",
					     [SEV_ERROR] = "error" };

	return sev >= 0 && sev <= SEV_ERROR ? names[sev] : "?";
}

int rule_lookup(const char *id)
{
	for (int i = 0; i < RULE__COUNT; i++)
		if (!strcmp(rule_ids[i], id))
			return i;
	return -1;
}

#define OP_NAME_ROW(code, name, ...) [code] = #name,
static const char *const op_names[32] = { ROCE_OPS(OP_NAME_ROW) };

const char *roce_transport_name(unsigned int transport)
{
	static const char *const names[8] = { "RC", "UC", "RD", "UD", "CNP", "XRC", "VENDOR", "VENDOR" };

	return names[transport & 7];
}

const char *roce_opcode_name(unsigned int opcode, char *buf, size_t len)
{
	unsigned int tr = (opcode >> 5) & 7;
	const struct roce_op *op = &roce_ops[opcode & 0x1F];

	if (opcode == ROCE_OPCODE_CNP)
		snprintf(buf, len, "CNP");
	else if (tr == ROCE_TR_CNP || tr >= ROCE_TR_VENDOR6 || !(op->transports & (1u << tr)))
		snprintf(buf, len, "%s opcode 0x%02x", tr >= ROCE_TR_VENDOR6 ? "VENDOR" : "RESERVED", opcode);
	else
		snprintf(buf, len, "%s %s", roce_transport_name(tr), op_names[opcode & 0x1F]);
	return buf;
}
