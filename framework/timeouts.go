package framework

import "time"

// Timeouts are every time limit the suites use, in one place.
type Timeouts struct {
	// SuiteSetup covers building images, starting the registry and the
	// embedded runtime, and pre-pulling images.
	SuiteSetup time.Duration
	// ClusterSetup covers building a node image from source (cold: about
	// 20 minutes on 2 cores) and creating the cluster.
	ClusterSetup time.Duration
	// Spec bounds a whole spec (SpecTimeout).
	Spec time.Duration
	// Benchmark bounds a benchmark spec.
	Benchmark time.Duration
	// RuntimeCall bounds one CRI call that does no pulling.
	RuntimeCall time.Duration
	// ImagePull bounds one image pull.
	ImagePull time.Duration
	// ContainerReady is how long a started container may take to be running
	// and answer (the target's HTTP port, a debug container's first exec).
	ContainerReady time.Duration
	// ContainerExit is how long a runtime may take to report a container
	// EXITED once its processes are gone (stopped, or killed with the PID
	// namespace they were in).
	ContainerExit time.Duration
	// Exec bounds one ExecSync or streaming exec.
	Exec time.Duration
	// Cleanup bounds the teardown of one resource.
	Cleanup time.Duration
	// Poll is the interval of Eventually polls.
	Poll time.Duration
}

// DefaultTimeouts fit the slowest machine the suite runs on (2 cores).
var DefaultTimeouts = Timeouts{
	SuiteSetup:     5 * time.Minute,
	ClusterSetup:   45 * time.Minute,
	Spec:           3 * time.Minute,
	Benchmark:      15 * time.Minute,
	RuntimeCall:    30 * time.Second,
	ImagePull:      2 * time.Minute,
	ContainerReady: 30 * time.Second,
	ContainerExit:  30 * time.Second,
	Exec:           20 * time.Second,
	Cleanup:        60 * time.Second,
	Poll:           100 * time.Millisecond,
}
