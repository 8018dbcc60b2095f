# ectest: conformance suite for ephemeral (debug) containers and namespace targeting.
GO ?= go
GINKGO ?= $(GO) tool ginkgo
# Reports go to $ARTIFACTS (prow) or _artifacts.
REPORT_DIR ?= $(if $(ARTIFACTS),$(ARTIFACTS),$(CURDIR)/_artifacts)
PROCS ?= 4
# Extra suite flags, e.g. ECTEST_FLAGS="-runtime-endpoint=unix:///run/containerd/containerd.sock"
ECTEST_FLAGS ?=

.PHONY: conformance test unit verify benchmark deps clean

## conformance: bring up the embedded runtime, run the CRI suite in parallel, write the reports
conformance: deps
	$(GINKGO) -p --procs=$(PROCS) ./suites/cri -- -report-dir=$(REPORT_DIR) $(ECTEST_FLAGS)

## test: everything: static checks, unit tests, and the suite against the embedded runtime checked against its expected verdicts
test: deps verify unit
	hack/selftest.sh

## unit: the framework's own logic
unit:
	$(GO) test -count=1 ./framework/... ./runtimes/... ./fixtures/...

## verify: gofmt, go vet, the Windows build, dependency direction
verify:
	hack/verify.sh

## benchmark: debug container latency with gmeasure (20+ samples), JSON into the report dir
benchmark: deps
	$(GINKGO) --label-filter=benchmark -v ./suites/cri -- -report-dir=$(REPORT_DIR)/benchmark $(ECTEST_FLAGS)

deps:
	hack/install-deps.sh

clean:
	rm -rf _artifacts
