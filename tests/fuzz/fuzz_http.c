// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the daemon's metrics endpoint, the one parser that
 * listens on a socket: the input is whatever a client sends, written to a
 * real connection that the real handle_client() (user/daemon.c, included to
 * reach it) accepts, reads, parses and answers, with no interface served.
 * Besides the sanitizers it checks that every answer is one well-formed
 * HTTP/1.1 status line with a status the endpoint documents, or nothing.
 */
#include "../../user/daemon.c"

#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

int command_usage_error(const struct command *cmd, const char *fmt, ...)
{
	return EXIT_USAGE;
}

static struct sockaddr_un addr;
static socklen_t addr_len;
static struct daemon d;

static void setup(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	addr.sun_family = AF_UNIX;
	/* abstract socket: nothing on the file system to clean up */
	addr_len = offsetof(struct sockaddr_un, sun_path) + 1 +
		   snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "roceval-fuzz-http-%d", getpid());
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, addr_len) || listen(fd, 4)) {
		perror("fuzz_http: listening socket");
		exit(1);
	}
	d.listen_fd = fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const statuses[] = { "200 OK", "400 Bad Request", "404 Not Found",
						"405 Method Not Allowed",
						"431 Request Header Fields Too Large" };
	static char resp[1 << 20];
	size_t got = 0;
	ssize_t n;
	bool known = false;
	int c;

	if (!d.listen_fd)
		setup();
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&addr, addr_len))
		abort();
	if (size && write(c, data, size) != (ssize_t)size)
		abort();
	shutdown(c, SHUT_WR);
	handle_client(&d);
	while ((n = read(c, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += n;
	close(c);
	resp[got] = '\0';
	if (!got)
		return 0;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		size_t l = strlen(statuses[i]);

		if (!strncmp(resp, "HTTP/1.1 ", 9) && !strncmp(resp + 9, statuses[i], l) &&
		    !strncmp(resp + 9 + l, "\r\n", 2))
			known = true;
	}
	if (!known || !strstr(resp, "\r\nConnection: close\r\n\r\n")) {
		fprintf(stderr, "malformed answer: %.200s\n", resp);
		abort();
	}
	return 0;
}
