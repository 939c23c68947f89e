// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>

#include "http.h"
#include "log.h"
#include "report/report.h"

/* Two threads: one can wait on a slow bpf() read while the other accepts. */
#define HTTP_THREADS 2
/* Request line and headers of one connection; a scrape's are a few hundred bytes. */
#define HTTP_CONN_MEMORY (16 * 1024)

struct http_server {
	struct MHD_Daemon *mhd;
	http_render_fn render;
	void *ctx;
};

int http_route(const char *method, const char *path, const char **body, int *metrics)
{
	static const char landing[] = "roceval exporter: metrics at /metrics\n";
	static const char notfound[] = "not found; metrics are at /metrics\n";
	static const char badmethod[] = "only GET and HEAD\n";

	*metrics = 0;
	*body = NULL;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		*body = badmethod;
		return MHD_HTTP_METHOD_NOT_ALLOWED;
	}
	if (!strcmp(path, "/metrics")) {
		*metrics = 1;
		return MHD_HTTP_OK;
	}
	if (!strcmp(path, "/")) {
		*body = landing;
		return MHD_HTTP_OK;
	}
	*body = notfound;
	return MHD_HTTP_NOT_FOUND;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct http_server *s = cls;
	struct MHD_Response *resp;
	const char *body;
	enum MHD_Result ret;
	int metrics, status = http_route(method, url, &body, &metrics);

	if (metrics) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (!f)
			return MHD_NO; /* out of memory: MHD closes the connection */
		s->render(s->ctx, f);
		if (fclose(f)) {
			free(text);
			return MHD_NO;
		}
		resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(text);
			return MHD_NO;
		}
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
	} else {
		resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
						       MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
		if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		/* a client that sent something else is not worth a kept-alive slot */
		if (status != MHD_HTTP_OK)
			MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

struct http_server *http_start(int listen_fd, http_render_fn render, void *ctx)
{
	struct http_server *s = calloc(1, sizeof(*s));

	if (!s) {
		pr_warn("couldn't start the HTTP server: out of memory");
		close(listen_fd);
		return NULL;
	}
	s->render = render;
	s->ctx = ctx;
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
				  answer, s,
				  MHD_OPTION_LISTEN_SOCKET, listen_fd,
				  MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)HTTP_THREADS,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_CONN_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNS,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
				  MHD_OPTION_END);
	if (!s->mhd) {
		pr_warn("couldn't start the HTTP server (libmicrohttpd)");
		close(listen_fd);
		free(s);
		return NULL;
	}
	return s;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);
	free(s);
}
