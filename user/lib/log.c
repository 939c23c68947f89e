// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "log.h"

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
