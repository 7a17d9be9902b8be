# SPDX-License-Identifier: GPL-2.0
# Hand the module's source to DKMS, which builds it for every installed
# kernel and again for each kernel installed later.
#
#   make -f dkms.mk install     copy to /usr/src/iscsi_trgt-VERSION, then
#                               dkms add, build and install
#   make -f dkms.mk uninstall   dkms remove, and the copy
#   make -f dkms.mk src         only the copy (DESTDIR for packaging)

DESTDIR ?=
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
SRC := $(DESTDIR)/usr/src/iscsi_trgt-$(VERSION)
DKMS ?= dkms

src:
	install -d $(SRC)/kernel $(SRC)/include/uapi/linux
	install -m 644 dkms.conf $(SRC)/
	install -m 644 kernel/*.c kernel/*.h kernel/Kbuild kernel/Makefile \
		$(SRC)/kernel/
	install -m 644 include/uapi/linux/iet.h $(SRC)/include/uapi/linux/

install: src
	$(DKMS) add -m iscsi_trgt -v $(VERSION)
	$(DKMS) build -m iscsi_trgt -v $(VERSION)
	$(DKMS) install -m iscsi_trgt -v $(VERSION)

uninstall:
	-$(DKMS) remove -m iscsi_trgt -v $(VERSION) --all
	rm -rf $(SRC)

.PHONY: src install uninstall
