# ectest: conformance suite for ephemeral (debug) containers and namespace targeting.
GO ?= go
GINKGO ?= $(GO) tool ginkgo
# Reports go to $ARTIFACTS (prow) or _artifacts.
REPORT_DIR ?= $(if $(ARTIFACTS),$(ARTIFACTS),$(CURDIR)/_artifacts)
PROCS ?= 4
# Extra suite flags, e.g. ECTEST_FLAGS="-runtime-endpoint=unix:///run/containerd/containerd.sock"
ECTEST_FLAGS ?=

# Kubernetes version and container runtime of the offline-built kind node image (NODE_RUNTIME: one of
# runtimes/catalog's node runtimes, go run ./cmd/ectest-kind node-runtimes; containerd-2 the default), or a given image.
KUBERNETES_VERSION ?=
NODE_RUNTIME ?=
KIND_NODE_IMAGE ?=
# TOPOLOGY: the kind cluster's nodes: single (the default), skew (a control plane of N and one worker per kubelet
# release of kind/nodeimage/versions.yaml's skewKubelets, N..N-3) or skew-pair (one worker of N-1).
TOPOLOGY ?=
NODE_FLAGS = $(if $(KUBERNETES_VERSION),-kubernetes-version=$(KUBERNETES_VERSION)) $(if $(NODE_RUNTIME),-node-runtime=$(NODE_RUNTIME))
KIND_FLAGS = $(NODE_FLAGS) $(if $(KIND_NODE_IMAGE),-kind-node-image=$(KIND_NODE_IMAGE)) $(if $(TOPOLOGY),-topology=$(TOPOLOGY))
# The skew target's topology: skew (every kubelet of versions.yaml) or skew-pair (N and N-1, as make test runs it).
SKEW_TOPOLOGY ?= skew
# RuntimeClass of the cluster suite's pods (e.g. RUNTIME_CLASS=gvisor with NODE_RUNTIME=containerd-2-gvisor).
RUNTIME_CLASS ?=
CLUSTER_SUITE_FLAGS = $(KIND_FLAGS) $(if $(RUNTIME_CLASS),-runtime-class=$(RUNTIME_CLASS))

# EXPECT: compare the verdicts with expectation files (-expect): builtin (the project's own, runtimes/expected)
# or your file or folder. Exit 0 then means "as expected", 1 "changed".
EXPECT ?=
EXPECT_FLAG = $(if $(EXPECT),-expect=$(EXPECT))
# make certify: your runtime's CRI endpoint, and optionally its image endpoint, runtime handler and profile, and
# REGISTRY_ADDR, where the suite's test registry listens (-registry-addr; a root-only port your runtime is configured
# to pull from over plain HTTP, e.g. 127.0.0.1:555: docs/certify.md).
RUNTIME_ENDPOINT ?=
IMAGE_ENDPOINT ?=
RUNTIME_HANDLER ?=
PROFILE ?=
REGISTRY_ADDR ?=

KUBECTL_RELEASES ?=

.PHONY: sonobuoy-selftest critest-compare soak kubectl-profiles help certify windows windows-selftest conformance conformance-cri conformance-cluster matrix test mutation mutation-cluster runtimes probe unit verify benchmark deps clean cluster cluster-down node-image skew api-releases api-release release

## help: this list (the default target): each target and what it does
help:
	@awk '/^## [a-z-]+:/ { sub(/^## /, ""); split($$0, a, ":"); printf "\n  make %-18s%s\n", a[1], substr($$0, length(a[1]) + 2); next } /^## / { sub(/^## /, ""); printf "  %-24s%s\n", "", $$0 }' $(MAKEFILE_LIST)

# Extra cluster-suite flags, e.g. CLUSTER_FLAGS="-kubeconfig=$$HOME/.kube/config". The make targets make (or reuse)
# their own kind cluster unless CLUSTER_FLAGS names one: a $KUBECONFIG in your shell (which the suite binary itself
# would use) is not passed to them.
# Nor is a pod's in-cluster configuration (a CI job running in a pod).
unexport KUBECONFIG KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
CLUSTER_FLAGS ?=

