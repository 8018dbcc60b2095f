package framework

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

func TestRanSpecCountsWhatRanOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		s    ginkgo.SpecReport
		want bool
	}{
		{"passed", ginkgo.SpecReport{State: types.SpecStatePassed}, true},
		{"failed", ginkgo.SpecReport{State: types.SpecStateFailed}, true},
		{"skipped with a reason", ginkgo.SpecReport{State: types.SpecStateSkipped, Failure: types.Failure{Message: "not applicable"}}, true},
		{"left out by the selection", ginkgo.SpecReport{State: types.SpecStateSkipped}, false},
		{"pending", ginkgo.SpecReport{State: types.SpecStatePending}, false},
	} {
		if got := ranSpec(c.s); got != c.want {
			t.Errorf("%s: ranSpec = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestProgressPosterSendsSonobuoysShape(t *testing.T) {
	got := make(chan map[string]any, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("decode: %v", err)
		}
		got <- m
	}))
	defer srv.Close()
	p := &progressPoster{url: srv.URL + "/progress", client: srv.Client()}
	p.post(ProgressUpdate{AppendCompleted: 1, AppendFailing: []string{"a spec"}})
	m := <-got
	if m["name"] != "ectest" || m["node"] != "global" || m["appendcompleted"] != 1.0 || m["timestamp"] == nil {
		t.Errorf("update %v: want name ectest, node global, appendcompleted 1 and a timestamp", m)
	}
	if f, _ := m["appendfailing"].([]any); len(f) != 1 || f[0] != "a spec" {
		t.Errorf("appendfailing %v", m["appendfailing"])
	}
}
