package capability

import "fmt"

// Inconsistencies lists where the matrix says "blocked by X" while X's
// cell at the same layer is not nonconformant: a deviation must count in
// the cell it belongs to (Checker.BlockOn records X there first), so such
// a matrix is the suite's own bug. A blocked cell and each blocked
// observation are checked. In a probe X's cell may read probed: a probe
// judges no optional capability.
func (m Matrix) Inconsistencies() []string {
	cells := map[Name]map[Layer]Cell{}
	for _, r := range m.Rows {
		cells[r.Capability] = r.Layers
	}
	var out []string
	seen := map[string]bool{}
	check := func(n Name, l Layer, by Name, what string) {
		key := fmt.Sprintf("%s|%s|%s", n, l, by)
		if seen[key] {
			return
		}
		seen[key] = true
		var v Verdict = NotObserved
		if c, ok := cells[by][l]; ok {
			v = c.Verdict
		}
		if by == "" {
			out = append(out, fmt.Sprintf("%s (%s layer): %s blocked by no capability", n, l, what))
			return
		}
		if v != Nonconformant && v != VerdictProbed {
			out = append(out, fmt.Sprintf("%s (%s layer): %s blocked by %s, but %s's %s cell is %s, not nonconformant", n, l, what, by, by, l, v.Text()))
		}
	}
	for _, r := range m.Rows {
		for _, l := range m.Layers {
			c := r.Layers[l]
			if c.Verdict == VerdictBlocked {
				check(r.Capability, l, c.BlockedBy(r.Capability), "the cell is")
			}
			for _, o := range c.Observations {
				if o.Outcome == Blocked || o.Verdict == VerdictBlocked {
					what := "an observation is"
					if o.Case != "" {
						what = fmt.Sprintf("an observation (%s) is", o.Case)
					}
					check(r.Capability, l, o.Blocker(), what)
				}
			}
		}
	}
	return out
}