## certify: the vendor path: only the CRI suite, against RUNTIME_ENDPOINT (a runtime you started), in PROCS
## processes; installs nothing, starts no runtime, makes no cluster; reports in $(REPORT_DIR)/certify.
## make certify RUNTIME_ENDPOINT=unix:///run/containerd/containerd.sock [IMAGE_ENDPOINT=] [RUNTIME_HANDLER=] [PROFILE=] [EXPECT=FILE]
##   [REGISTRY_ADDR=127.0.0.1:555]
certify:
	@test -n "$(RUNTIME_ENDPOINT)" || { echo "ectest: make certify needs RUNTIME_ENDPOINT=unix:///path/to/your/runtime.sock (your runtime's CRI endpoint)" >&2; exit 2; }
	SUITE_REPORT_DIR=$(REPORT_DIR)/certify PROCS=$(PROCS) LABELS="$(LABELS)" hack/suite.sh cri -runtime-endpoint=$(RUNTIME_ENDPOINT) $(if $(IMAGE_ENDPOINT),-image-endpoint=$(IMAGE_ENDPOINT)) $(if $(RUNTIME_HANDLER),-runtime-handler=$(RUNTIME_HANDLER)) $(if $(PROFILE),-profile=$(PROFILE)) $(if $(REGISTRY_ADDR),-registry-addr=$(REGISTRY_ADDR)) $(EXPECT_FLAG) $(ECTEST_FLAGS)

## conformance: the CRI suite against the embedded runtime and the cluster suite against the default kind
## cluster (both made and removed here), reports and one side-by-side capability matrix (EXPECT=builtin: compared
## with the project's known deviations, exit 0 "as expected")
conformance:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) EXPECT="$(EXPECT)" ECTEST_FLAGS="$(if $(RUNTIME),-runtime=$(RUNTIME)) $(ECTEST_FLAGS)" CLUSTER_FLAGS="$(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)" hack/conformance.sh

LABELS ?=
CLUSTER_NAME ?=

## api-releases: the API server's specs (label api-release) against a single-node cluster of each release of
## kind/nodeimage/versions.yaml's apiServers (RELEASES="v1.35.8 v1.36.4" for some), one cluster each, past failures;
## reports in $(REPORT_DIR)/api-releases/<release>, outcomes and times in $(REPORT_DIR)/api-releases/api-releases.md
## (LOCK=/run/ectest/heavy.lock wraps each build and run in flock on a shared machine)
RELEASES ?=
api-releases:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RELEASES="$(RELEASES)" LABELS="$(if $(LABELS),$(LABELS),api-release)" CLUSTER_FLAGS="$(CLUSTER_FLAGS)" hack/api-releases.sh

## api-release: the same for one release, K8S (a matrix cell): make api-release K8S=v1.35.8
K8S ?=
api-release:
	@test -n "$(K8S)" || { echo "ectest: make api-release needs K8S=vX.Y.Z (one of kind/nodeimage/versions.yaml's apiServers)" >&2; exit 2; }
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RELEASES="$(K8S)" LABELS="$(if $(LABELS),$(LABELS),api-release)" CLUSTER_FLAGS="$(CLUSTER_FLAGS)" hack/api-releases.sh

