// Package selftest tests the suite itself (make test): it checks the
// reports of a real run against the verdicts expected for the embedded
// runtime's version, the suite's exit code, that nothing is left behind,
// that bad input gets one clear line, and that Ctrl-C cleans up.
package selftest
