# tierbench: `make demo` builds and runs the default study (Go alone);
# `make test` sets up everything and runs the whole test suite (what CI
# runs) in two lanes at once (scripts/test.sh says which tests run where).
GO ?= go
BIN := bin/tierbench
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)

# `make install` puts the binary in $(PREFIX)/bin, the Ignite launcher
# (jar and its lib/) in $(PREFIX)/lib/tierbench/ignite and the search
# engines' nodes (the OpenSearch runner's jar and lib/, the Elasticsearch
# OSS distribution) in $(PREFIX)/lib/tierbench/opensearch, where an
# installed tierbench looks for them (../lib/tierbench/... from its own folder).
PREFIX ?= /usr/local
IGNITE_BUILD ?= java/ignite/target
IGNITE_JAR := tierbench-ignite.jar
SEARCH_BUILD ?= java/opensearch/target
SEARCH_JAR := tierbench-opensearch.jar
SEARCH_ES := elasticsearch-6.8.23

.PHONY: setup build demo test lint bench clean install

setup:
	./scripts/setup.sh

# build needs only Go: the module proxy serves every library, so `make demo`
# (the default study runs the embedded Pebble engine on /dev/shm and a
# folder) answers on a fresh machine without installing the servers, JDK,
# Ceph, Python tools and control plane that `make setup` brings.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X github.com/tierbench/tierbench/hostenv.version=$(VERSION)" -o $(BIN) ./cmd/tierbench

demo: build
	./$(BIN) run

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: setup lint
	GO=$(GO) ./scripts/test.sh

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 3x ./driver/ ./workload/...

install: setup build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/tierbench
	@if [ -f $(IGNITE_BUILD)/$(IGNITE_JAR) ] && [ -d $(IGNITE_BUILD)/lib ]; then \
		dest=$(DESTDIR)$(PREFIX)/lib/tierbench/ignite; \
		rm -rf $$dest && install -d $$dest/lib && \
		install -m 0644 $(IGNITE_BUILD)/$(IGNITE_JAR) $$dest/ && \
		install -m 0644 $(IGNITE_BUILD)/lib/*.jar $$dest/lib/ && \
		echo "installed the Ignite launcher in $$dest"; \
	else \
		echo "note: $(IGNITE_BUILD)/$(IGNITE_JAR) is not built, so engine ignite will not run from $(PREFIX)/bin (run make setup, then make install again)"; \
	fi
	@if [ -f $(SEARCH_BUILD)/$(SEARCH_JAR) ] && [ -d $(SEARCH_BUILD)/lib ] && [ -d $(SEARCH_BUILD)/$(SEARCH_ES) ]; then \
		dest=$(DESTDIR)$(PREFIX)/lib/tierbench/opensearch; \
		rm -rf $$dest && install -d $$dest/lib && \
		install -m 0644 $(SEARCH_BUILD)/$(SEARCH_JAR) $$dest/ && \
		install -m 0644 $(SEARCH_BUILD)/lib/*.jar $$dest/lib/ && \
		cp -R $(SEARCH_BUILD)/$(SEARCH_ES) $$dest/ && \
		echo "installed the OpenSearch runner and Elasticsearch OSS in $$dest"; \
	else \
		echo "note: $(SEARCH_BUILD) is not built, so engines opensearch and elasticsearch will not run from $(PREFIX)/bin (run make setup, then make install again)"; \
	fi

clean:
	rm -rf bin
