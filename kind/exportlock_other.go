//go:build !unix

package kind

// lockFile: kind clusters are made and reused on Linux hosts only.
func lockFile(string) (func(), error) { return func() {}, nil }
