#!/usr/bin/env bash
# Static checks: formatting, vet, the Windows build, and the framework's
# one-way dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './_artifacts/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
$go vet ./...
GOOS=windows $go build ./...
GOOS=windows $go vet ./...  # test files too: the suite binary ships for Windows

# The framework core imports none of its subpackages but the leaf
# capability package; suites never import each other.
bad=$($go list -f '{{join .Imports "\n"}}' ./framework | grep '^github.com/ectest/ectest/framework/' | grep -v '/framework/capability$' || true)
if [ -n "$bad" ]; then
  echo "framework core imports its subpackages: $bad"; exit 1
fi
bad=$($go list -f '{{join .Imports "\n"}}' ./framework/capability | grep '^github.com/ectest/ectest/' || true)
if [ -n "$bad" ]; then
  echo "framework/capability must be a leaf, imports: $bad"; exit 1
fi
bad=$($go list -f '{{join .Imports "\n"}}' ./framework/oracle | grep '^github.com/ectest/ectest/' || true)
if [ -n "$bad" ]; then
  echo "framework/oracle must be a leaf, imports: $bad"; exit 1
fi
# A spec checks everything, then records its observation once: an
# assertion after Checker.Record (or a Record... helper) turns a judgement
# already made into the run's own error. And it records through the
# builder (capability.Observe): no Outcome set by hand, no Observation
# literal with one.
$go run ./internal/recordlast/cmd suites
for s in suites/*/; do
  bad=$($go list -test -f '{{join .Imports "\n"}}' "./$s" 2>/dev/null | grep '^github.com/ectest/ectest/suites/' | grep -v "suites/$(basename "$s")" || true)
  if [ -n "$bad" ]; then
    echo "suite $s imports another suite: $bad"; exit 1
  fi
done
echo "verify: ok"
