package oracle

// The suite's argv markers: how its processes are found on a node, at
// both layers and by the fault injectors, defined once.

// DebugMarkerPrefix starts every debug container's marker.
const DebugMarkerPrefix = "ectest-debug-"

// TargetTokenFlag starts every target's marker (its --token flag).
const TargetTokenFlag = "--token="

// DebugMarker is the argv marker of a debug container's own process.
func DebugMarker(token, name string) string { return DebugMarkerPrefix + token + "-" + name }

// TargetToken is what a target of a spec serves and writes as its token.
func TargetToken(token, name string) string { return token + "-" + name }

// TargetMarker is the argv marker of a target's process.
func TargetMarker(token, name string) string { return TargetTokenFlag + TargetToken(token, name) }

// SleepWith is a shell command that keeps a container running with marker
// in its argv (as $0 of the shell, so no helper process carries it).
func SleepWith(marker string) []string { return []string{"sh", "-c", "sleep 86400 & wait", marker} }
