package pinns

import "os"

// Name is the program's name: CRI-O runs pinns_path, and an ectest binary
// started under this name (a link named pinns) runs ProgramMain
// (fixtures/programs).
const Name = "pinns"

// ErrPrefix starts every message pinns writes when it fails, as upstream's
// does.
const ErrPrefix = "[pinns:e]: "

// ProgramMain is pinns's main for a binary that carries it among other
// programs: the namespaces' holder when re-executed by Run (ChildMain
// does not return then), pinns's command line otherwise.
func ProgramMain(args []string) int {
	ChildMain()
	return Main(args, os.Stderr)
}
