package hostdeps

import "testing"

func TestEveryPurposeHasPackagesAndParses(t *testing.T) {
	for _, p := range All() {
		if len(Packages[p]) == 0 {
			t.Errorf("%s: no packages", p)
		}
		got, err := ParsePurpose(string(p))
		if err != nil || len(got) != 1 || got[0] != p {
			t.Errorf("ParsePurpose(%s) = %v, %v", p, got, err)
		}
	}
	if all, err := ParsePurpose("all"); err != nil || len(all) != len(Packages) {
		t.Errorf("all: %v, %v", all, err)
	}
	if _, err := ParsePurpose("kubernetes"); err == nil {
		t.Error("an unknown purpose parsed")
	}
}
