# motiond: `scripts/run` and `scripts/test` are the two everyday commands (see README.md).
# This Makefile adds `make install`, with the conventional PREFIX and DESTDIR:
#     make install PREFIX=/usr/local DESTDIR=/tmp/staging
PREFIX ?= /usr/local
DESTDIR ?=
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSUSERS_DIR ?= $(PREFIX)/lib/sysusers.d
TMPFILES_DIR ?= $(PREFIX)/lib/tmpfiles.d
UDEV_RULES_DIR ?= $(PREFIX)/lib/udev/rules.d
MODULES_LOAD_DIR ?= $(PREFIX)/lib/modules-load.d
# Where the unit keeps the scene across restarts (StateDirectory=motiond).
STATE_DIR ?= /var/lib/motiond
CONFIG_DIR ?= /etc/motiond
BUILD_DIR ?= .build/release
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/vendor-completions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
MAN_DIR ?= $(PREFIX)/share/man
# The Python client (clients/python, standard library only), where Debian's python3 finds it:
# /usr/lib/python3/dist-packages for any Python 3 (packages' place), and under /usr/local
# the running version's dist-packages (the only one Debian's python3 reads there).
ifeq ($(PREFIX),/usr)
PYTHON_DIR ?= $(PREFIX)/lib/python3/dist-packages
else
PYTHON_DIR ?= $(PREFIX)/lib/python$(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages
endif
# The manual pages, written in scdoc (man/*.scd) and rendered here.
MAN_BUILD_DIR ?= .build/man
MAN_PAGES = motiond.8 motionctl.1 motiond.toml.5 motiond-protocol.7
# The Swift runtime and Foundation linked in: the installed binaries need no Swift toolchain,
# and motiond's resident memory idle drops from 25 to 16 MiB (docs/performance.md).
# Linked with full RELRO (read-only relocations, bound at start), as Debian builds its binaries.
# Nothing loads motiond as a library, so its symbols are not exported (the static runtime asks
# for -export-dynamic): 15,800 dynamic symbols fewer, 1.4 MiB off the binary, 0.6 MiB off RSS.
# Run-time exclusivity checks are off in the dependencies too, as Package.swift turns them off
# in motiond's own modules for release: SwiftPM gives no setting for a dependency, and
# swift-nio's event loop checked 30 accesses a frame (some 2,500 of the 35,100 instructions a frame
# costs, docs/performance.md). Debug builds, which the tests run, keep every check.
# Each function is compiled into a section of its own, and the link puts the functions a frame
# runs together, hottest first (LINK_ORDER, written by scripts/link-order/make-order): a frame's
# code then spans some 80 pages instead of 250 spread over 14 MiB, and the base build took 1.24
# times the CPU at one client (docs/performance.md, "The code's order"). After changing these
# flags, remove .build/x86_64-unknown-linux-gnu/release: SwiftPM keeps objects built without them.
LINK_ORDER ?= $(CURDIR)/scripts/link-order/motiond.order
SWIFT_BUILD_FLAGS ?= -c release --static-swift-stdlib -Xswiftc -enforce-exclusivity=unchecked \
	-Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now -Xlinker --no-export-dynamic \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xlinker --section-ordering-file=$(LINK_ORDER)

.PHONY: run test build binaries man install install-built install-completions install-man install-python install-qt uninstall package

run:
	scripts/run

test:
	scripts/test

build:
	scripts/install-deps
	$(MAKE) binaries

# The release binary alone; debian/rules builds with this, Build-Depends having been checked.
# One binary serves both commands: motiond runs motionctl when called by that name, so the
# Swift runtime and the libraries are on disk (and in the page cache) once.
binaries:
	swift build $(SWIFT_BUILD_FLAGS) --product motiond
	ln -sf motiond $(BUILD_DIR)/motionctl

install: build
	$(MAKE) install-built
	$(MAKE) install-python

# The Python client package `motiond`, plain files (nothing to compile). Not in install-built,
# so the Debian package (debian/rules) stays the daemon's alone.
install-python:
	install -d $(DESTDIR)$(PYTHON_DIR)/motiond
	install -m 0644 clients/python/motiond/*.py clients/python/motiond/py.typed $(DESTDIR)$(PYTHON_DIR)/motiond/

# Installs what `binaries` built, building nothing: debian/rules installs with this.
install-built:
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)$(SYSUSERS_DIR) $(DESTDIR)$(TMPFILES_DIR) \
		$(DESTDIR)$(UDEV_RULES_DIR) $(DESTDIR)$(MODULES_LOAD_DIR) $(DESTDIR)$(CONFIG_DIR) $(DESTDIR)$(CONFIG_DIR)/conf.d $(DESTDIR)$(PREFIX)/share/doc/motiond/examples
	install -d -m 0750 $(DESTDIR)$(STATE_DIR)
	install -m 0755 $(BUILD_DIR)/motiond $(DESTDIR)$(PREFIX)/bin/
	ln -sf motiond $(DESTDIR)$(PREFIX)/bin/motionctl
	sed 's|/usr/local/bin/|$(PREFIX)/bin/|; s|/usr/local/share/|$(PREFIX)/share/|' systemd/motiond.service > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond.service
	sed 's|/usr/local/share/|$(PREFIX)/share/|' systemd/motiond.socket > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond.socket
	sed 's|/usr/local/share/|$(PREFIX)/share/|' systemd/motiond-web.socket > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond-web.socket
	install -m 0644 systemd/motiond.sysusers $(DESTDIR)$(SYSUSERS_DIR)/motiond.conf
	install -m 0644 systemd/motiond.tmpfiles $(DESTDIR)$(TMPFILES_DIR)/motiond.conf
	install -m 0644 systemd/motiond-uinput.rules $(DESTDIR)$(UDEV_RULES_DIR)/70-motiond-uinput.rules
	install -m 0644 systemd/motiond-modules.conf $(DESTDIR)$(MODULES_LOAD_DIR)/motiond.conf
	install -m 0644 config/motiond.toml $(DESTDIR)$(CONFIG_DIR)/motiond.toml.example
	test -e $(DESTDIR)$(CONFIG_DIR)/motiond.toml || install -m 0644 config/motiond.toml $(DESTDIR)$(CONFIG_DIR)/motiond.toml
	install -m 0644 docs/protocol.md docs/kiosk.md docs/operations.md docs/virtual-touchscreen.md README.md $(DESTDIR)$(PREFIX)/share/doc/motiond/
	cp -r examples/python examples/node examples/web $(DESTDIR)$(PREFIX)/share/doc/motiond/examples/
	install -d $(DESTDIR)$(PREFIX)/share/doc/motiond/contrib/grafana $(DESTDIR)$(PREFIX)/share/doc/motiond/contrib/prometheus/tests
	install -m 0644 contrib/grafana/motiond-dashboard.json $(DESTDIR)$(PREFIX)/share/doc/motiond/contrib/grafana/
	install -m 0644 contrib/prometheus/motiond-alerts.yml $(DESTDIR)$(PREFIX)/share/doc/motiond/contrib/prometheus/
	install -m 0644 contrib/prometheus/tests/motiond-alerts.test.yml $(DESTDIR)$(PREFIX)/share/doc/motiond/contrib/prometheus/tests/
	$(MAKE) install-completions
	$(MAKE) install-man

man:
	install -d $(MAN_BUILD_DIR)
	for page in $(MAN_PAGES); do scdoc < man/$$page.scd > $(MAN_BUILD_DIR)/$$page || exit 1; done

install-man: man
	for page in $(MAN_PAGES); do \
		section=$${page##*.}; install -d $(DESTDIR)$(MAN_DIR)/man$$section && \
		install -m 0644 $(MAN_BUILD_DIR)/$$page $(DESTDIR)$(MAN_DIR)/man$$section/ || exit 1; \
	done

# Tab completion for bash, zsh and fish, written by the built tools themselves (from their
# argument-parser definitions), so it never lists an option they do not have. bash sources its
# completions, so the script's #! line goes.
install-completions:
	install -d $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR) $(DESTDIR)$(FISH_COMPLETION_DIR)
	for tool in motiond motionctl; do \
		$(BUILD_DIR)/$$tool --generate-completion-script bash | sed '1{/^#!/d}' > $(DESTDIR)$(BASH_COMPLETION_DIR)/$$tool && \
		$(BUILD_DIR)/$$tool --generate-completion-script zsh > $(DESTDIR)$(ZSH_COMPLETION_DIR)/_$$tool && \
		$(BUILD_DIR)/$$tool --generate-completion-script fish > $(DESTDIR)$(FISH_COMPLETION_DIR)/$$tool.fish || exit 1; \
	done

# The QML module Motiond (clients/qt, docs/clients-qt.md), apart: it needs Qt 6, which motiond
# does not. QML_DIR is where Qt looks for modules; Debian's Qt looks in the default below, and
# another place needs QML_IMPORT_PATH.
QML_DIR ?= /usr/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/qt6/qml
QT_BUILD_DIR ?= .build/qt-release
install-qt:
	cmake -S clients/qt -B $(QT_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DMOTIOND_QT_TESTS=OFF \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) -DQML_INSTALL_DIR=$(QML_DIR)
	cmake --build $(QT_BUILD_DIR)
	DESTDIR=$(DESTDIR) cmake --install $(QT_BUILD_DIR)

# The Debian package, motiond_VERSION_ARCH.deb, checked with lintian and in a scratch root.
package:
	scripts/package

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/motiond $(DESTDIR)$(PREFIX)/bin/motionctl \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond.service $(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond.socket \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/motiond-web.socket \
		$(DESTDIR)$(SYSUSERS_DIR)/motiond.conf $(DESTDIR)$(TMPFILES_DIR)/motiond.conf \
		$(DESTDIR)$(UDEV_RULES_DIR)/70-motiond-uinput.rules $(DESTDIR)$(MODULES_LOAD_DIR)/motiond.conf
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/motiond $(DESTDIR)$(PYTHON_DIR)/motiond
	rm -f $(DESTDIR)$(BASH_COMPLETION_DIR)/motiond $(DESTDIR)$(BASH_COMPLETION_DIR)/motionctl \
		$(DESTDIR)$(ZSH_COMPLETION_DIR)/_motiond $(DESTDIR)$(ZSH_COMPLETION_DIR)/_motionctl \
		$(DESTDIR)$(FISH_COMPLETION_DIR)/motiond.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/motionctl.fish
	for page in $(MAN_PAGES); do rm -f $(DESTDIR)$(MAN_DIR)/man$${page##*.}/$$page; done
