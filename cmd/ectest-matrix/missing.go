package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// missingCommand says why a cell's command cannot run on this checkout
// ("" when it can): its program is not installed, or the make target it
// names does not exist yet (a cell configured ahead of the work that
// brings its target, like the skew cluster's). Such a cell is not run,
// with the reason, rather than failed: nothing was tried. Only the
// command's first simple command is looked at ("VAR=x make target ..."
// up to the first shell operator); anything else is left to the run.
func missingCommand(ctx context.Context, command string) string {
	words := firstSimpleCommand(command)
	if len(words) == 0 {
		return ""
	}
	prog := words[0]
	if strings.ContainsAny(prog, "$`\"'(") {
		return ""
	}
	if !bashKnows(ctx, prog) {
		return fmt.Sprintf("its command %q needs %s, which is not installed here", command, prog)
	}
	if prog != "make" {
		return ""
	}
	var targets []string
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") || strings.Contains(w, "=") || strings.ContainsAny(w, "$`\"'") {
			continue
		}
		targets = append(targets, w)
	}
	for _, t := range targets {
		if !makeTargetExists(ctx, t) {
			return fmt.Sprintf("its make target %q does not exist in this checkout yet (command: %s)", t, command)
		}
	}
	return ""
}

// firstSimpleCommand is the words of the command's first simple command,
// without leading VAR=value assignments.
func firstSimpleCommand(command string) []string {
	var words []string
	for _, w := range strings.Fields(command) {
		if strings.ContainsAny(w, ";|&<>") {
			break
		}
		if len(words) == 0 && envAssignment.MatchString(w) {
			continue
		}
		words = append(words, w)
	}
	return words
}

var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// bashKnows: the word is a program on PATH, or bash's own (a builtin, a
// keyword like "!").
func bashKnows(ctx context.Context, word string) bool {
	return exec.CommandContext(ctx, "bash", "-c", `type -t -- "$1" >/dev/null`, "bash", word).Run() == nil
}

// noRule is GNU make's message for an unknown target.
var noRule = regexp.MustCompile(`No rule to make target '([^']*)'`)

// makeTargetExists asks make in question mode (-q runs no recipe) whether
// it knows the target; only make's "No rule to make target" for that very
// target says no (an out-of-date target or any other trouble says yes, and
// the run itself shows it).
func makeTargetExists(ctx context.Context, target string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-q", "--no-print-directory", target)
	cmd.Env = cellEnviron()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	m := noRule.FindStringSubmatch(stderr.String())
	return m == nil || m[1] != target
}
