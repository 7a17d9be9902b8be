# SPDX-License-Identifier: GPL-2.0
# IET: iscsi_trgt.ko (kernel/), ietd and ietadm (usr/), and their tests.
#
#   make                 build the module and the tools
#   make check           unit tests on the host, then the VM suite
#   make run             a VM exporting a demo LUN at 127.0.0.1:3260
#   make install         module, tools, sample config; depmod
#                        (install-kernel and install-usr: one half)
#   make dkms-install    the module through DKMS, rebuilt on kernel upgrades
#   make deb             Debian packages: iscsitarget and iscsitarget-dkms
#   make check-cluster   the two-node cluster's failover scenarios
#   make bench           IET against LIO and tgt (not a test)

# The kernel to build for: KDIR if given, else the running kernel's build
# tree, else the newest installed Debian 12 generic kernel's (never an -rt,
# -cloud or debug one by accident); it says so when it had to choose.
KVER := $(shell uname -r)
KDIR ?= $(shell scripts/kernels kdir default 2>/dev/null)
KREL = $(shell scripts/kernels release $(KDIR) 2>/dev/null)
# One build directory per kernel: a module built for one is never loaded
# into another.
KBUILD = $(CURDIR)/build/kmod/$(KREL)
KSRC = $(filter-out %.mod.c,$(wildcard $(CURDIR)/kernel/*.[ch])) $(CURDIR)/kernel/Kbuild

# make check: the VM suite on each of KERNELS (NAME, NAME:K/N for part K of
# it split N ways, +paths and -guard after it, NAME:paths, NAME:short or
# NAME:guard; names as scripts/kernels knows them), after a warning-free
# build (W=1, sparse where the headers can run it) for each of
# BUILD_KERNELS, and DKMS building the module for the newest kernel in the
# Debian 13 build root. By default every test runs once, on Debian 12's
# 6.1, Debian 13's 6.12 (trixie) or the newest kernel of trixie-backports,
# a third of the suite on each, the tests of the paths that differ between
# kernels (pytest -m paths: the send path, page-cache lending, power cuts,
# blockio's bios, netlink, timers) besides on 6.1 and the newest, the two
# ends of every difference kernel/compat.h knows (+paths). The debug
# kernel (KASAN, lockdep, kmemleak) runs the guard suite: hostile input,
# the defects reviews found, teardown and fio verify, which the thirds
# then leave out (-guard).
KERNELS ?= debug:guard newest:3/3+paths-guard 6.1:1/3+paths-guard trixie:2/3-guard
# VMs at once (scripts/check-kernels -j): two, each kernel taking the next
# free lane in the order of KERNELS, the longest first (the debug kernel's
# guard suite, then the newest's third), so that the lanes end together.
VM_JOBS ?= 2
BUILD_KERNELS ?= 6.1 6.1-rt 6.1-cloud 6.12 6.12-rt 6.12-cloud trixie newest newest-rt
DKMS_KERNELS ?= newest

DESTDIR ?=
PREFIX ?= /usr
SBINDIR ?= /usr/sbin
SYSCONFDIR ?= /etc
MANDIR ?= $(PREFIX)/share/man

export KDIR

.PHONY: all kernel usr check check-unit check-build check-vm checkpatch run install \
	install-kernel install-usr uninstall clean deps dkms-install dkms-uninstall bench deb check-deb \
	check-packages check-cluster

all: kernel usr

# Debian 13's kernels build inside the Debian 13 build root, with its
# toolchain: the same make there, the same paths (scripts/buildroot run).
ROOT13 := $(CURDIR)/build/debian13
ifneq ($(filter $(ROOT13)/%,$(KDIR)),)
kernel:
	@scripts/buildroot run $(MAKE) --no-print-directory kernel \
		KDIR=$(patsubst $(ROOT13)%,%,$(KDIR)) KFLAGS="$(KFLAGS)"
else
kernel:
	@test -n "$(KDIR)" -a -d "$(KDIR)" || \
		{ echo "no kernel build tree: install linux-headers or pass KDIR=" >&2; exit 1; }
	@test -n "$(KREL)" || { echo "cannot tell the release of $(KDIR)" >&2; exit 1; }
	@test -d /lib/modules/$(KVER)/build || \
		echo "make: building iscsi_trgt for $(KREL): the running kernel $(KVER) has no build tree (KDIR= chooses)"
	@mkdir -p $(KBUILD)
	@find $(KBUILD) -maxdepth 1 -xtype l -delete
	@ln -sf $(KSRC) $(KBUILD)/
	$(MAKE) -C $(KDIR) M=$(KBUILD) IET_UAPI=$(CURDIR)/include/uapi W=1 $(KFLAGS) modules
endif

usr:
	$(MAKE) -C usr

deps:
	scripts/deps --vm "$(KERNELS)" --build "$(BUILD_KERNELS) $(DKMS_KERNELS)"

# Builds go as wide as the machine; the tests themselves run one by one.
NPROC := $(shell nproc 2>/dev/null || echo 1)

check: deps
	$(MAKE) -j$(NPROC) check-unit
	scripts/check-build $(BUILD_KERNELS)
	scripts/check-dkms $(DKMS_KERNELS)
	$(MAKE) check-deb
	scripts/check-kernels -j $(VM_JOBS) $(KERNELS)
	scripts/check-cluster --short

# The two-node cluster (tests/cluster): Pacemaker, Corosync and DRBD moving
# the target between two VMs under an initiator's verified load, every
# scenario (make check runs the hard failure alone).
check-cluster: deps
	scripts/check-cluster

# The Debian packages build, lintian-clean, on Debian 12 and in the
# Debian 13 build root.
check-deb:
	$(MAKE) -s deb
	scripts/buildroot run $(MAKE) -s deb

# The Debian 13 packages, and the same as a later version, installed,
# upgraded under a live session and purged on a clean Debian 13 system in
# the VM, on Debian 13's kernel (tests/vm/test_packages.py): DKMS compiles
# the module twice under emulation, ten minutes in all, so not in check.
check-packages: deps
	scripts/buildroot run $(MAKE) -s deb
	scripts/buildroot run $(MAKE) -s deb DEB_UPGRADE=$(DEB_VERSION)+upgrade1
	scripts/buildroot disk >/dev/null
	scripts/check-kernels trixie:packages

check-build: usr
	scripts/check-build $(BUILD_KERNELS)

# Unit tests, then every fuzz harness built and run briefly over its kept
# corpus (each input an earlier campaign found is replayed).
check-unit: usr
	$(MAKE) -C tests/unit check
	$(MAKE) -C tests/fuzz run

# The kernel's own style checker (from linux-source-6.1, unpacked in
# /usr/src). compat.h and compat_unaligned.h are where version tests
# belong: only there are they not reported.
CHECKPATCH ?= /usr/src/linux-source-6.1/scripts/checkpatch.pl
COMPAT_H = kernel/compat.h kernel/compat_unaligned.h
checkpatch:
	@test -x $(CHECKPATCH) || { echo "no $(CHECKPATCH): apt-get install linux-source-6.1 and" \
		"unpack /usr/src/linux-source-6.1.tar.xz, or pass CHECKPATCH=" >&2; exit 1; }
	$(CHECKPATCH) --no-tree --terse --strict -f \
		$(filter-out $(addprefix $(CURDIR)/,$(COMPAT_H)),$(KSRC))
	$(CHECKPATCH) --no-tree --terse --strict \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f $(COMPAT_H)

# The VM suite on one kernel (KDIR), e.g. make check-vm KDIR=$$(scripts/kernels kdir 6.12)
check-vm: all
	scripts/vm-test --kdir $(KDIR)

run: deps all
	scripts/run-demo

install: install-kernel install-usr

install-kernel: kernel
	$(MAKE) -C $(KDIR) M=$(KBUILD) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=extra modules_install
	test -n "$(DESTDIR)" || depmod -a $(KREL)

# The tools, their pages, unit and completion: where usr/Makefile says,
# or where SBINDIR, MANDIR, UNITDIR, COMPLETIONSDIR, EXAMPLESDIR say.
USR_DIRS = SBINDIR=$(SBINDIR) MANDIR=$(MANDIR) \
	$(foreach v,UNITDIR COMPLETIONSDIR EXAMPLESDIR OCFDIR,$(if $($(v)),$(v)=$($(v))))
install-usr: usr
	$(MAKE) -C usr install DESTDIR=$(DESTDIR) $(USR_DIRS)
	install -d $(DESTDIR)$(SYSCONFDIR)/iet
	test -e $(DESTDIR)$(SYSCONFDIR)/iet/ietd.conf || \
		install -m 600 etc/ietd.conf $(DESTDIR)$(SYSCONFDIR)/iet/ietd.conf

# Let DKMS rebuild the module for every installed kernel and each new one.
dkms-install:
	$(MAKE) -f dkms.mk install

dkms-uninstall:
	$(MAKE) -f dkms.mk uninstall

# Debian packages (debian/): iscsitarget (ietd, ietadm) and
# iscsitarget-dkms (the module's source for DKMS), built from a copy of
# the tracked files in $(DEBDIR), where the .debs land; lintian checks them.
# One directory per distribution: scripts/buildroot run make deb builds
# Debian 13's beside Debian 12's.
# DEB_UPGRADE=VERSION builds the same tree as a later VERSION (a
# changelog entry added to the copy), for the upgrade of check-packages.
DEB_UPGRADE ?=
DEB_VERSION = $(or $(DEB_UPGRADE),$(shell dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null))
DEBDIR ?= build/deb/$(shell . /etc/os-release && echo $$ID$$VERSION_ID)$(if $(DEB_UPGRADE),-upgrade)
deb:
	rm -rf $(DEBDIR)
	mkdir -p $(DEBDIR)/iscsitarget-$(DEB_VERSION)
	git ls-files -z --cached --others --exclude-standard | \
		tar -c --null -T - | tar -x -C $(DEBDIR)/iscsitarget-$(DEB_VERSION)
	if [ -n "$(DEB_UPGRADE)" ]; then \
		cd $(DEBDIR)/iscsitarget-$(DEB_VERSION) && \
		{ printf 'iscsitarget (%s) unstable; urgency=medium\n\n  * %s\n\n -- %s  %s\n\n' \
			'$(DEB_UPGRADE)' 'This tree again as a later version: the upgrade of check-packages.' \
			"$$(dpkg-parsechangelog -S Maintainer)" "$$(date -R)"; \
		  cat debian/changelog; } >debian/changelog.new && mv debian/changelog.new debian/changelog; \
	fi
	cd $(DEBDIR)/iscsitarget-$(DEB_VERSION) && \
		dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ cat ../build.log; echo "dpkg-buildpackage failed: $(DEBDIR)/build.log" >&2; exit 1; }
	lintian --fail-on error,warning $(DEBDIR)/iscsitarget_$(DEB_VERSION)_*.changes

# IET against LIO and tgt, one VM boot: build/bench/{bench.md,ratios.png}.
bench:
	scripts/bench

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KREL)/extra/iscsi_trgt.ko
	$(MAKE) -C usr uninstall DESTDIR=$(DESTDIR) $(USR_DIRS)
	test -n "$(DESTDIR)" || depmod -a $(KREL)

clean:
	rm -rf build/kmod
	$(MAKE) -C usr clean
	$(MAKE) -C tests/unit clean
