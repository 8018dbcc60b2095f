package recordlast

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

const src = `package x
func a() {
	f.Checker.Record(obs)
	Expect(err).NotTo(HaveOccurred())
}
func b() {
	Expect(x).To(BeTrue())
	f.Checker.Record(obs)
	DeferCleanup(func() { Expect(y).To(Succeed()) })
}
func c() {
	if bad {
		f.Checker.Record(obs)
		return
	}
	Expect(z).To(BeTrue())
	f.Checker.Record(obs)
}
func d() {
	_, view := f.RecordPIDView(ctx)
	Expect(view.X).To(BeTrue())
}
func e() {
	exp.RecordDuration("x", d)
	Expect(err).NotTo(HaveOccurred())
}
`

func TestAssertionAfterRecordIsFound(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := checkFile(fset, file)
	if len(got) != 2 || got[0].Pos.Line != 4 || got[0].Record.Line != 3 || got[1].Pos.Line != 21 {
		t.Fatalf("findings %v, want lines 4 and 21", got)
	}
}

const flipSrc = `package x
func a() {
	obs := capability.Observation{Capability: capability.Exec, Outcome: capability.Works, Observed: "works"}
	if bad {
		obs.Outcome, obs.Observed = capability.Deviated, "broken"
	}
	f.Checker.Record(obs)
}
func b() {
	f.Checker.Record(capability.Observation{Capability: capability.Exec, Case: "x"})
	f.Checker.Record(capability.Observe(capability.Exec).Outcome(capability.Refused, "no").Done(""))
	s.Outcome == framework.Passed
	var r report
	r.Outcome = framework.Passed
	o := &capability.Observation{Outcome: capability.Blocked}
}
`

func TestOutcomeSetByHandIsFound(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", flipSrc, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := flips(fset, file)
	var lines []int
	for _, f := range got {
		lines = append(lines, f.Pos.Line)
		if f.Flip == "" || !strings.Contains(f.String(), "builder") {
			t.Errorf("finding %v does not say to use the builder", f)
		}
	}
	// Line 3: a literal with Outcome; 5: obs.Outcome assigned; 14: any
	// field named Outcome assigned in a suite (a suite has no business
	// setting one); 15: a literal's address. Not line 10 (no Outcome),
	// 11 (the builder), 12 (a comparison).
	if want := []int{3, 5, 14, 15}; !slices.Equal(lines, want) {
		t.Fatalf("findings on lines %v, want %v: %v", lines, want, got)
	}
}

func TestSuitesSetNoOutcomeByHand(t *testing.T) {
	got, err := Check("../../suites")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		t.Error(f)
	}
}
