package matrix

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// browserTimeout bounds one headless Chromium run (start, load, dump).
const browserTimeout = 2 * time.Minute

// The page as a browser renders it: headless Chromium (Debian's chromium,
// where it is installed) loads matrix.html from disk and dumps the
// document it built, and that document must show every cell in every row
// with its evidence, as the file does. Without Chromium this test skips,
// saying so; the file itself is checked by TestPageShowsEveryCellAndWhatChanged.
func TestPageRendersEveryCellInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no headless browser (install Debian's chromium to run this test)")
	}
	cells, cellsDir, pageDir := fixture(t)
	m, err := Write(pageDir, Combine(cells, cellsDir, pageDir, false, time.Now()), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	// The flags keep Chromium off the network (this machine has none) and
	// out of the user's profile; --no-sandbox because tests run as root.
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom",
		"file://"+filepath.Join(pageDir, HTMLFile))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --dump-dom: %v\n%s", browser, err, stderr.String())
	}
	if len(bytes.TrimSpace(dom)) == 0 {
		t.Fatalf("%s rendered nothing\n%s", browser, stderr.String())
	}
	checkPageHTML(t, dom, m)
}
