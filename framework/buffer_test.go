package framework

import (
	"fmt"
	"sync"
	"testing"
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
