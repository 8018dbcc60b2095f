package progress

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock is moved by hand; its tickers tick when the test sends.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
}

type fakeTicker struct {
	c       chan time.Time
	d       time.Duration
	stopped chan struct{}
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }
func (t *fakeTicker) Stop()               { close(t.stopped) }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{c: make(chan time.Time), d: d, stopped: make(chan struct{})}
	c.tickers = append(c.tickers, t)
	return t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// lines collects logged lines on a channel, so a test waits for a line
// rather than for time.
type lines chan string

func (l lines) logf(format string, args ...any) { l <- fmt.Sprintf(format, args...) }

func (l lines) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no line logged")
		return ""
	}
}

func (l lines) none(t *testing.T) {
	t.Helper()
	select {
	case s := <-l:
		t.Fatalf("unexpected line %q", s)
	default:
	}
}

func TestStepTicksAndEndsDone(t *testing.T) {
	c := &fakeClock{now: time.Unix(1000, 0)}
	l := make(lines, 10)
	s := StartClock(c, l.logf, "building containerd v2.4.2", "about 1 to 3 min cold")
	if got, want := l.next(t), "building containerd v2.4.2: started (about 1 to 3 min cold)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if c.tickers[0].d != Interval || Interval != 15*time.Second {
		t.Fatalf("ticker interval %s, Interval %s", c.tickers[0].d, Interval)
	}
	for _, want := range []string{"15s", "30s", "45s"} {
		c.advance(Interval)
		c.tickers[0].c <- c.Now()
		if got := l.next(t); got != "building containerd v2.4.2: still running, "+want {
			t.Fatalf("got %q", got)
		}
	}
	c.advance(47 * time.Second)
	if err := s.Done(nil); err != nil {
		t.Fatal(err)
	}
	if got, want := l.next(t), "building containerd v2.4.2: done in 1m32s"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	select {
	case <-s.exited:
	default:
		t.Fatal("the ticking goroutine still runs after Done")
	}
	select {
	case <-c.tickers[0].stopped:
	default:
		t.Fatal("the ticker was not stopped")
	}
	s.Done(errors.New("again")) // logs nothing more
	l.none(t)
}

func TestStepFailedLogsTheErrorsFirstLine(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	l := make(lines, 10)
	err := func() (err error) {
		s := StartClock(c, l.logf, "debootstrap", "")
		defer s.End(&err)
		c.advance(40 * time.Second)
		return errors.New("exit status 1\nlast output lines")
	}()
	if err == nil {
		t.Fatal("the error was lost")
	}
	if got := l.next(t); got != "debootstrap: started" {
		t.Fatalf("got %q", got)
	}
	if got, want := l.next(t), "debootstrap: failed after 40s: exit status 1 ..."; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestParentDoesNotTickWhileAChildRuns(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	l := make(lines, 10)
	parent := StartClock(c, l.logf, "node image", "")
	child := parent.Start("Kubernetes binaries")
	l.next(t)
	l.next(t)
	c.advance(Interval)
	parent.tick() // what the parent's goroutine does on a tick
	l.none(t)
	child.tick()
	if got := l.next(t); got != "Kubernetes binaries: still running, 15s" {
		t.Fatalf("got %q", got)
	}
	child.Done(nil)
	if got := l.next(t); got != "Kubernetes binaries: done in 15s" {
		t.Fatalf("got %q", got)
	}
	c.advance(Interval)
	parent.tick()
	if got := l.next(t); got != "node image: still running, 30s" {
		t.Fatalf("got %q", got)
	}
	parent.Done(nil)
	if got := l.next(t); got != "node image: done in 30s" {
		t.Fatalf("got %q", got)
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "0s", 45 * time.Second: "45s", 62 * time.Second: "1m02s",
		92*time.Second + 600*time.Millisecond: "1m33s", 3723 * time.Second: "1h02m03s", -time.Second: "0s",
	} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestNilLogfLogsNothing(t *testing.T) {
	c := &fakeClock{}
	StartClock(c, nil, "x", "").Done(nil)
}
