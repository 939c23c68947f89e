/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_CMD_H
#define ROCEVAL_CMD_H

#include <stdio.h>

/*
 * Exit codes, the same for every command: 1 a runtime failure (no such
 * interface, not attached, no privileges, a failed read or write), 2 bad
 * usage (an unknown option, a bad value, a malformed file).
 */
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/*
 * A subcommand: one of these per command file in user/cmd/, listed in main.c.  The
 * dispatcher accepts any unique prefix of `name`.
 */
struct command {
	const char *name;
	const char *args;    /* synopsis after the name */
	const char *summary; /* one line for `roceval help` */
	const char *help;    /* the rest of `roceval help NAME`: options, examples */
	int (*run)(int argc, char **argv);
};

/* Prints "Usage: roceval NAME ARGS", the summary and the help text. */
void command_help(FILE *f, const struct command *cmd);
/* One line "roceval NAME: MSG; see 'roceval help NAME'" and EXIT_USAGE. */
int command_usage_error(const struct command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The one message for an option getopt rejected, and EXIT_USAGE: `opt` is
 * what getopt returned, ':' for a missing value (every optstring starts with
 * ':' so that getopt tells the two apart), '?' for an unknown option.
 * main() turns getopt's own message off, so this is the only line.
 */
int command_bad_option(const struct command *cmd, int opt, char **argv);

struct live_iface;
/*
 * The optional IFACE after a live command's options: at most one, the
 * privileges checked, then it (or every attachment of this namespace) opened
 * into li[LIVE_MAX_IFACES].  The count opened, or minus the exit status with
 * the reason printed.
 */
int command_open_ifaces(const struct command *cmd, int argc, char **argv, struct live_iface *li);

#include "version.h"

#endif
