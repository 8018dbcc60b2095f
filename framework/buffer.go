package framework

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer one goroutine writes (a stream's copier) while
// another reads it; Seen closes once it holds the text given to Until (at
// its first write without one), for a writer of input that waits for an
// answer.
type Buffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	until string
	seen  chan struct{}
	once  sync.Once
}

// NewBuffer returns an empty Buffer.
func NewBuffer() *Buffer { return &Buffer{seen: make(chan struct{})} }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.check()
	return n, err
}

// Until makes Seen close once the buffer holds s (at once if it does).
func (b *Buffer) Until(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.until = s
	if b.buf.Len() > 0 {
		b.check()
	}
}

func (b *Buffer) check() {
	if b.until == "" || b.holds(b.until) {
		b.once.Do(func() { close(b.seen) })
	}
}

// Seen is closed once the buffer holds what Until asked for.
func (b *Buffer) Seen() <-chan struct{} { return b.seen }

// MarkSeen closes Seen without waiting for any text.
func (b *Buffer) MarkSeen() { b.once.Do(func() { close(b.seen) }) }

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Holds reports whether the buffer holds s now.
func (b *Buffer) Holds(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holds(s)
}

func (b *Buffer) holds(s string) bool { return bytes.Contains(b.buf.Bytes(), []byte(s)) }

// Prompt types text into w, again every poll, until answered holds; false
// when ctx ended or a write failed first. A streaming session's input can
// reach the process before the runtime attached its output (containerd's
// CRI Attach starts copying stdin first, internal/cri/io/container_io.go),
// so that the answer to input typed at once is lost: a client types
// something harmless (an empty line) until an answer shows, and only then
// what it came to type.
func Prompt(ctx context.Context, w io.Writer, text string, poll time.Duration, answered func() bool) bool {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !answered() {
		if _, err := io.WriteString(w, text); err != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}
