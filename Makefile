# SPDX-License-Identifier: GPL-2.0
#
# fwdsched top-level Makefile.  The module itself is described by Kbuild;
# this file drives the out-of-tree builds for the Debian kernels, the
# tests, the benchmark and the upstream series.
#
#   make                  build for every kernel in KVERS
#   make KVER=6.12        build build/<release>/fwdsched.ko for one kernel
#   make check            install what is missing, build, run all tests
#   make check-debug      the tests on debug kernels (lockdep, KASAN, ...)
#   make debug-kernel     build the debug kernels once (kept in FWD_CACHE)
#   make bench            the benchmark on the emulated flash card: is
#                         fwdsched better here? (about 30 minutes);
#                         FULL=1: the full matrix (every card, both
#                         transports, the papers' figures, null_blk)
#   make soak             20 minutes of verified mixed I/O with scheduler
#                         switches on the SD card and null_blk (6.12)
#   make cluster          paper 001's cluster of flash nodes (NBD, dm-linear,
#                         a shaped link) on 6.12, with its report
#   make crosslayer       the cross-layer timeline (KVER=6.12 by default)
#   make profile          where the schedulers' CPU goes on null_blk without
#                         latency: perf in the guest (KVER=6.12 by default)
#   make lint             checkpatch --strict, W=1 and sparse on all kernels;
#                         W=1 for arm64 and arm (tools/setup/build-cross)
#   make patches          regenerate patches/ from the sources
#   make blktests         blktests' scheduler tests with fwdsched and the
#                         mq-deadline wrap patch (BLKTESTS_SRC=<checkout>;
#                         KVER=<series>, default the newest)
#   make install          build for the running kernel (or KVER=<release>)
#                         and install into its updates/; UDEV=1 adds the
#                         udev rule, DESTDIR= installs under a staging root
#   make uninstall        remove what make install put there
#   make deb              the Debian package fwdsched-dkms, in build/deb/
#   make check-pkg        test make install, the package and DKMS in a
#                         clean Debian 12 chroot, then load in a 6.12 guest

# The kernels, listed once for the whole project in tools/kernels.
KERNELS := $(strip $(file < tools/kernels))
# The newest, which the upstream series are made against (as
# FWD_UPSTREAM_KERNEL in tools/lib/host.sh).
UPSTREAM := $(lastword $(KERNELS))
KVERS ?= $(KERNELS)
KVER ?=
BUILD_ARGS ?= W=1

ifneq ($(KVER),)
KVERS := $(KVER)
endif

# The debug kernels of make check-debug (tools/setup/build-debug-kernel);
# make check tests them too when they are built (see tools/check).
DEBUG_KVERS ?= $(strip $(file < tools/debug-kernels))

.PHONY: all deps check check-debug debug-kernel bench crosslayer profile lint patches blktests \
	install uninstall deb check-pkg soak cluster clean $(addprefix build-,$(KVERS))

all: $(addprefix build-,$(KVERS))

$(addprefix build-,$(KVERS)): build-%: deps
	tools/setup/build-ko $* $(BUILD_ARGS)

deps:
	tools/setup/deps

check: deps
	KVERS="$(KVERS)" tools/check

check-debug: deps
	DEBUG_KVERS="$(DEBUG_KVERS)" tools/check-debug

debug-kernel: deps
	for s in $(DEBUG_KVERS); do tools/setup/build-debug-kernel $$s || exit 1; done

# FULL=1 is BENCH_FULL=1 (tools/analysis/benchplan.py); unset, the
# environment's BENCH_FULL stands.
bench: deps
	$(if $(FULL),BENCH_FULL="$(FULL)" )tools/bench

soak: deps
	tools/soak

cluster: deps
	tools/cluster

crosslayer: deps
	CROSSLAYER_KVER=$(or $(KVER),6.12) tools/crosslayer

profile: deps
	PROFILE_KVER=$(or $(KVER),6.12) tools/profile

lint: deps
	tools/lint $(KVERS)

FWD_CACHE ?= /var/cache/fwdsched
# The series are based on Debian's source of UPSTREAM (fetched by
# tools/setup/fetch-kernel): the block series on its tarball, the
# mq-deadline and mmc patches on the part of it extracted into build/src/.  The mmc patch must
# also apply to the other kernels, for tools/setup/build-mmc-core.
patches: deps
	rel=$$(tools/setup/fetch-kernel $(UPSTREAM) | tail -n 1) && \
	tools/patches/mkpatches --base $(FWD_CACHE)/debs/$$rel/src/usr/src/linux-source-$(UPSTREAM).tar.xz && \
	tools/patches/mkpatches-mq-deadline --base build/src/$$rel && \
	tools/patches/mkpatches-mmc --base build/src/$$rel --check \
		$$(for k in $(KERNELS); do echo build/src/$$(tools/setup/fetch-kernel $$k | tail -n 1); done)

blktests: deps
	tools/blktests $(KVER)

install:
	@DESTDIR="$(DESTDIR)" UDEV="$(UDEV)" tools/install $(KVER)

uninstall:
	@DESTDIR="$(DESTDIR)" tools/install -u $(KVER)

deb:
	@tools/deb

check-pkg: deps
	tools/check-pkg

clean:
	rm -rf build/*/obj
