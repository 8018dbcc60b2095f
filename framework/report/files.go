package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ectest/ectest/internal/atomicfile"
)

// writeJSONAndMarkdown writes v as indented JSON and its Markdown rendering
// into dir, creating dir. Each file is written whole or not at all
// (atomicfile): a reader finds the previous one or the new one.
func writeJSONAndMarkdown(dir, jsonFile, mdFile string, v any, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, jsonFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, mdFile), []byte(md), 0o644)
}

// readJSON reads dir/file into v; a decoding error names the file.
func readJSON(dir, file string, v any) error {
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
