package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// ProgressUpdate is one progress report in the shape sonobuoy's worker
// relays to its aggregator (sonobuoy's plugin.ProgressUpdate, which
// `sonobuoy status` shows): the first, from the run's first process,
// gives the total; each spec then appends itself (one completed, or its
// name among the failures), from whichever process ran it, so no process
// needs to know the others' counts.
type ProgressUpdate struct {
	Name            string    `json:"name"`
	Node            string    `json:"node"`
	Timestamp       time.Time `json:"timestamp"`
	Message         string    `json:"msg"`
	Total           int64     `json:"total"`
	Completed       int64     `json:"completed"`
	AppendCompleted int64     `json:"appendcompleted,omitempty"`
	AppendFailing   []string  `json:"appendfailing,omitempty"`
}

// progressName is the plugin name the updates carry (deploy/sonobuoy's).
const progressName = "ectest"

// registerProgress adds the report nodes that POST the run's progress to
// url: the total before the first spec (the first process only, retried
// while the endpoint comes up), then one update per spec that ran (a skip
// with a reason counts, a spec the selection left out does not). Progress
// is for the people watching: an endpoint that fails costs the run one
// line, and that process posts nothing more.
func registerProgress(url string) {
	if suiteConfig, _ := ginkgo.GinkgoConfiguration(); suiteConfig.DryRun {
		return // -parallel's check of the flags and the selection runs nothing
	}
	p := &progressPoster{url: url, client: &http.Client{Timeout: DefaultTimeouts.ProgressPost}}
	ginkgo.ReportBeforeSuite(func(ctx ginkgo.SpecContext, r ginkgo.Report) {
		n := int64(r.PreRunStats.SpecsThatWillRun)
		p.first(ctx, ProgressUpdate{Total: n, Message: fmt.Sprintf("ectest: %d specs to run", n)}, DefaultTimeouts.ProgressStart)
	})
	ginkgo.ReportAfterEach(func(s ginkgo.SpecReport) {
		if !ranSpec(s) {
			return
		}
		// sonobuoy counts completed and failing apart (its "Passed" is
		// completed, "Remaining" the total less both).
		u := ProgressUpdate{AppendCompleted: 1, Message: s.State.String() + ": " + s.FullText()}
		if s.State.Is(types.SpecStateFailureStates) {
			u.AppendCompleted, u.AppendFailing = 0, []string{s.FullText()}
		}
		p.post(u)
	})
}

// ranSpec says whether a spec report is of a spec that ran (or was
// skipped with a reason), not one the selection left out or a pending one.
func ranSpec(s ginkgo.SpecReport) bool {
	switch s.State {
	case types.SpecStatePending:
		return false
	case types.SpecStateSkipped:
		return s.Failure.Message != ""
	}
	return true
}

type progressPoster struct {
	url    string
	client *http.Client
	mu     sync.Mutex
	failed bool
}

// first posts u, retrying on a ticker until the endpoint takes it or
// within passes.
func (p *progressPoster) first(ctx context.Context, u ProgressUpdate, within time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(10 * DefaultTimeouts.Poll)
	defer tick.Stop()
	for {
		err := p.send(u)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			p.fail(err)
			return
		case <-tick.C:
		}
	}
}

// post sends u unless an update of this process failed before.
func (p *progressPoster) post(u ProgressUpdate) {
	p.mu.Lock()
	failed := p.failed
	p.mu.Unlock()
	if failed {
		return
	}
	if err := p.send(u); err != nil {
		p.fail(err)
	}
}

func (p *progressPoster) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.failed {
		p.failed = true
		fmt.Fprintf(os.Stderr, "ectest: -progress-url %s: %v (the run goes on; this process posts no more progress)\n", p.url, err)
	}
}

func (p *progressPoster) send(u ProgressUpdate) error {
	u.Name, u.Node, u.Timestamp = progressName, "global", time.Now().UTC()
	body, err := json.Marshal(u)
	if err != nil {
		return err
	}
	resp, err := p.client.Post(p.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}
