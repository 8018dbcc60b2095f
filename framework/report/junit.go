package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// JUnit testcase properties the suite adds to Ginkgo's (each report entry
// of a spec is one already, named after the entry).
const (
	// JUnitLabelProperty is one per label of the spec (a capability, a
	// layer, ...): the labels are not in the testcase's name.
	JUnitLabelProperty = "label"
	// JUnitRequirementProperty is one per requirement ID the spec names.
	JUnitRequirementProperty = "requirement"
	// JUnitVerdictProperty and JUnitWhyProperty are, for a testcase that
	// did not pass, JudgeSpecReport's verdict ("nonconformant" or "error")
	// and its reason.
	JUnitVerdictProperty = "verdict"
	JUnitWhyProperty     = "verdict-reason"
	// JUnitEctestVersionProperty and JUnitEctestCommitProperty, testsuite
	// properties, name the suite that judged (framework.Build).
	JUnitEctestVersionProperty = "ectest-version"
	JUnitEctestCommitProperty  = "ectest-commit"
)

// JUnitNonconformantType is the type of a <failure>: a judge said no.
// An <error>'s type is the Ginkgo state the spec or node ended in
// ("failed", "panicked", "timedout", "interrupted", "aborted").
const JUnitNonconformantType = "nonconformant"

// junitConfig is how Ginkgo's reporter generates the JUnit report that
// JUnit then adapts: no node type and no labels in the names.
var junitConfig = reporters.JunitReportConfig{OmitLeafNodeType: true, OmitSpecLabels: true}

// WriteJUnit writes the run's JUnit report to path (atomically): Ginkgo's,
// adapted by JUnit.
func WriteJUnit(path string, r types.Report) error {
	return atomicfile.Generate(path, 0o644, func(tmp string) error {
		if err := reporters.GenerateJUnitReportWithConfig(r, tmp, junitConfig); err != nil {
			return err
		}
		b, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		var suites reporters.JUnitTestSuites
		if err := xml.Unmarshal(b, &suites); err != nil {
			return fmt.Errorf("reading back Ginkgo's JUnit report: %w", err)
		}
		out, err := JUnit(suites, r)
		if err != nil {
			return err
		}
		// The suite that judged, beside Ginkgo's suite properties.
		build := framework.Build()
		for i := range out.TestSuites {
			props := &out.TestSuites[i].Properties.Properties
			*props = append(*props, reporters.JUnitProperty{Name: JUnitEctestVersionProperty, Value: build.Version})
			if build.Commit != "" {
				*props = append(*props, reporters.JUnitProperty{Name: JUnitEctestCommitProperty, Value: build.Commit})
			}
		}
		enc, err := EncodeJUnit(out)
		if err != nil {
			return err
		}
		return os.WriteFile(tmp, enc, 0o644)
	})
}

