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
CFLAGS    += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Iinclude -I$(OUTPUT) -D_GNU_SOURCE
BPF_CFLAGS := -target bpf -O2 -g -Wall -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(OUTPUT) -I.
LDLIBS    := -lbpf -lelf -lz -lpcap -lxdp -lm -lmicrohttpd -lpthread -lncursesw

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

HEADERS   := $(wildcard include/*.h) $(wildcard bpf/*.bpf.h)
USER_SRCS := $(filter-out user/gen_crc_tables.c,$(wildcard user/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/%.o,$(USER_SRCS))
USER_HDRS := $(wildcard user/*.h)

.DELETE_ON_ERROR:
.PHONY: all deps test demo bench fuzz clean vmlinux help install docs

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

$(OUTPUT)/%.o: user/%.c $(USER_HDRS) $(HEADERS) $(OUTPUT)/roceval.skel.h Makefile | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BIN): $(USER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# docs/rules.md is generated from the rule and settings tables; a test checks it is current.
docs: $(BIN)
	./$(BIN) rules --markdown > docs/rules.md

# Regenerate the tracked vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h

# Debian packages for building, testing and the demo.
DEPS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libpcap-dev libxdp-dev libmicrohttpd-dev libncurses-dev tmux \
	iproute2 python3 python3-scapy python3-pytest python3-yaml tshark tcpdump pkg-config make gcc prometheus
deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# TESTS=tests/test_x.py (or -k EXPR via PYTEST_ARGS) narrows the run.
TESTS ?= tests
test: deps
	$(MAKE) all
	ROCEVAL_BIN=$(abspath $(BIN)) $(PYTHON) -m pytest -p no:cacheprovider -ra $(PYTEST_ARGS) $(TESTS)

clean:
	rm -rf $(OUTPUT) $(BIN)

help:
	@echo "make            build the BPF object and the roceval CLI"
	@echo "make deps       install the Debian packages roceval needs (as root)"
	@echo "make test       run the whole test suite (as root)"
	@echo "make bench      time the validator per frame against XDP_PASS and zlib (as root)"
	@echo "make vmlinux    regenerate vmlinux.h from /sys/kernel/btf/vmlinux"
	@echo "make docs       regenerate docs/rules.md from the rule table"
	@echo "make clean      remove build output"

# Fuzzing: make fuzz SECONDS=N (tests/fuzz/fuzz.mk).
include tests/fuzz/fuzz.mk

# `roceval bench` measures against a do-nothing XDP program of its own.
$(OUTPUT)/bench_pass.bpf.o: bpf/bench_pass.bpf.c vmlinux.h Makefile | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench_pass.skel.h: $(OUTPUT)/bench_pass.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bench_pass_bpf > $@

$(OUTPUT)/cmd_bench.o: $(OUTPUT)/bench_pass.skel.h

# The performance figures of issue 6 (as root): baseline, headers only, full ICRC, zlib.
bench: $(BIN)
	$(abspath $(BIN)) bench

# The README's first command (as root): roceval attached in a pair of network namespaces,
# catching faults the generator injects, checked against what it injected (demo/demo.sh).
demo: deps
	$(MAKE) all
	ROCEVAL=$(abspath $(BIN)) bash demo/demo.sh
