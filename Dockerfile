# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The image deploy/roceval-daemonset.yaml runs: `make image`, or
#   docker build -t ghcr.io/roceval/roceval:VERSION .
# The first stage builds the Debian package from this tree (make deb); the image
# is debian:12-slim with that package installed by apt, which pulls its
# dependencies as on any Debian 12 host.

FROM debian:12 AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev libxdp-dev \
       make gcc pkg-config dpkg-dev binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make -j"$(nproc)" deb && cp roceval_*.deb /roceval.deb

FROM debian:12-slim
COPY --from=build /roceval.deb /tmp/roceval.deb
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/roceval.deb \
    && rm -rf /var/lib/apt/lists/* /tmp/roceval.deb \
    && roceval --version
ENTRYPOINT ["/usr/sbin/roceval"]
CMD ["daemon", "--config", "/etc/roceval/roceval.conf"]