// EncodeJUnit encodes a JUnit report as Ginkgo's reporter does.
func EncodeJUnit(s reporters.JUnitTestSuites) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("  ", "    ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// JUnit adapts Ginkgo's JUnit report of r (generated with junitConfig, one
// testcase per spec report, in order) to the suite's contract:
//
//   - a spec or node that did not pass carries a <failure> (type
//     "nonconformant") when JudgeSpecReport's verdict is nonconformant, and
//     an <error> (type: its Ginkgo state) for any other end: an error of the
//     run itself, no verdict. Skipped and pending stay <skipped>.
//   - a suite setup or cleanup node (BeforeSuite, SynchronizedAfterSuite,
//     ...; every parallel process has its own) appears only when it did not
//     pass, and is then named for what it is: "[SynchronizedBeforeSuite]
//     process 2". No testcase is nameless.
//   - labels are not in names: each is a "label" property, and each
//     requirement ID the spec names a "requirement" property.
//
// The counts are recomputed from the testcases.
func JUnit(in reporters.JUnitTestSuites, r types.Report) (reporters.JUnitTestSuites, error) {
	if len(in.TestSuites) != 1 || len(in.TestSuites[0].TestCases) != len(r.SpecReports) {
		n := 0
		if len(in.TestSuites) > 0 {
			n = len(in.TestSuites[0].TestCases)
		}
		return in, fmt.Errorf("ginkgo's JUnit report has %d suites and %d testcases for %d spec reports: cannot match them", len(in.TestSuites), n, len(r.SpecReports))
	}
	suite := in.TestSuites[0]
	suite.TestCases = nil
	for i, sr := range r.SpecReports {
		tc := in.TestSuites[0].TestCases[i]
		failed := sr.State.Is(types.SpecStateFailureStates)
		if sr.LeafNodeType != types.NodeTypeIt {
			if !failed {
				continue // a setup node that did its job is no testcase
			}
			tc.Name = setupNodeName(sr, r.SuiteConfig.ParallelTotal)
		}
		if tc.Name == "" {
			tc.Name = fmt.Sprintf("[%s] (spec without text)", sr.LeafNodeType)
		}
		var props []reporters.JUnitProperty
		for _, l := range sr.Labels() {
			props = append(props, reporters.JUnitProperty{Name: JUnitLabelProperty, Value: l})
		}
		for _, id := range framework.RequirementIDs(sr.FullText()) {
			props = append(props, reporters.JUnitProperty{Name: JUnitRequirementProperty, Value: id})
		}
		if failed {
			sv := JudgeSpecReport(sr)
			message, description := "", ""
			switch {
			case tc.Failure != nil:
				message, description = tc.Failure.Message, tc.Failure.Description
			case tc.Error != nil:
				message, description = tc.Error.Message, tc.Error.Description
			}
			if message == "" {
				message = firstLine(sr.Failure.Message)
			}
			tc.Failure, tc.Error = nil, nil
			if sv.Verdict == capability.Nonconformant {
				tc.Failure = &reporters.JUnitFailure{Message: message, Type: JUnitNonconformantType, Description: description}
			} else {
				tc.Error = &reporters.JUnitError{Message: message, Type: sr.State.String(), Description: description}
			}
			props = append(props, reporters.JUnitProperty{Name: JUnitVerdictProperty, Value: string(sv.Verdict)},
				reporters.JUnitProperty{Name: JUnitWhyProperty, Value: sv.Why})
		}
		if len(props) > 0 {
			if tc.Properties == nil {
				tc.Properties = &reporters.JUnitProperties{}
			}
			tc.Properties.Properties = append(tc.Properties.Properties, props...)
		}
		suite.TestCases = append(suite.TestCases, tc)
	}
	suite.Tests, suite.Failures, suite.Errors, suite.Skipped, suite.Disabled = len(suite.TestCases), 0, 0, 0, 0
	for _, tc := range suite.TestCases {
		switch {
		case tc.Failure != nil:
			suite.Failures++
		case tc.Error != nil:
			suite.Errors++
		case tc.Skipped != nil && tc.Status == types.SpecStatePending.String():
			suite.Disabled++
		case tc.Skipped != nil:
			suite.Skipped++
		}
	}
	out := in
	out.TestSuites = []reporters.JUnitTestSuite{suite}
	out.Tests, out.Failures, out.Errors, out.Disabled = suite.Tests, suite.Failures, suite.Errors, suite.Disabled+suite.Skipped
	return out, nil
}

// setupNodeName names a suite setup or cleanup node's testcase:
// "[SynchronizedBeforeSuite] process 2", with its text if it has one.
func setupNodeName(sr types.SpecReport, processes int) string {
	name := fmt.Sprintf("[%s]", sr.LeafNodeType)
	if sr.LeafNodeText != "" {
		name += " " + sr.LeafNodeText
	}
	if processes > 1 && sr.ParallelProcess > 0 {
		name += fmt.Sprintf(" process %d", sr.ParallelProcess)
	}
	return name
}

// writeGinkgoJSON writes the run's Ginkgo JSON report to path (atomically),
// encoded as reporters.GenerateJSONReport does, but with every write error
// seen.
func writeGinkgoJSON(path string, r types.Report) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode([]types.Report{r})
	})
}
