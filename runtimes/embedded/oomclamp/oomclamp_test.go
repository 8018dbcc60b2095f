package oomclamp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClamp(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"ociVersion":"1.2.0","process":{"args":["/pause"],"oomScoreAdj":-998}}`, `"oomScoreAdj":0`},
		{`{"process":{"oomScoreAdj":5}}`, `"oomScoreAdj":5`},
		{`{"process":{"args":["/pause"]}}`, `"args":["/pause"]}`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(c.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Clamp(path, 0); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if !strings.Contains(string(got), c.want) {
			t.Errorf("Clamp(%s) = %s, want %s in it", c.in, got, c.want)
		}
	}
}
