package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega/gmeasure"
)

// DurationStats summarizes one measurement of a benchmark.
type DurationStats struct {
	Name    string        `json:"name"`
	Samples int           `json:"samples"`
	P50     time.Duration `json:"p50Nanos"`
	P90     time.Duration `json:"p90Nanos"`
	P95     time.Duration `json:"p95Nanos"`
	Min     time.Duration `json:"minNanos"`
	Max     time.Duration `json:"maxNanos"`
	Mean    time.Duration `json:"meanNanos"`
	P50Text string        `json:"p50"`
	P95Text string        `json:"p95"`
}

// Percentile is the nearest-rank percentile (0 < p <= 100) of ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(p/100*float64(len(s))+0.999999) - 1
	if rank < 0 {
		rank = 0
	}
	if rank >= len(s) {
		rank = len(s) - 1
	}
	return s[rank]
}

// Summarize computes the stats of every duration measurement of e.
func Summarize(e *gmeasure.Experiment) []DurationStats {
	var out []DurationStats
	for _, m := range e.Measurements {
		if m.Type != gmeasure.MeasurementTypeDuration || len(m.Durations) == 0 {
			continue
		}
		var sum time.Duration
		for _, d := range m.Durations {
			sum += d
		}
		st := DurationStats{
			Name: m.Name, Samples: len(m.Durations),
			P50: Percentile(m.Durations, 50), P90: Percentile(m.Durations, 90), P95: Percentile(m.Durations, 95),
			Min: Percentile(m.Durations, 0.0001), Max: Percentile(m.Durations, 100),
			Mean: sum / time.Duration(len(m.Durations)),
		}
		st.P50Text, st.P95Text = st.P50.String(), st.P95.String()
		out = append(out, st)
	}
	return out
}

// WriteBenchmark writes the experiment's stats as JSON into dir/file.
func WriteBenchmark(dir, file string, e *gmeasure.Experiment, context map[string]string) ([]DurationStats, error) {
	stats := Summarize(e)
	doc := struct {
		Experiment string            `json:"experiment"`
		Context    map[string]string `json:"context,omitempty"`
		Stats      []DurationStats   `json:"stats"`
	}{e.Name, context, stats}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return stats, atomicfile.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644)
}

// The measurements of SpecTimes.
const (
	SpecTimeName  = "spec: start to end, cleanup included"
	SetupTimeName = "suite setup (the slowest process's SynchronizedBeforeSuite)"
)

// SpecTimes measures a run from its own report, as a gmeasure experiment:
// the time of every spec that ran (passed or failed, its cleanup included,
// skipped ones left out) and the suite's setup. The suites write it beside
// their reports (spec-times.json) and print it, so that every run says how
// near the physical floor its specs are.
func SpecTimes(r types.Report) *gmeasure.Experiment {
	e := gmeasure.NewExperiment("spec times of " + r.SuiteDescription)
	var setup time.Duration
	for _, s := range r.SpecReports {
		switch {
		case s.LeafNodeType == types.NodeTypeIt && s.State != types.SpecStateSkipped && s.State != types.SpecStatePending:
			e.RecordDuration(SpecTimeName, s.RunTime)
		case s.LeafNodeType == types.NodeTypeSynchronizedBeforeSuite || s.LeafNodeType == types.NodeTypeBeforeSuite:
			setup = max(setup, s.RunTime)
		}
	}
	if setup > 0 {
		e.RecordDuration(SetupTimeName, setup)
	}
	return e
}

// SpecTimesLine is SpecTimes in one line.
func SpecTimesLine(stats []DurationStats) string {
	line := "spec times:"
	for _, st := range stats {
		switch st.Name {
		case SpecTimeName:
			line += fmt.Sprintf(" %d specs, median %s, p90 %s, mean %s, max %s;", st.Samples, st.P50.Round(10*time.Millisecond), st.P90.Round(10*time.Millisecond), st.Mean.Round(10*time.Millisecond), st.Max.Round(10*time.Millisecond))
		case SetupTimeName:
			line += fmt.Sprintf(" setup %s;", st.Max.Round(10*time.Millisecond))
		}
	}
	return strings.TrimSuffix(line, ";")
}

// CompareSpecTimes measures two suites' runs side by side, from their
// Ginkgo reports, as one gmeasure experiment: every spec that passed
// (cleanup included) under "<name>: spec" (a failure may end early, or
// wait out a timeout: only passes compare like with like), and each run's
// setup. make critest-compare puts the CRI suite next to critest this way,
// on the same runtime in the same run.
func CompareSpecTimes(names [2]string, runs [2][]types.Report) *gmeasure.Experiment {
	e := gmeasure.NewExperiment("spec times: " + names[0] + " and " + names[1])
	for i, reports := range runs {
		var setup time.Duration
		for _, r := range reports {
			for _, s := range r.SpecReports {
				switch {
				case s.LeafNodeType == types.NodeTypeIt && s.State == types.SpecStatePassed:
					e.RecordDuration(names[i]+": passed spec, start to end, cleanup included", s.RunTime)
				case s.LeafNodeType == types.NodeTypeSynchronizedBeforeSuite || s.LeafNodeType == types.NodeTypeBeforeSuite:
					setup = max(setup, s.RunTime)
				}
			}
		}
		if setup > 0 {
			e.RecordDuration(names[i]+": "+SetupTimeName, setup)
		}
	}
	return e
}
