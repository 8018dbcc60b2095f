package runtimes

import (
	"github.com/ectest/ectest/framework/capability"
)

// Probe is the -profile value for a runtime with no declaration yet: every
// capability's specs run, what the runtime does is recorded, and the run
// writes it as a profile (ObservedProfile) for the vendor to review. Only
// the capabilities every runtime of the OS must support are judged.
const Probe = "probe"

// ProbeProfile is the profile a probe runs with on os: the capabilities a
// profile for os must declare supported (capability.Definition.MandatoryOn)
// are declared supported and judged as in any run; every other one is
// declared capability.Probed, so its specs run and their observations are
// recorded, not judged.
func ProbeProfile(os string) *Profile {
	p := &Profile{
		Name:         Probe,
		Description:  "no declaration: ectest's probe records what the runtime does and judges only what every runtime on " + os + " must support",
		OS:           os,
		Capabilities: map[capability.Name]capability.Support{},
	}
	for _, d := range capability.All() {
		p.Capabilities[d.Name] = capability.Probed
		if d.MandatoryOnOS(os) {
			p.Capabilities[d.Name] = capability.Supported
		}
	}
	return p
}

// IsProbe says whether a run's profile (its name in a matrix or subject)
// was the probe's.
func IsProbe(profile string) bool { return profile == Probe }

// Resolve is the profile a run uses once the runtime has answered: the one
// -profile loaded (Load), the probe's for -profile=probe, or the builtin
// one that matches the runtime for -profile=auto (Detect).
func Resolve(spec string, loaded *Profile, runtimeName, os string, build uint16, handler string) (p *Profile, note string, err error) {
	switch {
	case loaded != nil:
		return loaded, "", nil
	case spec == Probe:
		return ProbeProfile(os), "", nil
	}
	return DetectBuild(runtimeName, os, build, handler)
}
