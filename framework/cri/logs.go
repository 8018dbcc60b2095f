package cri

import (
	"fmt"
	"strings"
	"time"
)

// LogLine is one entry of a CRI container log file.
type LogLine struct {
	Time    time.Time
	Stream  string // stdout or stderr
	Partial bool
	Content string
}

// ParseLog parses the CRI log format: "<RFC3339Nano> <stream> <P|F> <content>".
func ParseLog(data string) ([]LogLine, error) {
	var out []LogLine
	for _, line := range strings.Split(strings.TrimRight(data, "\n"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, " ", 4)
		if len(parts) < 3 {
			return nil, fmt.Errorf("CRI log line %q: want <time> <stream> <tag> <content>", line)
		}
		ts, err := time.Parse(time.RFC3339Nano, parts[0])
		if err != nil {
			return nil, fmt.Errorf("CRI log line %q: %v", line, err)
		}
		if parts[1] != "stdout" && parts[1] != "stderr" {
			return nil, fmt.Errorf("CRI log line %q: unknown stream %q", line, parts[1])
		}
		l := LogLine{Time: ts, Stream: parts[1], Partial: strings.HasPrefix(parts[2], "P")}
		if len(parts) == 4 {
			l.Content = parts[3]
		}
		out = append(out, l)
	}
	return out, nil
}

// Text joins the log's content, partial lines glued to their continuation.
func Text(lines []LogLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Content)
		if !l.Partial {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
