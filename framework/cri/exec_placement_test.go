package cri

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/oracle"
)

// The inside view reads the session's and the container's own process's
// landing from one script's output and compares what both sides show.
func TestParseInsideLanding(t *testing.T) {
	side := func(who, uts, groups string) string {
		var b strings.Builder
		for _, k := range oracle.Kinds {
			b.WriteString("=== " + who + " ns/" + string(k) + "\n")
			switch {
			case k == oracle.UTS:
				b.WriteString(uts + "\n")
			case k == oracle.Cgroup && who == "own":
				// a link the session could not read: compared on neither side
			default:
				b.WriteString(string(k) + ":[7]\n")
			}
		}
		b.WriteString("=== " + who + " status\nName:\tsh\nUid:\t0\t0\t0\t0\nGroups:\t" + groups + "\nCapEff:\t00000000a80425fb\nNoNewPrivs:\t0\nSeccomp:\t0\n")
		b.WriteString("=== " + who + " cgroup\n0::/\n=== " + who + " oom_score_adj\n0\n")
		return b.String()
	}
	session, own, err := parseInsideLanding(side("session", "uts:[7]", "0") + side("own", "uts:[7]", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if d := oracle.Differences(own, session); len(d) != 0 || session.Groups != "0" || own.OOMScoreAdj != "0" {
		t.Errorf("same landing: %q (%+v)", d, session)
	}
	if _, ok := session.Namespaces[oracle.Cgroup]; ok {
		t.Error("a link one side did not read is kept")
	}
	session, own, err = parseInsideLanding(side("session", "uts:[8]", "0 10") + side("own", "uts:[7]", "0"))
	if err != nil {
		t.Fatal(err)
	}
	d := oracle.Differences(own, session)
	if len(d) != 2 || d[0] != "uts namespace uts:[8], not uts:[7]" || d[1] != `supplementary groups "0 10", not "0"` {
		t.Errorf("differences %q", d)
	}
	if _, _, err := parseInsideLanding("sh: readlink: not found\n"); err == nil {
		t.Error("output without a status: want an error")
	}
}
