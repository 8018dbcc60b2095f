#!/usr/bin/env bash
# Static checks: formatting, vet, the Windows build, and the framework's
# one-way dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './_artifacts/*' -not -path './_output/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed:"; echo "$unformatted"; exit 1
fi
$go vet ./...
# The GitHub Actions workflows, with actionlint (built once from the Go
# module proxy, cached by version; shellcheck, when installed, checks their
# run steps too).
actionlint_version=v1.7.12
actionlint_dir="${XDG_CACHE_HOME:-$HOME/.cache}/ectest/bin/actionlint-$actionlint_version"
if [ ! -x "$actionlint_dir/actionlint" ]; then
  echo "ectest: building actionlint $actionlint_version from the Go module proxy (once)"
  GOBIN="$actionlint_dir" CGO_ENABLED=0 $go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version"
fi
"$actionlint_dir/actionlint" .github/workflows/*.yaml
GOOS=windows $go build ./...
GOOS=windows $go vet ./...  # test files too: the suite binary ships for Windows

# The framework core (plain configuration, labels, requirements, outcome)
# sits at the bottom: of the project it imports only the leaf capability
# package and internal/buildinfo (the version, standard library only),
# never runtimes, kind or fixtures. Suites never import each other.
bad=$($go list -deps ./framework | grep '^github.com/ectest/ectest/' | grep -v -x -e 'github.com/ectest/ectest/framework' -e 'github.com/ectest/ectest/framework/capability' -e 'github.com/ectest/ectest/internal/buildinfo' || true)
if [ -n "$bad" ]; then
  echo "framework core depends on more than framework/capability and internal/buildinfo: $bad"; exit 1
fi
bad=$($go list -f '{{join .Imports "\n"}}' ./internal/buildinfo | grep '^github.com/ectest/ectest/' || true)
if [ -n "$bad" ]; then
  echo "internal/buildinfo must be a leaf, imports: $bad"; exit 1
fi
# Suite binaries make clusters from node images built before: they never
# link the node-image builder.
for s in ./suites/cri ./suites/cluster; do
  if $go list -test -deps "$s" | grep -q '^github.com/ectest/ectest/internal/nodebuild$'; then
    echo "suite $s links the node-image builder (internal/nodebuild)"; exit 1
  fi
done
# Commands live under cmd/ only.
bad=$($go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v '^github.com/ectest/ectest/cmd/' || true)
if [ -n "$bad" ]; then
  echo "commands outside cmd/: $bad"; exit 1
fi
bad=$($go list -f '{{join .Imports "\n"}}' ./framework/capability | grep '^github.com/ectest/ectest/' || true)
if [ -n "$bad" ]; then
  echo "framework/capability must be a leaf, imports: $bad"; exit 1
fi
# The runtimes catalog is data both layers read: it imports the builds'
# and host packages' lists only, never the framework or kind.
bad=$($go list -f '{{join .Imports "\n"}}' ./runtimes/catalog | grep '^github.com/ectest/ectest/' | grep -v -e '/internal/gobuild$' -e '/internal/hostdeps$' -e '/runtimes/builds$' || true)
if [ -n "$bad" ]; then
  echo "runtimes/catalog must stay a leaf, imports: $bad"; exit 1
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
$go run ./cmd/ectest-recordlast suites
for s in suites/*/; do
  bad=$($go list -test -f '{{join .Imports "\n"}}' "./$s" 2>/dev/null | grep '^github.com/ectest/ectest/suites/' | grep -v "suites/$(basename "$s")" || true)
  if [ -n "$bad" ]; then
    echo "suite $s imports another suite: $bad"; exit 1
  fi
done
echo "verify: ok"
