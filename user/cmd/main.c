// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * roceval: one binary, subcommands as data (struct command, command.c),
 * unique prefixes accepted, `roceval help CMD` for each.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"
#include "log.h"
#include "manpage.h"

extern const struct command cmd_bench, cmd_daemon, cmd_replay, cmd_feed, cmd_rules;
extern const struct command cmd_gen;
extern const struct command cmd_attach, cmd_detach, cmd_status, cmd_stats, cmd_top, cmd_trace,
	cmd_config;

static const struct command *const commands[] = {
	&cmd_bench,
	&cmd_daemon,
	&cmd_replay,
	&cmd_feed,
	&cmd_rules,
	&cmd_gen,
	&cmd_attach,
	&cmd_detach,
	&cmd_status,
	&cmd_stats,
	&cmd_top,
	&cmd_trace,
	&cmd_config,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char global_options[] =
	"  -v, --verbose  more detail (repeat for libbpf debug output)\n"
	"  --netns NS     act in network namespace NS (a name 'ip netns' knows, or a path\n"
	"                 such as /proc/PID/ns/net) instead of this process's own\n"
	"  -h, --help     this text; 'roceval help COMMAND' for a command\n"
	"  -V, --version  print the version\n";

static void usage(FILE *f)
{
	fprintf(f, "Usage: roceval [-v] COMMAND [ARGS]\n\n"
		   "Validate RoCEv2 traffic at the XDP hook: ICRC, every transport header, the\n"
		   "protocol's rules; count each violation.  Commands:\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "\nOptions:\n%s\n"
		   "Any unique prefix of a command works ('roceval rep' is 'roceval replay').\n"
		   "'roceval help --man' writes the manual page, roceval(8).\n\n"
		   "Exit status, for every command: 0 success; 1 a runtime failure (no such\n"
		   "interface, not attached, no privileges, a failed read or write); 2 bad usage\n"
		   "(an unknown option, a bad value, a malformed file), said in one line.\n",
		global_options);
}

/*
 * Live commands act on the attachments of the network namespace they run in;
 * --netns moves the process into another one first.  Only the network
 * namespace changes, so the bpffs with the pins stays where it is.
 */
static int enter_netns(const char *ns)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), strchr(ns, '/') ? "%s" : "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "roceval: --netns %s: Couldn't open %s: %s\n", ns, path, strerror(errno));
		return EXIT_USAGE;
	}
	if (setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "roceval: --netns %s: Couldn't enter it: %s\n", ns, strerror(errno));
		close(fd);
		return errno == EINVAL ? EXIT_USAGE : 1;
	}
	close(fd);
	return 0;
}

static const struct command *find_command(const char *name)
{
	const struct command *found = NULL;
	size_t len = strlen(name);
	int matches = 0;

	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(commands[i]->name, name))
			return commands[i];
		if (!strncmp(commands[i]->name, name, len)) {
			found = commands[i];
			matches++;
		}
	}
	if (matches == 1)
		return found;
	if (matches > 1) {
		fprintf(stderr, "roceval: '%s' is ambiguous:", name);
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (!strncmp(commands[i]->name, name, len))
				fprintf(stderr, " %s", commands[i]->name);
		fputc('\n', stderr);
	} else {
		fprintf(stderr, "roceval: '%s' is not a command; see 'roceval help'\n", name);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
		} else if (!strcmp(a, "-vv")) {
			verbose += 2;
		} else if (!strcmp(a, "--netns") || !strncmp(a, "--netns=", 8)) {
			const char *ns = a[7] == '=' ? a + 8 : i + 1 < argc ? argv[++i] : NULL;
			int err;

			if (!ns || !*ns) {
				fprintf(stderr, "roceval: --netns needs a namespace; see 'roceval --help'\n");
				return EXIT_USAGE;
			}
			if ((err = enter_netns(ns)))
				return err;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("roceval %s\n", ROCEVAL_VERSION);
			return 0;
		} else {
			fprintf(stderr, "roceval: unknown option '%s'; see 'roceval --help'\n", a);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 == argc) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i + 1], "--man")) {
			print_manpage(stdout, commands, NCOMMANDS, global_options);
			return 0;
		}
		cmd = find_command(argv[i + 1]);
		if (!cmd)
			return EXIT_USAGE;
		command_help(stdout, cmd);
		return 0;
	}
	cmd = find_command(argv[i]);
	if (!cmd)
		return EXIT_USAGE;
	for (int j = i + 1; j < argc; j++) {
		if (!strcmp(argv[j], "--"))
			break;
		if (!strcmp(argv[j], "-h") || !strcmp(argv[j], "--help")) {
			command_help(stdout, cmd);
			return 0;
		}
	}
	opterr = 0; /* command_bad_option() says it, in one line */
	return cmd->run(argc - i, argv + i);
}
