# alertrouter — `make test` is the one test command (CI runs it via .ci/run).
GO        ?= go
PKGS      ?= ./...
FUZZTIME  ?= 10s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/prometheus/common/version.Version=$(VERSION) \
             -X github.com/prometheus/common/version.Revision=$(REVISION) \
             -X github.com/prometheus/common/version.Branch=main \
             -X github.com/prometheus/common/version.BuildDate=$(shell date -u +%Y%m%d-%H:%M:%S)

.PHONY: all build run test deps vet lint fmt-check unit am-current fuzz bench release clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/router ./cmd/router

run:
	$(GO) run ./cmd/router

deps:
	./scripts/install-deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# staticcheck at a pinned version, built from its Go module (staticcheck.conf
# says which checks are off and why).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) $(PKGS)

unit:
	CI=$${CI:-} $(GO) test -race -count=1 -timeout 20m $(PKGS)

# The tests that talk to a real Alertmanager, again against the release
# go.mod requires (built from its module by scripts/build-alertmanager.sh;
# `unit` runs them against Debian's 0.25): webhooks, truncation, HA pairs,
# silences, the lagging-peer check, check-config --probe.
AM_CURRENT_E2E = TestAlertmanagerSendsVersion4|TestTruncatedThenFullWebhooks|TestATruncatedWebhookIsCompletedFromAlertmanager|TestCompletionAddsOnlyTheWebhooksOwnRoute|TestHAAlertmanagerPairAndTwoRoutersSharingRedisNotifyOnce|TestSlackSilenceButtonSilencesInAlertmanager|TestOneAlertmanagerPagesOnce|TestSequenceHAPeerLostMidGroup|TestThousandAlertWebhooksFromAnHAPair
am-current:
	@bin=$$(./scripts/build-alertmanager.sh) && echo "am-current: $$bin" && \
	export ALERTMANAGER_BIN=$$bin CI=$${CI:-} && \
	$(GO) test -race -count=1 ./notify/amsilence/ && \
	$(GO) test -race -count=1 -run 'Silence|Unsilence' ./notify/slack/ && \
	$(GO) test -race -count=1 -run 'Lagging|Stale|AfterItsResolve|AfterItsOwnResolve|IncidentClosed' ./routing/ && \
	$(GO) test -race -count=1 -run 'TestCheckConfigProbeReachesWhatTheConfigNames' ./cmd/router/ && \
	$(GO) test -race -count=1 -timeout 10m -run '$(AM_CURRENT_E2E)' ./e2e/

# Each fuzz target runs briefly; crashers found land in testdata/fuzz as
# regression cases that `go test` then always runs.
fuzz:
	@for t in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "fuzz $$t $$f"; \
	    out=$$($(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$t 2>&1); rc=$$?; echo "$$out" | tail -4; \
	    if [ $$rc -ne 0 ] && echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
	      echo "fuzz $$t $$f: the fuzzing engine timed out shutting down (no failing input); running it again"; \
	      out=$$($(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$t 2>&1); rc=$$?; echo "$$out" | tail -4; \
	    fi; \
	    if [ $$rc -ne 0 ]; then echo "$$out"; exit 1; fi; \
	  done; \
	done

test: deps fmt-check vet lint fuzz unit am-current

bench: deps
	./scripts/bench.sh

# Release archives for linux/amd64, linux/arm64 and darwin/arm64 with
# SHA-256 sums under dist/, reproducible from the commit (scripts/release.sh).
release:
	VERSION=$(VERSION) ./scripts/release.sh

clean:
	rm -rf bin
