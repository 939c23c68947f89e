// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every command shares: its option table read into getopt and into its
 * help, and the one-line usage errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"
#include "settings.h"

/* getopt's long options, with one per setting for an each_setting row */
#define MAX_LONG 128

static void print_row(FILE *f, const struct cmd_opt *o, unsigned int col, bool no_short)
{
	char left[96];
	int n;

	if (o->left)
		n = snprintf(left, sizeof(left), "  %s", o->left);
	else if (o->key > 0 && o->key < OPT_LONG)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->key, o->name, o->meta ? " " : "",
			     o->meta ?: "");
	else
		n = snprintf(left, sizeof(left), "%s--%s%s%s", no_short ? "  " : "      ", o->name,
			     o->meta ? " " : "", o->meta ?: "");
	if (o->col)
		col = o->col;
	fprintf(f, "%s%*s", left, n < (int)col ? (int)col - n : 1, "");
	for (const char *s = o->help; *s; s++) {
		fputc(*s, f);
		if (*s == '\n' && s[1])
			fprintf(f, "%*s", (int)col, "");
	}
	fputc('\n', f);
}

static void print_options(FILE *f, const struct command *cmd)
{
	unsigned int col = cmd->col;
	bool no_short = false;

	for (const struct cmd_opt *o = cmd->opts; o && (o->name || o->key || o->heading || o->left); o++) {
		if (o->heading) {
			fprintf(f, "%s\n", o->heading);
			col = o->col ?: cmd->col;
			no_short = o->no_short;
		} else if (o->help) {
			print_row(f, o, col, no_short);
		}
	}
}

char *command_help_text(const struct command *cmd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs(cmd->help ?: "", f);
	print_options(f, cmd);
	fputs(cmd->more ?: "", f);
	fclose(f);
	return text;
}

void command_help(FILE *f, const struct command *cmd)
{
	char *text = command_help_text(cmd);

	fprintf(f, "Usage: roceval %s %s\n\n%s\n", cmd->name, cmd->args, cmd->summary);
	if (text && *text)
		fprintf(f, "\n%s", text);
	free(text);
}

int command_usage_error(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "roceval %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see 'roceval help %s'\n", cmd->name);
	return EXIT_USAGE;
}

int command_bad_option(const struct command *cmd, int opt, char **argv)
{
	/* argv[optind - 1] is the rejected option, or the one whose value is missing */
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return command_usage_error(cmd, "option '%s' needs a value", arg);
	if (!strncmp(arg, "--", 2))
		return command_usage_error(cmd, "unknown option or missing value: '%s'", arg);
	return command_usage_error(cmd, "unknown option '-%c'", optopt);
}

/* getopt's option string and long options from the table. */
static void getopt_tables(const struct command *cmd, char *shorts, size_t len, struct option *longs)
{
	static const char *const colons[] = { [no_argument] = "", [required_argument] = ":",
					      [optional_argument] = "::" };
	size_t n = 0, used = snprintf(shorts, len, ":");

	for (const struct cmd_opt *o = cmd->opts; o && (o->name || o->key || o->heading || o->left); o++) {
		if (o->each_setting) {
			for (int i = 0; settings_keys[i] && n < MAX_LONG - 1; i++)
				longs[n++] = (struct option){ settings_keys[i], required_argument, NULL, o->key + i };
			continue;
		}
		if (!o->key)
			continue;
		if (o->key < OPT_LONG && used < len)
			used += snprintf(shorts + used, len - used, "%c%s", o->key, colons[o->arg]);
		if (o->name && n < MAX_LONG - 1)
			longs[n++] = (struct option){ o->name, o->arg, NULL, o->key };
	}
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
}

int command_options(const struct command *cmd, int argc, char **argv,
		    int (*fn)(void *ctx, int key, const char *value), void *ctx)
{
	struct option longs[MAX_LONG];
	char shorts[128];
	int opt, ret;

	getopt_tables(cmd, shorts, sizeof(shorts), longs);
	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return command_bad_option(cmd, opt, argv);
		ret = fn(ctx, opt, optarg);
		if (ret)
			return ret;
	}
	return 0;
}

int command_open_ifaces(const struct command *cmd, int argc, char **argv, struct live_iface *li)
{
	const char *ifname = NULL;

	if (optind < argc)
		ifname = argv[optind++];
	if (optind < argc)
		return -command_usage_error(cmd, "one interface at a time ('%s'?)", argv[optind]);
	if (require_caps(true))
		return -1;
	return live_open_local(ifname, li, LIVE_MAX_IFACES);
}
