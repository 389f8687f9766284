# wap - build, test and install.  See README.md.
#   make            build ./wap
#   make run        build, then serve the current directory (MCP over HTTP)
#   make check      every test (unit, applets, protocol); ASAN=1 under ASan+UBSan;
#                   T="edit patch" only tests/edit.sh and tests/patch.sh (and the
#                   unit tests T names: test_edit, or "unit" for all)
#   make asan       the ASan+UBSan build (build/asan/wap)
#   make install    PREFIX=/usr/local DESTDIR=
#   make docs       regenerate man/ and completions/ from the usage texts
#   make image      the OCI image $(IMAGE), from scratch (podman/buildah)
#   make static     build/static/wap, every library linked in; make static-image

PREFIX ?= /usr/local
# lib/ in layer folders (ARCHITECTURE.md); each is on the include path, so
# a source says #include "ws.h", not "../fs/ws.h"
LIB_DIRS := $(sort $(dir $(wildcard lib/*/*.c lib/*/*.h)))
LIB_INC := $(LIB_DIRS:%/=-I%)
CC ?= gcc
PKGS := libgit2 libpcre2-8 libarchive jansson libwebsockets nettle
# loaded when first needed (lib/core/lazy.c), not linked: their headers only
LAZY_PKGS := libgit2 libarchive libwebsockets
PORT ?= 8765
IMAGE ?= localhost/wap:latest
STATIC_IMAGE ?= localhost/wap-static:latest

ifeq ($(ASAN),1)
B := build/asan
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1 -g
BIN := $(B)/wap
else ifeq ($(STATIC),1)
# make static: every library linked in (lib/core/lazy.c with WAP_LAZY_STATIC)
B := build/static
SAN :=
OPT := -O2 -g -DWAP_LAZY_STATIC
BIN := $(B)/wap
else
B := build/norm
SAN :=
OPT := -O2 -g
BIN := wap
endif

CFLAGS ?=
CFLAGS += -std=gnu11 $(OPT) -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -pthread $(SAN) \
	$(LIB_INC) -I$(B) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS += $(SAN) -pthread -Wl,-z,now -Wl,-z,pack-relative-relocs
ifneq ($(STATIC),1)
ifneq ($(findstring x86_64,$(shell $(CC) -dumpmachine)),)
# libgit2 linked in, from Debian's static archives, with what it needs
# for reading and writing repositories (mbedTLS, http-parser, zlib): loading
# libgit2.so and the 20 shared objects it pulls in cost 3 ms of every git
# run (git's own show takes 2 ms).  Its SSH and GSS-API libraries (with
# OpenSSL and Kerberos) are loaded when a remote first calls them
# (lib/git/deps.c: trampolines, x86-64 only; elsewhere libgit2 stays
# dlopened as libarchive and libwebsockets are).  lib/git/git.c wraps
# libgit2's TLS set-up, mbedTLS's reading of the CA certificates and seeding
# of its random generator to defer them to the first remote.
LAZY_PKGS := libarchive libwebsockets
LINKED_PKGS := libgit2
OPT += -DWAP_LINK_GIT2
LDLIBS += -Wl,-Bstatic -lgit2 -lmbedtls -lmbedx509 -lmbedcrypto -lhttp_parser -lz -Wl,-Bdynamic
LDFLAGS += -Wl,--wrap=mbedtls_x509_crt_parse_file -Wl,--wrap=mbedtls_x509_crt_parse_path \
	-Wl,--wrap=mbedtls_entropy_init -Wl,--wrap=mbedtls_ctr_drbg_seed \
	-Wl,--wrap=git_mbedtls_stream_global_init -Wl,--wrap=git_mbedtls_stream_new \
	-Wl,--wrap=git_mbedtls_stream_wrap -Wl,--wrap=realpath \
	-Wl,--wrap=stat -Wl,--wrap=access -Wl,--wrap=p_open
else
# lib/git/git.c defers libgit2's reading of the CA certificates
LDFLAGS += -Wl,--export-dynamic-symbol=mbedtls_x509_crt_parse_file \
	-Wl,--export-dynamic-symbol=mbedtls_x509_crt_parse_path
endif
endif
# The small libraries every run needs (PCRE2, jansson, nettle) are linked in
# from their archives where there are some (-dev packages ship them): three
# shared objects fewer to map and relocate at every start (about 25 page
# faults of `wap exec -- true`'s 200).  -z now binds every symbol at start-up,
# once: a forked child (exec's supervisor, the command before its exec) would
# otherwise look its functions up again, in pages it must fault in, per call.
LINKED_LIBS := $(shell pkg-config --libs $(filter-out $(LAZY_PKGS) $(LINKED_PKGS),$(PKGS)) 2>/dev/null)
LDLIBS += $(foreach l,$(LINKED_LIBS),$(if $(filter -l%,$(l)),$(if $(wildcard \
	$(shell $(CC) -print-file-name=lib$(l:-l%=%).a)),-l:lib$(l:-l%=%).a,$(l)),$(l))) \
	-ldl -lpthread -lutil
