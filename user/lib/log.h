/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_LOG_H
#define ROCEVAL_LOG_H

extern int verbose;

void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Routes libbpf's messages through pr_warn/pr_debug. */
void libbpf_setup_logging(void);

#endif
