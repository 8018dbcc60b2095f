package environment

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The API server's readiness blipping for a moment (its etcd check, under
// load) is no broken environment; staying unready is.
func TestAPIServerReady(t *testing.T) {
	// The settle time is a bound for the cases that end ready (ample: a
	// stalled test process on a loaded machine is no case of its own) and
	// what the never-ready case waits out (short, to keep the test quick).
	for _, c := range []struct {
		name      string
		unready   int64 // answers before /readyz is ok; -1: never
		settle    time.Duration
		wantError bool
	}{
		{"ready", 0, 30 * time.Second, false},
		{"a blip of two answers", 2, 30 * time.Second, false},
		{"never ready", -1, 300 * time.Millisecond, true},
	} {
		timeouts := framework.DefaultTimeouts
		timeouts.Poll, timeouts.EnvironmentSettle, timeouts.EnvironmentProbe = 10*time.Millisecond, c.settle, time.Second
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := calls.Add(1)
			if r.URL.Path == "/readyz" && (c.unready < 0 || n <= c.unready) {
				http.Error(w, "[-]etcd failed: reason withheld\nreadyz check failed", http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte("ok"))
		}))
		client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})
		err := apiServerReady(client, timeouts)
		srv.Close()
		if (err != nil) != c.wantError {
			t.Errorf("%s: got %v after %d calls, want an error: %v", c.name, err, calls.Load(), c.wantError)
		}
		if err != nil && !strings.Contains(err.Error(), "etcd failed") {
			t.Errorf("%s: the error does not say what the API server said: %v", c.name, err)
		}
	}
}
