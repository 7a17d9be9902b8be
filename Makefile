# SPDX-License-Identifier: GPL-2.0
# IET: iscsi_trgt.ko (kernel/), ietd and ietadm (usr/), and their tests.
#
#   make                 build the module and the tools
#   make check           unit tests on the host, then the VM suite
#   make run             a VM exporting a demo LUN at 127.0.0.1:3260
#   make install         module, tools, sample config; depmod
#   make dkms-install    the module through DKMS, rebuilt on kernel upgrades
#   make bench           IET against LIO and tgt (not a test)

# The running kernel's build tree, else the newest installed distribution
# kernel's (the host that builds may not run the kernel it builds for).
KVER ?= $(shell uname -r)
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER)/build) \
	$(lastword $(shell ls -d /lib/modules/*-amd64/build 2>/dev/null | sort -V)))
# Debian's headers carry the upstream version in kernel.release; the
# release modules live under is UTS_RELEASE.
KREL = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)

DESTDIR ?=
PREFIX ?= /usr
SBINDIR ?= /usr/sbin
SYSCONFDIR ?= /etc
MANDIR ?= $(PREFIX)/share/man

export KDIR

.PHONY: all kernel usr check check-unit check-vm run install uninstall clean deps \
	dkms-install dkms-uninstall bench

all: kernel usr

kernel:
	@test -n "$(KDIR)" -a -d "$(KDIR)" || \
		{ echo "no kernel build tree: install linux-headers or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel W=1 modules

usr:
	$(MAKE) -C usr

deps:
	scripts/deps

check: deps
	$(MAKE) check-unit
	$(MAKE) check-vm

check-unit: usr
	$(MAKE) -C tests/unit check

check-vm: all
	scripts/vm-test

run: deps all
	scripts/run-demo

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=extra modules_install
	$(MAKE) -C usr install DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	install -d $(DESTDIR)$(SYSCONFDIR)/iet
	test -e $(DESTDIR)$(SYSCONFDIR)/iet/ietd.conf || \
		install -m 600 etc/ietd.conf $(DESTDIR)$(SYSCONFDIR)/iet/ietd.conf
	test -n "$(DESTDIR)" || depmod -a $(KREL)

# Let DKMS rebuild the module for every installed kernel and each new one.
dkms-install:
	$(MAKE) -f dkms.mk install

dkms-uninstall:
	$(MAKE) -f dkms.mk uninstall

# IET against LIO and tgt, one VM boot: build/bench/{bench.md,ratios.png}.
bench:
	scripts/bench

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KREL)/extra/iscsi_trgt.ko
	$(MAKE) -C usr uninstall DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	test -n "$(DESTDIR)" || depmod -a $(KREL)

clean:
	-test -z "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean
	$(MAKE) -C usr clean
	$(MAKE) -C tests/unit clean
