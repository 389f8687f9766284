# wap - build, test and install.  See README.md.
#   make            build ./wap
#   make run        build, then serve the current directory (MCP over HTTP)
#   make check      every test (unit, applets, protocol); ASAN=1 under ASan+UBSan
#   make asan       the ASan+UBSan build (build/asan/wap)
#   make install    PREFIX=/usr/local DESTDIR=
#   make docs       regenerate man/ and completions/ from the usage texts

PREFIX ?= /usr/local
CC ?= gcc
PKGS := libgit2 libpcre2-8 libarchive jansson libwebsockets nettle
# loaded when first needed (lib/lazy.c), not linked: their headers only
LAZY_PKGS := libgit2 libarchive libwebsockets
PORT ?= 8765

ifeq ($(ASAN),1)
B := build/asan
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1 -g
BIN := $(B)/wap
else
B := build/norm
SAN :=
OPT := -O2 -g
BIN := wap
endif

CFLAGS ?=
CFLAGS += -std=gnu11 $(OPT) -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -pthread $(SAN) \
	-Ilib -I$(B) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS += $(shell pkg-config --libs $(filter-out $(LAZY_PKGS),$(PKGS)) 2>/dev/null) -ldl -lpthread -lutil
LDFLAGS += $(SAN) -pthread

LIB_SRC := $(wildcard lib/*.c lib/*/*.c)
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

$(B)/lazy.h: lib/lazy.list scripts/mklazy | $(B)/.deps-ok
	@scripts/mklazy $(B) lib/lazy.list

$(B)/%.o: %.c $(B)/applets.h $(B)/lazy.h $(wildcard lib/*.h lib/*/*.h) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/applets.o: $(B)/applets.c $(wildcard lib/*.h lib/*/*.h)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libwap.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(B)/main.o $(B)/libwap.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/unit/%: tests/unit/%.c $(B)/libwap.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libwap.a $(LDLIBS) $(shell pkg-config --libs cmocka $(LAZY_PKGS))

# the libFuzzer targets with a plain driver (tests/fuzz/replay.c), for make check
$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c $(B)/libwap.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(B)/libwap.a $(LDLIBS) $(shell pkg-config --libs $(LAZY_PKGS))

asan:
	$(MAKE) ASAN=1 build/asan/wap

test-deps:
	@scripts/deps --test

check: test-deps $(BIN) $(UNIT_BIN) $(FUZZ_BIN)
	@WAP="$(abspath $(BIN))" UNIT_DIR="$(abspath $(B)/unit)" FUZZ_DIR="$(abspath $(B)/fuzz)" ASAN="$(ASAN)" tests/run

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

clean:
	rm -rf build wap

.PHONY: all asan check test-deps run docs install clean
.SECONDARY:
