// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the daemon's metrics endpoint, the one parser that
 * listens on a socket: the input is whatever a client sends, written to a
 * real TCP connection on loopback served by the real HTTP server
 * (user/lib/daemon/http.c: libmicrohttpd, the routing, the Prometheus rendering of one
 * interface).  Besides the sanitizers it checks that every answer starts
 * with one well-formed HTTP/1.x status line with a status the endpoint or
 * the library documents, or is nothing, and that a /metrics answer carries
 * the rendered families.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/service.h"
#include "report/report.h"

static struct sockaddr_in addr;

static void render(void *ctx, FILE *f)
{
	static const struct roceval_counters c = { .total = { [TOTAL_FRAMES] = 7 } };
	/* a name with every character a label value must escape */
	struct prom_iface pi = { .ifname = "fz\"\\\n0", .mode = "native", .hook = "xdp", .prog_id = 1,
				 .c = &c, .flows = 3, .flows_max = 8 };

	prom_write(f, &pi, 1, 1.5);
}

static bool wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void setup(void)
{
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	signal(SIGPIPE, SIG_IGN);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&addr, &len) || !http_start(fd, render, NULL)) {
		perror("fuzz_http: serving on loopback");
		exit(1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const statuses[] = {
		"200 OK", "400 Bad Request", "404 Not Found", "405 Method Not Allowed",
		/* what libmicrohttpd itself answers to requests it will not take */
		"413 Content Too Large", "413 Payload Too Large", "414 URI Too Long",
		"431 Request Header Fields Too Large", "500 Internal Server Error",
		"501 Not Implemented", "505 HTTP Version Not Supported",
	};
	static char resp[1 << 20];
	size_t got = 0, sent = 0;
	ssize_t n;
	bool known = false;
	int c;

	if (!addr.sin_port)
		setup();
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&addr, sizeof(addr)))
		abort();
	/* the server may answer and close before it has read everything */
	while (sent < size && (n = send(c, data + sent, size - sent, MSG_NOSIGNAL)) > 0)
		sent += n;
	shutdown(c, SHUT_WR);
	/*
	 * A request cut short before its header block ends is not answered: the
	 * server keeps the connection until its inactivity timeout.  Those are
	 * let go after a short wait; a complete one gets its answer in full.
	 */
	bool complete = memmem(data, size, "\n\r\n", 3) || memmem(data, size, "\n\n", 2);

	while (wait_readable(c, complete ? 2000 : 5) &&
	       (n = read(c, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += n;
	close(c);
	resp[got] = '\0';
	if (!got)
		return 0;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		size_t l = strlen(statuses[i]);

		if ((!strncmp(resp, "HTTP/1.1 ", 9) || !strncmp(resp, "HTTP/1.0 ", 9)) &&
		    !strncmp(resp + 9, statuses[i], l) && !strncmp(resp + 9 + l, "\r\n", 2))
			known = true;
	}
	if (!known) {
		fprintf(stderr, "malformed answer: %.200s\n", resp);
		abort();
	}
	if (size > 12 && !memcmp(data, "GET /metrics ", 13) && !strncmp(resp + 9, "200", 3) &&
	    !strstr(resp, "roceval_frames_total{interface=\"fz\\\"\\\\\\n0\"} 7\n")) {
		fprintf(stderr, "metrics without the rendered sample: %.400s\n", resp);
		abort();
	}
	return 0;
}
