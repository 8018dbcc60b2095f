package framework

import (
	"bytes"
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
// gives the total; each spec then appends itself, from whichever process
// ran it, so no process needs to know the others' counts.
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
// url: the total before the first spec (the first process only), then one
// update per spec that ran (a skip with a reason counts, a spec the
// selection left out does not). A progress endpoint that does not answer
// costs the run nothing but one line: progress is for the people watching.
func registerProgress(url string) {
	if suiteConfig, _ := ginkgo.GinkgoConfiguration(); suiteConfig.DryRun {
		return // -parallel's check of the flags and the selection runs nothing
	}
	p := &progressPoster{url: url, client: &http.Client{Timeout: DefaultTimeouts.RuntimeCall}}
	ginkgo.ReportBeforeSuite(func(r ginkgo.Report) {
		n := int64(r.PreRunStats.SpecsThatWillRun)
		p.post(ProgressUpdate{Total: n, Message: fmt.Sprintf("ectest: %d specs to run", n)})
	})
	ginkgo.ReportAfterEach(func(s ginkgo.SpecReport) {
		if !ranSpec(s) {
			return
		}
		u := ProgressUpdate{AppendCompleted: 1, Message: s.State.String() + ": " + s.FullText()}
		if s.State.Is(types.SpecStateFailureStates) {
			u.AppendFailing = []string{s.FullText()}
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
	warned sync.Once
}

func (p *progressPoster) post(u ProgressUpdate) {
	u.Name, u.Node, u.Timestamp = progressName, "global", time.Now().UTC()
	body, err := json.Marshal(u)
	if err == nil {
		var resp *http.Response
		if resp, err = p.client.Post(p.url, "application/json", bytes.NewReader(body)); err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				err = fmt.Errorf("%s", resp.Status)
			}
		}
	}
	if err != nil {
		p.warned.Do(func() {
			fmt.Fprintf(os.Stderr, "ectest: -progress-url %s: %v (the run goes on; further progress errors are not shown)\n", p.url, err)
		})
	}
}
