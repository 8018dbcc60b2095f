package report

import "github.com/ectest/ectest/framework/capability"

// inconsistencyErrors are the run errors of a matrix that says "blocked by
// X" where X is not nonconformant at the same layer
// (capability.Matrix.Inconsistencies): a deviation that counts nowhere is
// the suite's own bug, never the runtime's, so the run has no verdict.
func inconsistencyErrors(m capability.Matrix) []string {
	var out []string
	for _, s := range m.Inconsistencies() {
		out = append(out, "the suite's own bug, no verdict on the runtime: the matrix is inconsistent: "+s)
	}
	return out
}
