/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_CMD_H
#define ROCEVAL_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * Exit codes, the same for every command: 1 a runtime failure (no such
 * interface, not attached, no privileges, a failed read or write), 2 bad
 * usage (an unknown option, a bad value, a malformed file).
 */
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/*
 * One row of a command's option table, from which getopt's option string
 * and long options, the --help text and the manual page all come.  A row
 * with a heading starts a group of the help; one without help is for getopt
 * alone (an alias, or one of several spellings another row explains).
 */
struct cmd_opt {
	const char *name; /* --name, or NULL for a short option alone */
	int key;	  /* what getopt returns: the short letter, or OPT_LONG + n */
	int arg;	  /* no_argument, required_argument or optional_argument */
	const char *meta; /* the value's name in the help: N, FILE, [SECS] */
	/* its help; each '\n' continues at the help column */
	const char *help;
	const char *left; /* the help's left side where it is not "-k, --name META" */
	unsigned int col; /* the help column of this row where it differs from its group's */
	/* a heading row: the group's title, the group's help column, no short column */
	const char *heading;
	bool no_short;
	/* a getopt row that stands for one long option per setting: key + the setting's index */
	bool each_setting;
};

/* Keys of options without a short letter: OPT_LONG, OPT_LONG + 1, ... */
#define OPT_LONG 0x100
/* The end of a table. */
/* The settings replay and feed take as options: the program's, for frames it runs from a capture. */
#define CMD_OPTS_OFFLINE_SETTINGS                                                                          \
	{ .name = "pmtu", .key = 'm', .arg = required_argument, .meta = "N",                               \
	  .help = "the path MTU the senders use (settings: pmtu)" },                                       \
	{ .name = "pkey", .key = 'k', .arg = required_argument, .meta = "LIST",                            \
	  .help = "allowed P_Keys, comma-separated (settings: pkeys); also --pkeys" },                     \
	{ .name = "pkeys", .key = 'k', .arg = required_argument },                                          \
	{ .name = "port", .key = 'p', .arg = required_argument, .meta = "N",                               \
	  .help = "also validate UDP port N as RoCEv2 (repeatable, up to 4)" },                            \
	{ .name = "set", .key = 's', .arg = required_argument, .meta = "KEY=VAL",                          \
	  .help = "any run-time setting, as 'roceval config' takes them" }
#define CMD_OPT_END { NULL, 0, 0, NULL, NULL, NULL, 0, NULL, false, false }

/*
 * A subcommand: one of these per command file in user/cmd/, listed in main.c.  The
 * dispatcher accepts any unique prefix of `name`.
 */
struct command {
	const char *name;
	const char *args;    /* synopsis after the name */
	const char *summary; /* one line for `roceval help` */
	const char *help;    /* `roceval help NAME` after the summary, up to the options */
	const struct cmd_opt *opts; /* the options, or NULL */
	unsigned int col;	    /* the column their help starts at */
	const char *more;	    /* the help after the options: exit status, examples */
	int (*run)(int argc, char **argv);
};

/* Prints "Usage: roceval NAME ARGS", the summary and the help text. */
void command_help(FILE *f, const struct command *cmd);
/* The help text after the summary, as command_help() prints it (to be freed). */
char *command_help_text(const struct command *cmd);
/*
 * getopt over the command's table: fn(ctx, key, value) for each option in
 * order, which returns 0 or an exit status.  0 with optind at the first
 * operand, or the exit status (an unknown option or a missing value said
 * in the one line command_bad_option() writes).
 */
int command_options(const struct command *cmd, int argc, char **argv,
		    int (*fn)(void *ctx, int key, const char *value), void *ctx);
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
