# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# roceval: `make` builds, `make test` tests, `make demo` shows it working, `make help` lists the rest.

# OUTPUT and BIN let several builds share one tree: make OUTPUT=.out-x BIN=.out-x/roceval
OUTPUT    ?= .output
BIN       ?= roceval
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= cc
PYTHON    ?= /usr/bin/python3
V         ?= 0

ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Iinclude -Iuser/lib -Iuser/cmd -I$(OUTPUT) -D_GNU_SOURCE
# BPF_NO_PRESERVE_ACCESS_INDEX: the programs read only their context and packet bytes, whose
# layouts are uapi, so no CO-RE relocation (which makes libbpf read the kernel's BTF at each load).
BPF_CFLAGS := -target bpf -mcpu=v3 -O2 -g -Wall -fno-strict-aliasing -D__TARGET_ARCH_$(ARCH) -DBPF_NO_PRESERVE_ACCESS_INDEX \
	      -Iinclude -I$(OUTPUT) -I.
LDLIBS    := -lbpf -lelf -lz -lpcap -lxdp -lm -lpthread -lncursesw
# Opened by the code that needs them (dlopen), not linked: libmicrohttpd brings gnutls and eight
# more libraries, 5 ms of every process's start, for the daemon's endpoint alone.  The code opens
# the soname the linker would have recorded; the package depends on it all the same (make deb).
DLOPEN_LIBS := microhttpd
soname = $(shell readelf -d "$$($(CC) -print-file-name=lib$(1).so)" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
MHD_SONAME := $(call soname,microhttpd)
DLOPEN_CFLAGS := $(if $(MHD_SONAME),-DROCEVAL_MHD_SONAME='"$(MHD_SONAME)"')
CFLAGS    += $(DLOPEN_CFLAGS)

# `roceval feed --rdma`: the RDMA sniffer through libibverbs, where its header is installed;
# IBVERBS=0 builds without it (the option then says it is unavailable).
ifeq ($(origin IBVERBS),undefined)
IBVERBS := $(shell printf '\043include <infiniband/verbs.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1 || echo 0)
endif
ifeq ($(IBVERBS),1)
CFLAGS    += -DROCEVAL_IBVERBS
LDLIBS    += -libverbs
endif

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

HEADERS   := $(wildcard include/*.h) $(wildcard bpf/*.bpf.h)
# user/lib/ is libroceval.a (everything the commands, the fuzzers and the bench share): the
# base in user/lib/ itself, a folder per concern below it; user/cmd/ holds one file per
# command and main.c.
LIB_DIRS  := user/lib $(patsubst %/,%,$(wildcard user/lib/*/))
LIB_SRCS  := $(wildcard $(addsuffix /*.c,$(LIB_DIRS)))
LIB_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(LIB_SRCS))
CMD_SRCS  := $(wildcard user/cmd/*.c)
# user/bench/ is `roceval bench`, with the do-nothing XDP program it measures against.
BENCH_SRCS := $(filter-out %.bpf.c,$(wildcard user/bench/*.c))
CMD_OBJS  := $(patsubst user/%.c,$(OUTPUT)/%.o,$(CMD_SRCS) $(BENCH_SRCS))
USER_HDRS := $(wildcard $(addsuffix /*.h,$(LIB_DIRS)) user/cmd/*.h)

.DELETE_ON_ERROR:
.PHONY: all deps test demo bench bench-live fuzz clean vmlinux help install docs deb image image-test

all: $(BIN)

$(OUTPUT):
	$(Q)mkdir -p $@

$(OUTPUT)/gen_crc_tables: user/gen_crc_tables.c | $(OUTPUT)
	$(call msg,HOSTCC,$@)
	$(Q)$(CC) -O2 -o $@ $<

$(OUTPUT)/crc32_table.h: $(OUTPUT)/gen_crc_tables
	$(call msg,GEN,$@)
	$(Q)$< > $@

$(OUTPUT)/roceval.bpf.o: bpf/roceval.bpf.c $(HEADERS) $(OUTPUT)/crc32_table.h vmlinux.h Makefile | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/roceval.skel.h: $(OUTPUT)/roceval.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name roceval_bpf > $@

# The object without kfuncs (bpf/kfuncs.bpf.h) every load but the device-bound one opens:
# loader.c takes only its ELF bytes from its skeleton.
$(OUTPUT)/roceval_plain.bpf.o: bpf/roceval.bpf.c $(HEADERS) $(OUTPUT)/crc32_table.h vmlinux.h Makefile | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DROCEVAL_PLAIN -c $< -o $@

$(OUTPUT)/roceval_plain.skel.h: $(OUTPUT)/roceval_plain.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name roceval_plain_bpf > $@

$(OUTPUT)/%.o: user/%.c $(USER_HDRS) $(HEADERS) $(OUTPUT)/roceval.skel.h $(OUTPUT)/roceval_plain.skel.h Makefile | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUTPUT)/libroceval.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(CMD_OBJS) $(OUTPUT)/libroceval.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(CMD_OBJS) $(OUTPUT)/libroceval.a -o $@ $(LDLIBS)

# docs/rules.md and the manual page are generated from the command, rule and settings tables;
# a test checks they are current.
docs: $(BIN)
	./$(BIN) rules --markdown > docs/rules.md
	./$(BIN) help --man > docs/roceval.8

# make install [DESTDIR=...] [PREFIX=/usr/local]: the binary, its manual page, the systemd unit
# (running it from where it was installed, and naming the installed files in its instructions)
# and the sysusers.d entry for the user the unit names.
PREFIX      ?= /usr/local
SBINDIR     ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/roceval
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(SBINDIR)/roceval
	install -D -m 0644 docs/roceval.8 $(DESTDIR)$(MANDIR)/man8/roceval.8
	install -d -m 0755 $(DESTDIR)$(UNITDIR)
	sed -e 's#/usr/local/sbin/roceval#$(SBINDIR)/roceval#g' -e 's#/usr/local/share/doc/roceval#$(DOCDIR)#g' \
		-e 's#/usr/local/lib/sysusers.d#$(SYSUSERSDIR)#g' deploy/roceval.service > $(DESTDIR)$(UNITDIR)/roceval.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/roceval.service
	install -D -m 0644 deploy/roceval.sysusers $(DESTDIR)$(SYSUSERSDIR)/roceval.conf
	install -D -m 0644 deploy/roceval.conf.example $(DESTDIR)$(DOCDIR)/roceval.conf.example

# make deb: roceval_VERSION-1_ARCH.deb from this tree.  Depends is what dpkg-shlibdeps finds the
# binary, and a program linked against DLOPEN_LIBS, need, so a library added to LDLIBS or
# DLOPEN_LIBS reaches the package by itself (--warnings=1: that program uses none of their
# symbols, by design).  libibverbs
# finds no device without its providers (feed --rdma), which it does not depend on: recommended.
VERSION  := $(shell sed -n 's/^\#define ROCEVAL_VERSION "\(.*\)"/\1/p' user/lib/version.h)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB      := roceval_$(VERSION)-1_$(DEB_ARCH).deb
DEB_ROOT := $(OUTPUT)/deb/root
deb: $(BIN)
	rm -rf $(OUTPUT)/deb
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DEB_ROOT)) PREFIX=/usr UNITDIR=/lib/systemd/system
	gzip -9n $(DEB_ROOT)/usr/share/man/man8/roceval.8
	strip --strip-unneeded --remove-section=.comment $(DEB_ROOT)/usr/sbin/roceval
	install -D -m 0644 README.md $(DEB_ROOT)/usr/share/doc/roceval/README.md
	install -D -m 0644 -t $(DEB_ROOT)/usr/share/doc/roceval/docs docs/*.md
	install -D -m 0644 deploy/debian-copyright $(DEB_ROOT)/usr/share/doc/roceval/copyright
	mkdir -p $(DEB_ROOT)/DEBIAN $(OUTPUT)/deb/debian
	printf 'Source: roceval\n\nPackage: roceval\nArchitecture: any\n' > $(OUTPUT)/deb/debian/control
	printf 'int main(void) { return 0; }\n' | $(CC) -x c - -o $(DEB_ROOT)/dlopened -Wl,--no-as-needed $(addprefix -l,$(DLOPEN_LIBS))
	cd $(OUTPUT)/deb && dpkg-shlibdeps -O --warnings=1 -eroot/usr/sbin/roceval -eroot/dlopened > shlibs.substvars
	rm $(DEB_ROOT)/dlopened
	{ echo "Package: roceval"; echo "Version: $(VERSION)-1"; echo "Architecture: $(DEB_ARCH)"; \
	  echo "Maintainer: roceval developers <roceval@users.noreply.github.com>"; \
	  echo "Section: net"; echo "Priority: optional"; \
	  echo "Depends: $$(sed -n 's/^shlibs:Depends=//p' $(OUTPUT)/deb/shlibs.substvars)"; \
	  ! grep -q libibverbs $(OUTPUT)/deb/shlibs.substvars || echo "Recommends: ibverbs-providers"; \
	  echo "Installed-Size: $$(du -sk --exclude=DEBIAN $(DEB_ROOT) | cut -f1)"; \
	  echo "Homepage: https://github.com/roceval/roceval"; \
	  echo "Description: RoCEv2 validator at the XDP hook"; \
	  echo " roceval recomputes the ICRC of every RoCEv2 frame, checks every transport"; \
	  echo " header and the protocol's sequence rules, and counts each violation, live on"; \
	  echo " an interface (XDP) or offline over a capture, with a Prometheus exporter."; \
	} > $(DEB_ROOT)/DEBIAN/control
	install -m 0755 deploy/debian-postinst $(DEB_ROOT)/DEBIAN/postinst
	dpkg-deb --root-owner-group -Zxz --build $(DEB_ROOT) $(DEB)

# The image deploy/roceval-daemonset.yaml runs: the package above, on debian:12-slim (Dockerfile),
# built by podman, or by docker where podman is absent and a docker daemon answers.  No registry
# is needed: a missing debian:12 or debian:12-slim is made from the host's Debian mirror
# (deploy/base-image.sh), and podman builds with chroot isolation, which runs where containers
# cannot (cgroups v1 hybrid hosts).
IMAGE  ?= ghcr.io/roceval/roceval
ENGINE ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || { docker info >/dev/null 2>&1 && echo docker; })
image:
	@[ -n "$(ENGINE)" ] || { echo "make image: no podman (apt-get install podman) and no docker daemon" >&2; exit 1; }
	@$(ENGINE) image inspect debian:12 debian:12-slim >/dev/null 2>&1 || \
		{ echo "Making debian:12 and debian:12-slim from the host's Debian mirror"; deploy/base-image.sh $(ENGINE); }
	$(ENGINE) build $(if $(filter podman,$(ENGINE)),--isolation chroot --pull=never) --network host \
		-t $(IMAGE):$(VERSION) .

# The image's own roceval against the tree's and the DaemonSet's demands (tests/image-test.sh),
# with podman, after installing what that takes (as root).
IMAGE_DEPS := podman debootstrap curl
image-test: deps
	@$(MAKE) --no-print-directory deps DEPS="$(IMAGE_DEPS)"
	$(MAKE) all
	$(MAKE) image ENGINE=podman
	IMAGE=$(IMAGE):$(VERSION) ROCEVAL=$(abspath $(BIN)) sh tests/image-test.sh

# Regenerate the tracked vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

# Debian packages for building, testing and the demo.
DEPS := clang llvm libbpf-dev bpftool libc6-dev libelf-dev zlib1g-dev libpcap0.8-dev libxdp-dev libmicrohttpd-dev libncurses-dev libibverbs-dev tmux \
	iproute2 python3 python3-scapy python3-pytest python3-pytest-xdist python3-yaml tshark tcpdump pkg-config make gcc prometheus \
	dpkg-dev util-linux man-db xdp-tools
deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# TESTS=tests/test_x.py (or -k EXPR via PYTEST_ARGS) narrows the run.  The tests run in
# TEST_JOBS processes side by side (pytest-xdist): live ones wait on namespaces and timers more
# than they compute, so twice the cores keeps the cores busy.  TEST_JOBS=1: one process.
TESTS     ?= tests
TEST_JOBS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: deps
	$(MAKE) all
	ROCEVAL_BIN=$(abspath $(BIN)) $(PYTHON) -m pytest -p no:cacheprovider -ra \
		$(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadgroup) $(PYTEST_ARGS) $(TESTS)

clean:
	rm -rf $(OUTPUT) $(BIN) roceval_*.deb

help:
	@echo "make            build the BPF object and the roceval CLI"
	@echo "make deps       install the Debian packages roceval needs (as root)"
	@echo "make test       run the whole test suite (as root)"
	@echo "make bench      time the validator per frame against XDP_PASS and zlib (as root)"
	@echo "make bench-live Mpps per core through a veth pair, roceval against XDP_PASS (as root)"
	@echo "make vmlinux    regenerate vmlinux.h from /sys/kernel/btf/vmlinux"
	@echo "make docs       regenerate docs/rules.md and docs/roceval.8 from the tables"
	@echo "make install    install binary, manual page, systemd unit (DESTDIR, PREFIX=/usr/local)"
	@echo "make deb        build roceval_VERSION-1_ARCH.deb"
	@echo "make image      build the container image the DaemonSet runs (podman, or docker)"
	@echo "make image-test build it and run its roceval against the tree's (as root)"
	@echo "make clean      remove build output"

# Fuzzing: make fuzz SECONDS=N (tests/fuzz/fuzz.mk).
include tests/fuzz/fuzz.mk

# `roceval bench` measures against a do-nothing XDP program of its own.
$(OUTPUT)/bench_pass.bpf.o: user/bench/bench_pass.bpf.c $(HEADERS) vmlinux.h Makefile | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -c $< -o $@

$(OUTPUT)/bench_pass.skel.h: $(OUTPUT)/bench_pass.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bench_pass_bpf > $@

$(OUTPUT)/bench/%.o: user/bench/%.c $(wildcard user/bench/*.h) $(USER_HDRS) $(HEADERS) $(OUTPUT)/roceval.skel.h \
		$(OUTPUT)/bench_pass.skel.h Makefile | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# Per-frame costs (as root): baseline, headers only, full ICRC, zlib; duplicate and steady paths.
bench: $(BIN)
	$(abspath $(BIN)) bench

# Mpps per core through a veth pair in a namespace of its own (as root).
bench-live: $(BIN)
	$(abspath $(BIN)) bench --live

# The README's first command (as root): roceval attached in a pair of network namespaces,
# catching faults the generator injects, checked against what it injected (demo/demo.sh).
demo: deps
	$(MAKE) all
	ROCEVAL=$(abspath $(BIN)) bash demo/demo.sh
