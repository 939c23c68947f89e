// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dlfcn.h>
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

#ifndef ROCEVAL_MHD_SONAME
#error "libmicrohttpd's soname is unknown: install libmicrohttpd-dev (make deps)"
#endif

/*
 * libmicrohttpd is opened when the endpoint starts, not linked: it and the TLS libraries it
 * brings (gnutls and eight more) made every roceval process's start 5 ms longer
 * (docs/performance.md), for a server only the daemon runs.
 */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

static const struct {
	const char *name;
	void **fn;
} mhd_symbols[] = {
	{ "MHD_start_daemon", (void **)&mhd.start_daemon },
	{ "MHD_stop_daemon", (void **)&mhd.stop_daemon },
	{ "MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer },
	{ "MHD_add_response_header", (void **)&mhd.add_response_header },
	{ "MHD_queue_response", (void **)&mhd.queue_response },
	{ "MHD_destroy_response", (void **)&mhd.destroy_response },
};

int http_load(void)
{
	static void *lib;
	size_t i;

	if (lib)
		return 0;
	lib = dlopen(ROCEVAL_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		pr_warn("the metrics endpoint needs libmicrohttpd (or --listen none): %s", dlerror());
		return -1;
	}
	for (i = 0; i < sizeof(mhd_symbols) / sizeof(mhd_symbols[0]); i++) {
		*mhd_symbols[i].fn = dlsym(lib, mhd_symbols[i].name);
		if (!*mhd_symbols[i].fn) {
			pr_warn("the metrics endpoint: %s has no %s", ROCEVAL_MHD_SONAME, mhd_symbols[i].name);
			dlclose(lib);
			lib = NULL;
			return -1;
		}
	}
	return 0;
}

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
		resp = mhd.create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
		if (!resp) {
			free(text);
			return MHD_NO;
		}
		mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
	} else {
		resp = mhd.create_response_from_buffer(strlen(body), (void *)body,
						       MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; charset=utf-8");
		if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
			mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		/* a client that sent something else is not worth a kept-alive slot */
		if (status != MHD_HTTP_OK)
			mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	ret = mhd.queue_response(conn, status, resp);
	mhd.destroy_response(resp);
	return ret;
}

struct http_server *http_start(int listen_fd, http_render_fn render, void *ctx)
{
	struct http_server *s = calloc(1, sizeof(*s));

	if (http_load()) {
		close(listen_fd);
		return NULL;
	}
	if (!s) {
		pr_warn("couldn't start the HTTP server: out of memory");
		close(listen_fd);
		return NULL;
	}
	s->render = render;
	s->ctx = ctx;
	s->mhd = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
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
	mhd.stop_daemon(s->mhd);
	free(s);
}
