package recordlast

import (
	"go/parser"
	"go/token"
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
