package report

import "github.com/ectest/ectest/framework/capability"

// ReadMatrix reads a suite's matrix.json from its report directory.
func ReadMatrix(dir string) (capability.Matrix, error) {
	var m capability.Matrix
	return m, readJSON(dir, MatrixJSONFile, &m)
}

// Merge puts several suites' matrices side by side: one row per capability,
// one pair of columns per layer. The runtime and profile are the first
// matrix's that has them; each layer keeps the runtime it was observed on.
func Merge(ms ...capability.Matrix) capability.Matrix {
	var out capability.Matrix
	rows := map[capability.Name]*capability.Row{}
	for _, m := range ms {
		if out.Runtime.Name == "" {
			out.Runtime, out.Profile = m.Runtime, m.Profile
		}
		if out.Ectest == nil {
			out.Ectest = m.Ectest // the first run's suite that names one
		}
		out.Layers = append(out.Layers, m.Layers...)
		for _, l := range m.Layers {
			if out.LayerRuntimes == nil {
				out.LayerRuntimes = map[capability.Layer]capability.RuntimeInfo{}
			}
			out.LayerRuntimes[l] = m.Runtime
			if rt, ok := m.LayerRuntimes[l]; ok {
				out.LayerRuntimes[l] = rt
			}
		}
		for _, r := range m.Rows {
			row := rows[r.Capability]
			if row == nil {
				cp := r
				cp.Layers = map[capability.Layer]capability.Cell{}
				rows[r.Capability] = &cp
				row = &cp
			}
			if row.Declared == "" {
				row.Declared = r.Declared
			}
			for l, c := range r.Layers {
				row.Layers[l] = c
			}
		}
	}
	for _, d := range capability.All() {
		if r := rows[d.Name]; r != nil {
			out.Rows = append(out.Rows, *r)
		}
	}
	return out
}

// WriteMatrix writes matrix.json and matrix.md into dir.
func WriteMatrix(dir string, m capability.Matrix) error {
	return writeJSONAndMarkdown(dir, MatrixJSONFile, MatrixMDFile, m, Markdown(m))
}