# ... and nettle's fat dispatch with no constructor (scripts/nettle-lazy)
NETTLE_LAZY := $(B)/nettle-lazy.o
ifeq ($(STATIC),1)
NETTLE_LAZY :=
# libarchive needs libxml2, libxml2 ICU: its 31 MB of data are left out
# for an empty table (deploy/image/icudata-stub.c; see scripts/image)
ICU_MAJOR := $(firstword $(subst ., ,$(shell pkg-config --modversion icu-uc 2>/dev/null)))
STATIC_LIBS := $(filter-out -licudata,$(shell pkg-config --static --libs $(PKGS) libxml-2.0 2>/dev/null))
# Debian has no static GSS-API (Kerberos): deploy/static/gssapi-stub.c
STATIC_STUBS := $(B)/icudata-stub.o $(B)/gssapi-stub.o
LDLIBS := $(STATIC_STUBS) -Wl,--start-group $(STATIC_LIBS) -lssl -lcrypto -lstdc++ -ldl -lpthread -lutil -Wl,--end-group
LDFLAGS += -static
endif

LIB_SRC := $(wildcard lib/*/*.c)
APPLET_SRC := $(wildcard applets/*.c)
OBJ := $(LIB_SRC:%.c=$(B)/%.o) $(APPLET_SRC:%.c=$(B)/%.o) $(B)/applets.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)

all: $(BIN)

$(B)/.deps-ok: scripts/deps
	@scripts/deps
	@mkdir -p $(B) && touch $@

$(B)/applets.c $(B)/applets.h &: $(APPLET_SRC) scripts/mkapplets | $(B)/.deps-ok
	@scripts/mkapplets $(B) $(APPLET_SRC)

$(B)/lazy.h: lib/core/lazy.list scripts/mklazy | $(B)/.deps-ok
	@scripts/mklazy $(B) lib/core/lazy.list

$(B)/%.o: %.c $(B)/applets.h $(B)/lazy.h $(wildcard lib/*/*.h) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/applets.o: $(B)/applets.c $(wildcard lib/*/*.h)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libwap.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(B)/main.o $(B)/libwap.a $(STATIC_STUBS) $(NETTLE_LAZY)
	$(CC) $(LDFLAGS) -o $@ $(B)/main.o $(B)/libwap.a $(NETTLE_LAZY) $(LDLIBS)

# nettle's fat dispatch without its start-up cpuid (scripts/nettle-lazy)
$(B)/nettle-lazy.o: scripts/nettle-lazy | $(B)/.deps-ok
	@scripts/nettle-lazy "$(CC)" $@

$(B)/icudata-stub.o: deploy/image/icudata-stub.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -c -DICU_ENTRY=icudt$(ICU_MAJOR)_dat -o $@ $<

$(B)/gssapi-stub.o: deploy/static/gssapi-stub.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/unit/%: tests/unit/%.c $(B)/libwap.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libwap.a $(LDLIBS) $(shell pkg-config --libs cmocka $(LAZY_PKGS))

# test_oom fails lib/'s allocations one by one: its own malloc and friends
$(B)/unit/test_oom: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup

# the libFuzzer targets with a plain driver (tests/fuzz/replay.c), for make check;
# the whole library, as the binary has it: a target that reaches libgit2 only
# through the library (the config's profiles, the archive reader's lazy
# loader) needs its wrappers (lib/git/git.c) and trampolines (lib/git/deps.c)
# though nothing it calls names them
$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c $(B)/libwap.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c -Wl,--whole-archive $(B)/libwap.a -Wl,--no-whole-archive $(LDLIBS) $(shell pkg-config --libs $(LAZY_PKGS))

asan:
	$(MAKE) ASAN=1 build/asan/wap

test-deps:
	@scripts/deps --test

# T: build only what the suites named need (tests/run picks them)
T ?=
ifeq ($(strip $(T)),)
CHECK_BIN := $(UNIT_BIN) $(FUZZ_BIN)
else
CHECK_BIN := $(filter $(addprefix $(B)/unit/,$(T:unit/%=%)),$(UNIT_BIN)) \
	$(if $(filter unit,$(T)),$(UNIT_BIN)) $(if $(filter fuzz,$(T)),$(FUZZ_BIN))
endif

check: test-deps $(BIN) $(CHECK_BIN)
	@WAP="$(abspath $(BIN))" UNIT_DIR="$(abspath $(B)/unit)" FUZZ_DIR="$(abspath $(B)/fuzz)" ASAN="$(ASAN)" T="$(T)" tests/run

# A bearer token is made at each start; stderr names the 0600 file it is in
# ($XDG_RUNTIME_DIR, else ~/.cache: wap-http-PORT.token), never the token.
run: $(BIN)
	./$(BIN) serve --http 127.0.0.1:$(PORT) --root .

docs: $(BIN)
	scripts/mkdocs ./$(BIN)

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/wap
	for a in $$(./$(BIN) --list); do ln -sf wap $(DESTDIR)$(PREFIX)/bin/wap-$$a; done
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 completions/wap.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/wap
	install -m 644 completions/_wap $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_wap
	install -m 644 completions/wap.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/wap.fish

# the OCI image: the binary and every shared object it loads (scripts/image)
image: $(BIN)
	@scripts/image $(BIN) $(B)/lazy.h $(IMAGE)

static:
	@scripts/container-deps --static
	$(MAKE) STATIC=1 build/static/wap

# the static binary alone in an image: proof that it needs nothing else
static-image: static
	@scripts/image --static build/static/wap build/static/lazy.h $(STATIC_IMAGE)

clean:
	rm -rf build wap

.PHONY: all asan check test-deps run docs install clean image static static-image
.SECONDARY:
