# ectest: conformance suite for ephemeral (debug) containers and namespace targeting.
GO ?= go
GINKGO ?= $(GO) tool ginkgo
# Reports go to $ARTIFACTS (prow) or _artifacts.
REPORT_DIR ?= $(if $(ARTIFACTS),$(ARTIFACTS),$(CURDIR)/_artifacts)
PROCS ?= 4
# Extra suite flags, e.g. ECTEST_FLAGS="-runtime-endpoint=unix:///run/containerd/containerd.sock"
ECTEST_FLAGS ?=

# Kubernetes version and container runtime of the offline-built kind node image (NODE_RUNTIME:
# containerd-2, the default, containerd-2-gvisor, containerd-1.7 or containerd-1.6), or a given image.
KUBERNETES_VERSION ?=
NODE_RUNTIME ?=
KIND_NODE_IMAGE ?=
KIND_FLAGS = $(if $(KUBERNETES_VERSION),-kubernetes-version=$(KUBERNETES_VERSION)) $(if $(NODE_RUNTIME),-node-runtime=$(NODE_RUNTIME)) $(if $(KIND_NODE_IMAGE),-kind-node-image=$(KIND_NODE_IMAGE))
# RuntimeClass of the cluster suite's pods (e.g. RUNTIME_CLASS=gvisor with NODE_RUNTIME=containerd-2-gvisor).
RUNTIME_CLASS ?=
CLUSTER_SUITE_FLAGS = $(KIND_FLAGS) $(if $(RUNTIME_CLASS),-runtime-class=$(RUNTIME_CLASS))

.PHONY: windows windows-selftest conformance conformance-cri test mutation runtimes probe unit verify benchmark deps clean cluster cluster-down node-image cluster-conformance api-releases api-release

# Extra cluster-suite flags, e.g. CLUSTER_FLAGS="-kubeconfig=$$HOME/.kube/config"
CLUSTER_FLAGS ?=

## conformance: the CRI suite against the embedded runtime and the cluster suite against the default kind
## cluster (both made and removed here), reports and one side-by-side capability matrix
conformance:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) ECTEST_FLAGS="$(if $(RUNTIME),-runtime=$(RUNTIME)) $(ECTEST_FLAGS)" CLUSTER_FLAGS="$(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)" hack/conformance.sh

## cluster-conformance: only the cluster suite, on a kind cluster of its own (CLUSTER_NAME, default ectest; made and
## deleted) of KUBERNETES_VERSION, the specs LABELS selects (a Ginkgo label filter; all when empty).
## Reports in $(REPORT_DIR)/cluster. Example: make cluster-conformance KUBERNETES_VERSION=v1.35.8 LABELS=api-release CLUSTER_NAME=api-1-35
LABELS ?=
CLUSTER_NAME ?=
cluster-conformance:
	$(GINKGO) -p --procs=$(PROCS) $(if $(LABELS),--label-filter='$(LABELS)') ./suites/cluster -- -report-dir=$(REPORT_DIR)/cluster $(if $(CLUSTER_NAME),-cluster-name=$(CLUSTER_NAME)) $(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)

## api-releases: the API server's specs (label api-release) against a single-node cluster of each release of
## kind/nodeimage/versions.yaml's apiServers (RELEASES="v1.35.8 v1.36.4" for some), one cluster each, past failures;
## reports in $(REPORT_DIR)/api-releases/<release>, outcomes and times in $(REPORT_DIR)/api-releases/api-releases.md
## (LOCK=/tmp/ectest-heavy.lock wraps each build and run in flock on a shared machine)
RELEASES ?=
api-releases:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RELEASES="$(RELEASES)" LABELS="$(if $(LABELS),$(LABELS),api-release)" CLUSTER_FLAGS="$(CLUSTER_FLAGS)" hack/api-releases.sh

## api-release: the same for one release, K8S (a matrix cell): make api-release K8S=v1.35.8
K8S ?=
api-release:
	@test -n "$(K8S)" || { echo "ectest: make api-release needs K8S=vX.Y.Z (one of kind/nodeimage/versions.yaml's apiServers)" >&2; exit 2; }
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RELEASES="$(K8S)" LABELS="$(if $(LABELS),$(LABELS),api-release)" CLUSTER_FLAGS="$(CLUSTER_FLAGS)" hack/api-releases.sh

## conformance-cri: only the CRI suite (no cluster)
conformance-cri:
	$(GINKGO) -p --procs=$(PROCS) ./suites/cri -- -report-dir=$(REPORT_DIR)/cri $(if $(RUNTIME),-runtime=$(RUNTIME)) $(ECTEST_FLAGS)

## test: everything: static checks, unit tests, the CRI suite against the embedded runtime checked against
## its expected verdicts, and the offline kind cluster pipeline (built from source on first use, then cached)
test: verify unit
	hack/selftest.sh
	hack/windows-selftest.sh
	hack/mutation.sh
	hack/cluster-selftest.sh

## mutation: the CRI suite through every fault of the fault-injecting CRI proxy (a self-test); a surviving
## fault fails it. Reports in $(REPORT_DIR)/mutation (FAULTS=a,b for some)
mutation:
	REPORT_DIR=$(REPORT_DIR) hack/mutation.sh

## runtimes: the CRI suite against every embedded runtime (containerd-1.6, containerd-1.7, containerd-2, containerd-2-crun, containerd-2-gvisor; RUNTIMES="a b" for some),
## one table with the runtimes as columns in $(REPORT_DIR)/runtimes/runtimes.md
runtimes:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) ECTEST_FLAGS="$(ECTEST_FLAGS)" hack/runtimes.sh

## windows-selftest: the CRI suite through the CRI proxy's windows personality (Linux containerd playing containerd on
## Windows; a self-test of the suite's Windows code path, never Windows conformance), checked against
## suites/selftest/expected/windows/. Reports in $(REPORT_DIR)/windows-selftest
windows-selftest:
	REPORT_DIR=$(REPORT_DIR) hack/windows-selftest.sh

## probe: the CRI suite with -profile=probe against a runtime with no profile (ECTEST_FLAGS=-runtime-endpoint=...,
## or RUNTIME=name for an embedded one): judges only what every runtime must support and writes what the runtime did
## as $(REPORT_DIR)/probe[/RUNTIME]/observed-profile.yaml. The suite exits 4 for a probe done; make probe then succeeds
probe:
	REPORT_DIR=$(REPORT_DIR) PROCS=$(PROCS) RUNTIME=$(RUNTIME) ECTEST_FLAGS="$(ECTEST_FLAGS)" hack/probe.sh || [ $$? -eq 4 ]

## unit: the framework's own logic
unit:
	$(GO) test -count=1 ./framework/... ./runtimes/... ./fixtures/... ./kind/... ./internal/...

## cluster: build what is missing (node image, offline) and create the default kind cluster
## (NODE_RUNTIME=containerd-2-gvisor adds gVisor as the RuntimeClass gvisor)
cluster:
	$(GO) run ./kind/cmd/ectest-kind up $(KIND_FLAGS)

## cluster-down: delete the kind cluster (caches stay)
cluster-down:
	$(GO) run ./kind/cmd/ectest-kind down

## node-image: build the offline kind node image only
node-image:
	$(GO) run ./kind/cmd/ectest-kind node-image $(KIND_FLAGS)

## windows: the suite binaries for a Windows node (windows/amd64), self-contained, in _output/windows
windows:
	mkdir -p _output/windows
	GOOS=windows GOARCH=amd64 $(GO) test -c -o _output/windows/cri.test.exe ./suites/cri
	GOOS=windows GOARCH=amd64 $(GO) test -c -o _output/windows/cluster.test.exe ./suites/cluster
	GOOS=windows GOARCH=amd64 $(GO) build -o _output/windows/ectest-report.exe ./framework/report/ectest-report
	@ls -l _output/windows

## verify: gofmt, go vet, the Windows build, dependency direction
verify:
	hack/verify.sh

## benchmark: debug container latency with gmeasure (20+ samples), JSON into the report dir
benchmark:
	$(GINKGO) --label-filter=benchmark -v ./suites/cri -- -report-dir=$(REPORT_DIR)/benchmark/cri $(ECTEST_FLAGS)
	$(GINKGO) --label-filter=benchmark -v ./suites/cluster -- -report-dir=$(REPORT_DIR)/benchmark/cluster $(CLUSTER_SUITE_FLAGS) $(CLUSTER_FLAGS)

## deps: install every host package ectest can use, at once (each entry point installs what it needs anyway)
deps:
	hack/install-deps.sh

clean:
	rm -rf _artifacts
