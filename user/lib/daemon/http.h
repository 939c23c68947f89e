/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's HTTP endpoint, served by libmicrohttpd from its own threads
 * (epoll, a small thread pool), each connection with an inactivity timeout
 * and the whole server with a connection limit: a scrape is answered however
 * many idle or slow clients are connected.
 *
 *   GET|HEAD /metrics   the render callback's text, PROM_CONTENT_TYPE
 *   GET|HEAD /          a one-line landing page
 *   anything else       404; other methods 405 with Allow: GET, HEAD
 */
#ifndef ROCEVAL_HTTP_H
#define ROCEVAL_HTTP_H

#include <stdio.h>

/* Seconds a connection may stay silent; Prometheus' default scrape_timeout is 10 s. */
#define HTTP_CONN_TIMEOUT_S 10
/* Connections at once; past that new ones are refused until some close. */
#define HTTP_MAX_CONNS 512

/* Writes the metrics into f; called from the server's threads. */
typedef void (*http_render_fn)(void *ctx, FILE *f);

struct http_server;

/* Opens libmicrohttpd, once; -1 when it cannot, printed. */
int http_load(void);
/* Serves on listen_fd, which it takes over (closed by http_stop()).  NULL on failure, printed. */
struct http_server *http_start(int listen_fd, http_render_fn render, void *ctx);
/* Stops the threads and closes every connection and the listening socket. */
void http_stop(struct http_server *s);

/*
 * What the endpoint answers to method and path (query string removed):
 * the status code, and the body unless it is the metrics.
 */
int http_route(const char *method, const char *path, const char **body, int *metrics);

#endif
