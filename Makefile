# tierbench: `make demo` sets up and runs the default study; `make test` runs
# the whole test suite (what CI runs).
GO ?= go
BIN := bin/tierbench
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: setup build demo test lint bench clean

setup:
	./scripts/setup.sh

build: setup
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X github.com/tierbench/tierbench/hostenv.version=$(VERSION)" -o $(BIN) ./cmd/tierbench

demo: build
	./$(BIN) run

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: setup lint
	$(GO) test -count=1 -p 1 -timeout 25m ./...

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 3x ./driver/ ./workload/...

clean:
	rm -rf bin