## kubectl-profiles: the kubectl debug profile specs (label debug-profiles: each profile × style × Pod Security level,
## --custom, the default profile) with a kubectl of each release of KUBECTL_RELEASES (default: versions.yaml's
## apiServers), each built alone first from the Go module proxy (about 1 to 2 min cold, then cached), against the
## default kind cluster (made and removed; CLUSTER_NAME, CLUSTER_FLAGS as conformance-cluster). The table
## profile × style × level × kubectl release is $(REPORT_DIR)/kubectl-profiles/kubectl-profiles.md
kubectl-profiles:
	@out=$$($(GO) run ./cmd/ectest-kind kubectl $(KUBECTL_RELEASES)) || exit 3; \
	releases=$$(echo "$$out" | cut -d' ' -f1 | tr '\n' ' '); echo "ectest: kubectl releases: $$releases"; \
	KUBECTL_RELEASES="$$releases" REPORT_DIR=$(REPORT_DIR) SUITE_REPORT_DIR=$(REPORT_DIR)/kubectl-profiles PROCS=$(PROCS) \
	LABELS="$(if $(LABELS),$(LABELS),debug-profiles)" hack/suite.sh cluster $(CLUSTER_SUITE_FLAGS) $(if $(CLUSTER_NAME),-cluster-name=$(CLUSTER_NAME)) $(CLUSTER_FLAGS)

## conformance-cri: only the CRI suite (no cluster), reports in $(REPORT_DIR)/cri. Each run has its own copy of
## the suite (linked in _output/build only when its sources changed), so that several runs (make matrix's cells)
## can run side by side; exits with the run's code
conformance-cri:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) LABELS="$(LABELS)" hack/suite.sh cri $(if $(RUNTIME),-runtime=$(RUNTIME)) $(EXPECT_FLAG) $(ECTEST_FLAGS)

## conformance-cluster: only the cluster suite, reports in $(REPORT_DIR)/cluster, against the default kind cluster
## (made and removed; CLUSTER_NAME=NAME for another, CLUSTER_FLAGS=-kubeconfig=FILE for yours) of KUBERNETES_VERSION;
## LABELS selects specs (a Ginkgo label filter). Example: make conformance-cluster KUBERNETES_VERSION=v1.35.8 LABELS=api-release
conformance-cluster:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) LABELS="$(LABELS)" hack/suite.sh cluster $(CLUSTER_SUITE_FLAGS) $(if $(CLUSTER_NAME),-cluster-name=$(CLUSTER_NAME)) $(EXPECT_FLAG) $(CLUSTER_FLAGS)

## matrix: every cell of hack/matrix.yaml (the CRI suite per embedded runtime, the cluster suite per cluster), past
## failures, cells side by side where they do not conflict; reports per cell in $(REPORT_DIR)/matrix/cells/<cell>,
## one page $(REPORT_DIR)/matrix/matrix.html (+ .md, .json), what changed since the previous run first.
## CELLS=a,b for some, PARALLEL=N (or JOBS=N) cells at once, MERGE_ONLY=1 for the page from existing cell folders (CI)
## Each cell is compared with the project's expectation files (EXPECT=builtin, the default here): a cell is red only when it changed
matrix:
	GO="$(GO)" PROCS=$(PROCS) REPORT_DIR=$(REPORT_DIR) CELLS="$(CELLS)" PARALLEL="$(PARALLEL)" JOBS="$(JOBS)" MERGE_ONLY="$(MERGE_ONLY)" EXPECT="$(if $(EXPECT),$(EXPECT),builtin)" hack/matrix.sh

## test: everything: static checks, unit tests, the CRI suite against the embedded runtime and against CRI-O, each checked against
## its expected verdicts, the exit-code contract of every entry point (hack/contract-selftest.sh), the mutation self-test (focused: each fault through the specs that can see it; make
## mutation runs every spec per fault), and the offline kind cluster pipeline (built from source on first use, then cached).
## After verify and prepare-host (the Docker engine up), two lanes (hack/test.sh; side by side from 4 CPUs, LANES=1|2 to choose): the cluster self-test, and the CRI stages one after another;
## at the end a table of each stage's start, time and CPU time, also in $(REPORT_DIR)/test-stages.md
test:
	REPORT_DIR=$(REPORT_DIR) MAKE="$(MAKE)" GO="$(GO)" hack/test.sh

## critest-compare: the CRI suite's per-spec times next to critest's (cri-tools CRITEST_VERSION, v1.37.0 by default,
## built from the Go module proxy on first use), both against one embedded runtime (RUNTIME, containerd-2 by default)
## in PROCS processes; the table is printed and written to $(REPORT_DIR)/critest-compare/critest-compare.json
critest-compare:
	PROCS=$(PROCS) RUNTIME=$(RUNTIME) REPORT_DIR=$(REPORT_DIR) hack/critest-compare.sh

