// Package progress makes long work say that it runs: a step logs when it
// starts, a line with the time elapsed every Interval while it runs, and
// when it ends, "done in 1m32s" or "failed after 40s: <error>". A new
// machine builds runtimes, Kubernetes and node images for minutes; without
// these lines it looks hung.
//
//	p := progress.Start(logf, "building containerd v2.4.2 from the Go module proxy")
//	defer p.End(&err) // err: the function's named error result
//
// or, without a named result, return p.Done(err). (defer p.Done(err) would
// evaluate err when deferring, before the work: use End(&err).)
//
// A step started from another (Step.Start) is its child: the parent does not
// tick while a child runs, so nested stages print one "still running" line
// per Interval, not one per level.
package progress

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Interval is how often a running step logs that it still runs.
const Interval = 15 * time.Second

// Logf logs one line (a nil Logf logs nothing).
type Logf func(format string, args ...any)

// Clock is the time a step measures and the ticker that makes it log;
// tests inject a fake one.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
}

// Ticker is a time.Ticker behind an interface.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// SystemClock is the real clock.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
func (systemClock) NewTicker(d time.Duration) Ticker {
	return systemTicker{time.NewTicker(d)}
}

type systemTicker struct{ t *time.Ticker }

func (t systemTicker) C() <-chan time.Time { return t.t.C }
func (t systemTicker) Stop()               { t.t.Stop() }

// Step is one piece of long work under way.
type Step struct {
	logf     Logf
	clock    Clock
	what     string
	start    time.Time
	parent   *Step
	children atomic.Int32
	ticker   Ticker
	stop     chan struct{}
	exited   chan struct{}
	once     sync.Once
}

// Start logs "<what>: started" and starts the step's ticker.
func Start(logf Logf, what string) *Step { return StartClock(SystemClock, logf, what, "") }

// StartExpect is Start with what the step usually takes ("about 1 to 3 min
// cold"), logged on the started line only.
func StartExpect(logf Logf, what, expect string) *Step {
	return StartClock(SystemClock, logf, what, expect)
}

// StartClock is StartExpect with a clock of the caller's (tests).
func StartClock(c Clock, logf Logf, what, expect string) *Step {
	return start(c, logf, what, expect, nil)
}

// Start starts a child step: s does not tick until it is done.
func (s *Step) Start(what string) *Step { return s.StartExpect(what, "") }

// StartExpect starts a child step with what it usually takes.
func (s *Step) StartExpect(what, expect string) *Step {
	return start(s.clock, s.logf, what, expect, s)
}

func start(c Clock, logf Logf, what, expect string, parent *Step) *Step {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Step{logf: logf, clock: c, what: what, start: c.Now(), parent: parent,
		stop: make(chan struct{}), exited: make(chan struct{})}
	if parent != nil {
		parent.children.Add(1)
	}
	if expect != "" {
		logf("%s: started (%s)", what, expect)
	} else {
		logf("%s: started", what)
	}
	s.ticker = c.NewTicker(Interval)
	go s.run()
	return s
}

func (s *Step) run() {
	defer close(s.exited)
	for {
		select {
		case <-s.stop:
			return
		case <-s.ticker.C():
			s.tick()
		}
	}
}

// tick logs that the step still runs, unless a child of it runs (the
// child says so).
func (s *Step) tick() {
	if s.children.Load() > 0 {
		return
	}
	s.logf("%s: still running, %s", s.what, Elapsed(s.clock.Now().Sub(s.start)))
}

// Done stops the ticker, logs "<what>: done in D" or "<what>: failed after
// D: <the error's first line>" (the caller reports the whole error) and
// returns err. Only its first call logs.
func (s *Step) Done(err error) error {
	s.once.Do(func() {
		close(s.stop)
		<-s.exited
		s.ticker.Stop()
		d := Elapsed(s.clock.Now().Sub(s.start))
		if err != nil {
			s.logf("%s: failed after %s: %s", s.what, d, firstLine(err.Error()))
		} else {
			s.logf("%s: done in %s", s.what, d)
		}
		if s.parent != nil {
			s.parent.children.Add(-1)
		}
	})
	return err
}

// End is Done for a deferred call: it reads the error when the function
// returns (defer p.End(&err)).
func (s *Step) End(errp *error) {
	var err error
	if errp != nil {
		err = *errp
	}
	s.Done(err)
}

// Run runs f as the step what.
func Run(logf Logf, what string, f func() error) error {
	s := Start(logf, what)
	return s.Done(f())
}

// Elapsed formats a duration to the second as "45s", "1m02s" or "1h02m03s".
func Elapsed(d time.Duration) string {
	secs := int64(d.Round(time.Second) / time.Second)
	if secs < 0 {
		secs = 0
	}
	h, m, sec := secs/3600, secs/60%60, secs%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
