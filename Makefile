# olm-cmp — see README.md. Tools built here are cached under $(CACHE), outside the repo.
SHELL      := /bin/bash
GO         ?= go
CACHE      ?= $(HOME)/.cache/olm-cmp
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS    := -s -w -X main.version=$(VERSION)
BIN        := bin/olm-cmp
# olm-cmp runs olm-cmp-check, the executable of the checks too heavy to link into every olm-cmp
# process (internal/checkproc), from beside itself: every build and install writes both.
CMDS       := ./cmd/olm-cmp ./cmd/olm-cmp-check
PKGS       := ./...
BENCH_BASE ?= d5b6ac3

.PHONY: all build install image image-push image-docker demo demo-registry test test-unit test-argocd lint vet fmt bench generate e2e clean

all: build

## build: static olm-cmp and olm-cmp-check binaries in bin/ (as the Dockerfile builds them)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o $(dir $(BIN)) $(CMDS)

## install: olm-cmp and olm-cmp-check into GOBIN (go env GOBIN, else GOPATH's bin), or PREFIX/bin when PREFIX is set; says when that directory is not on PATH
PREFIX     ?=
install:
	@set -e; \
	if [ -n "$(PREFIX)" ]; then dir="$(PREFIX)/bin"; mkdir -p "$$dir"; \
	  CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' -o "$$dir/" $(CMDS); \
	else dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir="$$($(GO) env GOPATH | cut -d: -f1)/bin"; \
	  CGO_ENABLED=0 GOBIN="$$dir" $(GO) install -trimpath -buildvcs=auto -ldflags '$(LDFLAGS)' $(CMDS); \
	fi; \
	echo "installed $$dir/olm-cmp and $$dir/olm-cmp-check"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on PATH: export PATH=\"$$dir:\$$PATH\" (or make install PREFIX=DIR for a directory that is)";; esac

## image: the container image as an OCI image layout in $(OCI_LAYOUT), linux/amd64 and linux/arm64, without Docker (hack/ociimage: go-containerregistry; CA certificates from Debian's ca-certificates); reproducible: the same commit gives the same digest
OCI_LAYOUT ?= bin/oci
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
image:
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/cmd/ociimage build -out $(OCI_LAYOUT) -version $(VERSION) -sbom $(OCI_LAYOUT).cdx.json

## image-push: push $(OCI_LAYOUT) (make image) to IMAGE=registry/repo:tag, with its SBOM; prints the reference by digest (credentials: the docker/podman keychain)
image-push:
	@if [ "$(origin IMAGE)" = file ]; then echo "make image-push: give IMAGE=registry.example.com/olm-cmp:TAG (the registry your cluster pulls from)" >&2; exit 2; fi
	$(GO) run ./hack/cmd/ociimage push -layout $(OCI_LAYOUT) $(IMAGE)

## image-docker: the same image from the Dockerfile, with Docker (or CONTAINER=podman), as $(IMAGE)
IMAGE      ?= olm-cmp:$(VERSION)
CONTAINER  ?= docker
image-docker:
	$(CONTAINER) build -t $(IMAGE) --build-arg VERSION=$(VERSION) .

## demo: render the demo operator shipped in examples/demo (no registry, cluster or ../shared), with bin/olm-cmp (make build)
demo: build
	$(BIN) render --quiet examples/demo

## demo-registry: the demo catalog and its four bundle versions on DEMO_REGISTRY (plain HTTP) until Ctrl-C, so versions, resolve, upgrade and init --catalog run offline (README)
DEMO_REGISTRY ?= localhost:5000
demo-registry:
	$(GO) run ./hack/demoregistry -addr $(DEMO_REGISTRY)

## test: lint + unit and fast integration tests (in-process registry, the sidecar run as deployed); README.md says how long it takes
test: lint test-unit

# The image tests (deploy/, hack/ociimage) build olm-cmp as the image does (CGO off, -trimpath: a
# build configuration of its own), and go test runs them side by side: with a cold cache each
# compiled every dependency again, at the same time (they took 496 s and 455 s of a 937 s cold
# run). Compiling it once first leaves them only the link.
test-unit:
	CGO_ENABLED=0 $(GO) build -trimpath -o /dev/null $(CMDS)
	$(GO) test -count=1 $(PKGS)

## test-argocd: the Argo CD client suites (v2.14.21 and v3.6.1, and the health checks through Argo CD's Lua engine): compiling Argo CD takes ~40 min cold on 2 cores; CI (.ci/run) runs them
test-argocd:
	@if [ -x test/argocd/run.sh ]; then test/argocd/run.sh; else echo "test/argocd/run.sh not present"; fi

## lint: gofmt and go vet clean; no build output (binary, file over 2 MB) tracked
lint: vet
	hack/check-tracked.sh
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

## bench: first the before/after table of start-up and renders (hack/benchtable.sh: `olm-cmp version`, leader-worker-set, sail-operator, kubevirt; CPU, peak RSS, allocations; BENCH_BASE, default d5b6ac3, the build before issue 30), then render benchmarks (lws-operator, sail-operator, kubevirt; need ../shared), diff against the one render it is made of twice (BenchmarkCLIDiff*, BenchmarkCLIRender*: sail-operator, kubevirt; diff must stay under 2.5x two renders; BenchmarkCLIDiffBigCRD: diff of two generated CRDs of 100,000 properties in a child process, its wall, CPU and peak RSS, bounded in docs/operations.md), catalog benchmarks on generated vendor-sized catalogs (OLM_CMP_BENCH_BUNDLES=1000,10000 by default; 50000 is about 650 MB); whole-process figures: hack/growth.sh
bench:
	BASE=$(BENCH_BASE) hack/benchtable.sh
	$(GO) test -run '^$$' -bench . -benchmem ./internal/render/ ./internal/bundle/ ./internal/convert/
	$(GO) test -run '^$$' -bench 'CLI(Render|Diff)' -benchmem ./cmd/olm-cmp/
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./internal/catalog/ ./internal/engine/
	@if [ -x test/argocd/run.sh ]; then BENCH=1 test/argocd/run.sh; fi

## generate: regenerate the gRPC stubs of the Argo CD plugin protocol
generate:
	internal/cmpserver/generate.sh

## e2e: real kube-apiserver + etcd + kwok (and a real Argo CD) inside a private network namespace
e2e:
	@if [ -x test/e2e/run.sh ]; then test/e2e/run.sh; else echo "test/e2e/run.sh not present"; fi

clean:
	rm -rf bin

.PHONY: fuzz load vulncheck

FUZZTIME ?= 60s

## fuzz: every fuzz target (func FuzzXxx under cmd/, internal/) for FUZZTIME each (default 60s), one after the other
fuzz:
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

## load: olm-cmp serve under 2000 mixed GenerateManifest calls and a 1000-Application fleet; prints throughput, latency, RSS, CPU (LOADFLAGS: see go run ./test/load -h)
load: build
	$(GO) run ./test/load -bin $(BIN) $(LOADFLAGS)

## vulncheck: govulncheck (pinned, from the module proxy) on ./...; says so and passes when vuln.go.dev is unreachable, unless VULNCHECK_STRICT=1
vulncheck:
	hack/vulncheck.sh
