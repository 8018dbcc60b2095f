// Package recordlast finds, in the suites, assertions made after a spec
// recorded its observation (Checker.Record): the judgement is then already
// made, so a later Expect that fails turns a real deviation, or a passing
// spec, into the run's own error ("no verdict"). A spec checks everything,
// then records once; make verify refuses anything else.
//
// It also finds observations judged by hand: an assignment to an
// Observation's Outcome (obs.Outcome = capability.Deviated) or a
// capability.Observation literal with an Outcome. A suite records through
// the builder (capability.Observe(...).Problem/Check(...).Done), which
// decides works or deviated in one place.
package recordlast

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// assertions are the calls that judge after the fact.
var assertions = map[string]bool{"Expect": true, "Ω": true, "Eventually": true, "Consistently": true, "ExpectWithOffset": true}

// Finding is one assertion after a Record, or one outcome set by hand
// (Flip).
type Finding struct {
	Pos    token.Position
	Record token.Position
	Call   string
	// Flip, when set, says how an outcome was set by hand.
	Flip string
}

func (f Finding) String() string {
	if f.Flip != "" {
		return fmt.Sprintf("%s: %s: record through the builder (capability.Observe(...).Problem/Check/Outcome(...).Done), not by setting Outcome by hand", f.Pos, f.Flip)
	}
	return fmt.Sprintf("%s: %s after the observation was recorded at line %d: check first, then record once", f.Pos, f.Call, f.Record.Line)
}

// Check parses the Go files under dirs and returns every finding.
func Check(dirs ...string) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			out = append(out, checkFile(fset, file)...)
			out = append(out, flips(fset, file)...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pos.Filename != out[j].Pos.Filename {
			return out[i].Pos.Filename < out[j].Pos.Filename
		}
		return out[i].Pos.Line < out[j].Pos.Line
	})
	return out, nil
}

func checkFile(fset *token.FileSet, file *ast.File) []Finding {
	var out []Finding
	ast.Inspect(file, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		var record token.Pos
		for _, stmt := range block.List {
			if record.IsValid() {
				for _, c := range calls(stmt, assertions) {
					out = append(out, Finding{Pos: fset.Position(c.Pos()), Record: fset.Position(record), Call: name(c)})
				}
			}
			if r := recordCall(stmt); r.IsValid() && !record.IsValid() {
				record = r
			}
			// A return ends what follows the record on this path.
			if _, ok := stmt.(*ast.ReturnStmt); ok {
				record = token.NoPos
			}
		}
		return true
	})
	return out
}

// recordCall is the position of a Checker.Record call directly in stmt
// (not in a function literal, and not in a branch that returns after it).
func recordCall(stmt ast.Stmt) token.Pos {
	var pos token.Pos
	ast.Inspect(stmt, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SelectStmt:
			return false // a record in a branch: its own block is checked
		case *ast.CallExpr:
			if isRecord(n) && !pos.IsValid() {
				pos = n.Pos()
			}
		}
		return true
	})
	return pos
}

// isRecord: Checker.Record, or a framework helper that records
// (RecordPIDView and the like, named Record...).
func isRecord(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if sel.Sel.Name == "Record" {
		x, ok := sel.X.(*ast.SelectorExpr)
		return ok && x.Sel.Name == "Checker"
	}
	return strings.HasPrefix(sel.Sel.Name, "Record") && !measurements[sel.Sel.Name]
}

// measurements are gmeasure's Record methods: a benchmark's samples, not
// observations.
var measurements = map[string]bool{"RecordDuration": true, "RecordValue": true, "RecordNote": true, "RecordValueWithPrecision": true}

// calls are the calls in stmt to one of names, outside function literals
// (a cleanup's assertions are the cleanup's).
func calls(stmt ast.Stmt, names map[string]bool) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(stmt, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if names[name(n)] {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}

func name(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// flips are the places in file that set an observation's outcome by
// hand: an assignment to a field named Outcome, or a literal of
// capability.Observation (Observation, in the package itself) with an
// Outcome key.
func flips(fset *token.FileSet, file *ast.File) []Finding {
	var out []Finding
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "Outcome" {
					out = append(out, Finding{Pos: fset.Position(lhs.Pos()), Flip: "assignment to " + exprString(sel)})
				}
			}
		case *ast.CompositeLit:
			if !isObservationType(n.Type) {
				return true
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Outcome" {
						out = append(out, Finding{Pos: fset.Position(kv.Pos()), Flip: "an Observation literal with an Outcome"})
					}
				}
			}
		}
		return true
	})
	return out
}

func isObservationType(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.SelectorExpr:
		return t.Sel.Name == "Observation"
	case *ast.Ident:
		return t.Name == "Observation"
	}
	return false
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "_"
}
