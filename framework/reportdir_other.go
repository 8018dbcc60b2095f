//go:build !unix

package framework

// writableDir: the folder is made at the run's start, where a failure is
// the run's error.
func writableDir(string) error { return nil }

// freeBytes is not known here.
func freeBytes(string) (uint64, bool) { return 0, false }

// lockReportDir does nothing where there is no flock(2).
func lockReportDir(string) (func(), error) { return func() {}, nil }
