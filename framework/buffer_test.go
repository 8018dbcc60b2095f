package framework

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func seen(b *Buffer) bool {
	select {
	case <-b.Seen():
		return true
	default:
		return false
	}
}

func TestBufferSeen(t *testing.T) {
	b := NewBuffer()
	b.Until("ready")
	fmt.Fprint(b, "not yet ")
	if seen(b) {
		t.Fatal("seen before the text came")
	}
	fmt.Fprint(b, "rea")
	fmt.Fprint(b, "dy\n")
	if !seen(b) || b.String() != "not yet ready\n" {
		t.Fatalf("seen %v, %q", seen(b), b.String())
	}
	// The text there before Until asked for it.
	b = NewBuffer()
	fmt.Fprint(b, "ready")
	b.Until("ready")
	if !seen(b) {
		t.Fatal("text written before Until not seen")
	}
	b = NewBuffer()
	b.MarkSeen()
	b.MarkSeen()
	if !seen(b) {
		t.Fatal("MarkSeen")
	}
}

// Written by one goroutine, read by another (go test -race).
func TestBufferConcurrent(t *testing.T) {
	b := NewBuffer()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ {
			fmt.Fprint(b, "x")
		}
	}()
	for i := 0; i < 100; i++ {
		_ = b.String()
	}
	wg.Wait()
	if len(b.String()) != 1000 {
		t.Fatalf("%d bytes", len(b.String()))
	}
}

// A shell that answers only from its third empty line on, as one whose
// output was attached late: Prompt types until the answer shows, and stops
// when the context ends or the writer fails.
func TestPrompt(t *testing.T) {
	out := NewBuffer()
	lines := 0
	shell := writerFunc(func(p []byte) (int, error) {
		lines += strings.Count(string(p), "\n")
		if lines >= 3 {
			fmt.Fprint(out, "/ # ")
		}
		return len(p), nil
	})
	if !Prompt(context.Background(), shell, "\n", time.Millisecond, func() bool { return out.Holds("# ") }) || lines != 3 {
		t.Fatalf("answered after %d lines, want 3", lines)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if Prompt(ctx, io.Discard, "\n", time.Millisecond, func() bool { return false }) {
		t.Fatal("never answered, yet Prompt said it was")
	}
	broken := writerFunc(func([]byte) (int, error) { return 0, io.ErrClosedPipe })
	if Prompt(context.Background(), broken, "\n", time.Millisecond, func() bool { return false }) {
		t.Fatal("a failed write, yet Prompt said it was answered")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
