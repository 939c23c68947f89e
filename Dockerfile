# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The image deploy/roceval-daemonset.yaml runs, built by `make image` (and checked by
# `make image-test`, docs/deployment.md).  The first stage builds the Debian package from this
# tree (make deb); the image is debian:12-slim with that package installed by apt, which pulls
# its dependencies as on any Debian 12 host.

FROM debian:12 AS build
# What `make deb` runs and links against: the compilers, bpftool, a -dev package for each
# library in the Makefile's LDLIBS and DLOPEN_LIBS (libc6-dev: -lm -lpthread), dpkg-shlibdeps and strip.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       clang bpftool gcc make libc6-dev libbpf-dev libelf-dev zlib1g-dev libpcap0.8-dev libxdp-dev \
       libmicrohttpd-dev libncurses-dev libibverbs-dev dpkg-dev binutils \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make -j"$(nproc)" deb && cp roceval_*.deb /roceval.deb

FROM debian:12-slim
COPY --from=build /roceval.deb /tmp/roceval.deb
# apt-get clean: else the downloaded packages and apt's two caches of the lists stay (80 MB)
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/roceval.deb \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /tmp/roceval.deb \
    && roceval --version
ENTRYPOINT ["/usr/sbin/roceval"]
CMD ["daemon", "--config", "/etc/roceval/roceval.conf"]
