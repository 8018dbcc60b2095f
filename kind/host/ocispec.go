package host

import (
	"encoding/json"
	"fmt"
	"os"
)

// DropFromProcess removes the named capabilities from every capability set
// of an OCI process object (config.json's "process", or runc exec's
// --process file), keeping every other field as it was.
func DropFromProcess(process map[string]any, drop map[string]bool) {
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return
	}
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if name, ok := c.(string); ok && drop[name] {
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
}

// RewriteFile applies DropFromProcess to a bundle's config.json (process
// under "process") or to a bare process file.
func RewriteFile(path string, bundleConfig bool, drop map[string]bool) error {
	return EditJSON(path, func(doc map[string]any) bool {
		proc := doc
		if bundleConfig {
			p, ok := doc["process"].(map[string]any)
			if !ok {
				return false
			}
			proc = p
		}
		DropFromProcess(proc, drop)
		return true
	})
}

// EditJSON reads the JSON object in path, lets edit change it, and writes
// it back when edit says it changed (top-level keys come out sorted).
func EditJSON(path string, edit func(doc map[string]any) (changed bool)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !edit(doc) {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// RuncFiles finds, in a runc command line, the file whose capabilities
// must be edited: <bundle>/config.json for create and run, the --process
// file for exec. ok is false for other commands.
func RuncFiles(args []string) (path string, bundleConfig, ok bool) {
	cmd := ""
	bundle := "."
	process := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "--bundle" || a == "-b":
			bundle = next()
		case len(a) > 9 && a[:9] == "--bundle=":
			bundle = a[9:]
		case a == "--process" || a == "-p":
			process = next()
		case len(a) > 10 && a[:10] == "--process=":
			process = a[10:]
		case a == "--root" || a == "--log" || a == "--log-format" || a == "--criu" || a == "--pid-file" || a == "--console-socket":
			next()
		case cmd == "" && len(a) > 0 && a[0] != '-':
			cmd = a
		}
	}
	switch cmd {
	case "create", "run":
		return bundle + "/config.json", true, true
	case "exec":
		if process != "" {
			return process, false, true
		}
	}
	return "", false, false
}
