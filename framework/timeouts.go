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
	// LogWrite is how long a line a running container wrote may take to
	// reach its CRI log file (the runtime writes each line as it comes).
	LogWrite time.Duration
	// RuntimeReady is how long a runtime may take, when a run starts, to
	// report RuntimeReady and NetworkReady in its Status (a runtime just
	// started loads its CNI configuration); one that does not is a run
	// error, never judged.
	RuntimeReady time.Duration
	// Cleanup bounds the teardown of one resource, retries of what the
	// runtime refuses for a while included ("starting" state, a stop in
	// progress).
	Cleanup time.Duration
	// Drain is how long, at the end of a cluster run, the deletion of its
	// namespaces (and their pods' sandboxes on the nodes) may go without
	// anything of them going before what is left counts as leaked.
	Drain time.Duration
	// DrainLimit bounds the whole of that wait, however long the deletions
	// keep making progress: within the 300 s a sonobuoy plugin's pod has
	// after SIGTERM to clean up and write its reports (deploy/sonobuoy).
	DrainLimit time.Duration
	// Poll is the interval of Eventually polls.
	Poll time.Duration
	// Keystroke is how often a session waiting for a shell to answer types
	// its empty line again (framework.Prompt); each one still queued in a
	// terminal when the shell comes is one more prompt in the output.
	Keystroke time.Duration
	// ProcessStop is how long a process sent SIGSTOP may take to show
	// stopped in /proc (an exec session frozen before its children are
	// killed); what is below it is killed after that all the same.
	ProcessStop time.Duration
	// EnvironmentProbe bounds one check of the suite's own environment (the
	// loopback registry, the API server) before a nonconformance is recorded.
	EnvironmentProbe time.Duration
	// EnvironmentRecheck is how often a long wait (a pod to run) checks the
	// suite's environment, so that a wait the environment ended (the node's
	// runtime hung) is a run error at once, not when its timeout runs out.
	EnvironmentRecheck time.Duration
	// EnvironmentWatch is how often each process of the CRI suite asks the
	// runtime for its Version in the background, so that a runtime that
	// hung and came back during a spec is known to have been gone even
	// when nothing else of that process asked it meanwhile.
	EnvironmentWatch time.Duration
	// EnvironmentSettle is how long a check of the API server's readiness
	// is asked again before it counts as the environment broken (its etcd
	// check blips under load).
	EnvironmentSettle time.Duration
	// RegistryUnreachable is how long a pod's container may keep failing
	// to pull because its node cannot reach the suite's registry at all
	// before the wait is a run error: longer than one dropped request and
	// the kubelet's first back-off, far shorter than a pod's own wait.
	RegistryUnreachable time.Duration
	// ProgressPost bounds one -progress-url update; ProgressStart is how
	// long the first (the total) is retried while the endpoint comes up
	// (sonobuoy's worker starts beside the suite).
	ProgressPost  time.Duration
	ProgressStart time.Duration
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
	LogWrite:       10 * time.Second,
	RuntimeReady:   30 * time.Second,
	Cleanup:        60 * time.Second,
	Drain:          3 * time.Minute,
	DrainLimit:     4 * time.Minute,
	Poll:           100 * time.Millisecond,
	Keystroke:      250 * time.Millisecond,
	ProcessStop:    2 * time.Second,

	EnvironmentProbe:    5 * time.Second,
	EnvironmentRecheck:  10 * time.Second,
	EnvironmentWatch:    time.Second,
	EnvironmentSettle:   15 * time.Second,
	RegistryUnreachable: 30 * time.Second,
	ProgressPost:        3 * time.Second,
	ProgressStart:       30 * time.Second,
}