## soak: the flake campaign: the CRI suite (embedded runtime) and the cluster suite (one kind cluster) N times each
## in a row (N=20 by default), randomized, in PROCS processes, then which specs or capabilities ever differed between
## a suite's runs, with their run folders: $(REPORT_DIR)/soak/<suite>/soak.md. Exit 0 nothing differed, 1 something did.
## SUITES="cri" for one suite, RUNTIME= the CRI suite's embedded runtime. Example: make soak N=10 SUITES=cluster
N ?= 20
SUITES ?= cri cluster
soak:
	N=$(N) SUITES="$(SUITES)" PROCS=$(PROCS) REPORT_DIR=$(REPORT_DIR) RUNTIME="$(RUNTIME)" hack/soak.sh

## mutation: the CRI suite through every fault of the fault-injecting CRI proxy (a self-test), every spec per
## fault (FOCUSED=1: only the specs labelled with what the fault must break and its collateral, as make test); a surviving
## fault fails it. Reports in $(REPORT_DIR)/mutation (FAULTS=a,b for some; LAYERS="cri cluster" adds the cluster part;
## RUNTIME=name puts every fault in front of that embedded runtime, e.g. RUNTIME=cri-o, instead of Debian's containerd 1.6); JOBS=N fault runs side by side (2 by default), each lane on runtimes of its own
mutation:
	REPORT_DIR=$(REPORT_DIR) LAYERS="$(LAYERS)" FOCUSED="$(FOCUSED)" RUNTIME="$(RUNTIME)" JOBS="$(JOBS)" hack/mutation.sh

## mutation-cluster: the cluster suite through each fault that concerns the cluster layer, each on a kind
## cluster whose kubelet talks to containerd through the proxy (a few minutes per fault; not part of make test)
mutation-cluster:
	REPORT_DIR=$(REPORT_DIR) LAYERS=cluster hack/mutation.sh

## runtimes: the CRI suite against every embedded runtime of runtimes/catalog (go run ./cmd/ectest-install -list; RUNTIMES="a b" for some),
## one table with the runtimes as columns in $(REPORT_DIR)/runtimes/runtimes.md; each runtime's verdicts are then checked against runtimes/expected/
runtimes:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) ECTEST_FLAGS="$(ECTEST_FLAGS)" hack/runtimes.sh

## windows-selftest: the CRI suite through the CRI proxy's windows personality (Linux containerd playing containerd on
## Windows; a self-test of the suite's Windows code path, never Windows conformance), checked against
## suites/selftest/expected/windows/. Reports in $(REPORT_DIR)/windows-selftest
windows-selftest:
	REPORT_DIR=$(REPORT_DIR) hack/windows-selftest.sh

## sonobuoy-selftest: the cluster suite in the cluster, as a sonobuoy plugin (deploy/sonobuoy, docs/sonobuoy.md), on a
## kind cluster of its own treated as an existing one: a run from outside with only KUBECONFIG= set, then sonobuoy
## v0.57.5 (built from the Go module proxy; its image and the suite image made here) running the plugin with its own
## RBAC; progress seen in sonobuoy status, the retrieved verdicts equal to the outside run's. About 12 minutes warm.
## Reports in $(REPORT_DIR)/sonobuoy-selftest
sonobuoy-selftest:
	ARTIFACTS=$(REPORT_DIR) hack/sonobuoy-selftest.sh

## probe: the CRI suite with -profile=probe against a runtime with no profile (ECTEST_FLAGS=-runtime-endpoint=...,
## or RUNTIME=name for an embedded one): judges only what every runtime must support and writes what the runtime did
## as $(REPORT_DIR)/probe[/RUNTIME]/observed-profile.yaml. The suite exits 4 for a probe done; make probe then succeeds
probe:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RUNTIME=$(RUNTIME) ECTEST_FLAGS="$(ECTEST_FLAGS)" hack/probe.sh || [ $$? -eq 4 ]

## unit: the framework's own logic
unit:
	$(GO) run ./cmd/ectest-deps browser || echo "ectest: no Chromium: the test that renders matrix.html will skip"
	$(GO) test -count=1 ./cmd/... ./framework/... ./runtimes/... ./fixtures/... ./kind/... ./internal/...

## cluster: build what is missing (node image, offline) and create the default kind cluster
## (NODE_RUNTIME=containerd-2-gvisor adds gVisor as the RuntimeClass gvisor; NODE_RUNTIME=cri-o runs CRI-O instead of containerd)
cluster:
	$(GO) run ./cmd/ectest-kind up $(KIND_FLAGS)

## cluster-down: delete the kind cluster (caches stay; TOPOLOGY=skew for the skew cluster)
cluster-down:
	$(GO) run ./cmd/ectest-kind down $(if $(TOPOLOGY),-topology=$(TOPOLOGY))

## skew: the version-skew cluster (control plane N, one worker per kubelet N..N-3: one Kubernetes build and three
## kubelet-only builds cold, then cached), the skew specs on every kubelet (SKEW-1), one matrix column per kubelet release;
## reports in $(REPORT_DIR)/skew. The suite makes the cluster and deletes it at the end. SKEW_TOPOLOGY=skew-pair: N and N-1 only
skew:
	$(GO) run ./cmd/ectest-kind suite-images -topology=$(SKEW_TOPOLOGY) $(NODE_FLAGS) $(CLUSTER_FLAGS)
	$(GINKGO) -p --procs=$(PROCS) --label-filter=skew ./suites/cluster -- -topology=$(SKEW_TOPOLOGY) -report-dir=$(REPORT_DIR)/skew $(NODE_FLAGS) $(CLUSTER_FLAGS)

## node-image: build the offline kind node image only (the suites find the node images built here; they never build
## one: the make targets that run the cluster suite build them first with ectest-kind suite-images)
node-image:
	$(GO) run ./cmd/ectest-kind node-image $(KIND_FLAGS)

## windows: the suite binaries for a Windows node (windows/amd64), self-contained, in _output/windows
windows:
	mkdir -p _output/windows
	GOOS=windows GOARCH=amd64 $(GO) test -c -o _output/windows/cri.test.exe ./suites/cri
	GOOS=windows GOARCH=amd64 $(GO) test -c -o _output/windows/cluster.test.exe ./suites/cluster
	GOOS=windows GOARCH=amd64 $(GO) build -o _output/windows/ectest-report.exe ./cmd/ectest-report
	@ls -l _output/windows

## release: VERSION=vX.Y.Z: per-platform archives of static binaries (the CRI suite for linux amd64/arm64 and windows
## amd64; the cluster suite, ectest-report and ectest-matrix also for darwin amd64/arm64), each with .sha256 and .sha512,
## and manifest.json, in $(REPORT_DIR)/release/VERSION; every binary says VERSION and the commit (-version, every report)
release:
	VERSION="$(VERSION)" REPORT_DIR=$(REPORT_DIR) hack/release.sh

## verify: gofmt, go vet, the Windows build, dependency direction, actionlint on the workflows
verify:
	hack/verify.sh

## benchmark: debug container latency with gmeasure (20+ samples), JSON into the report dir
benchmark:
	$(GINKGO) --label-filter=benchmark -v ./suites/cri -- -report-dir=$(REPORT_DIR)/benchmark/cri $(ECTEST_FLAGS)
	$(GO) run ./cmd/ectest-kind suite-images $(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)
	$(GINKGO) --label-filter=benchmark -v ./suites/cluster -- -report-dir=$(REPORT_DIR)/benchmark/cluster $(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)

## deps: install every host package ectest can use, at once (each entry point installs what it needs anyway)
deps:
	hack/install-deps.sh

clean:
	rm -rf _artifacts _output/build
