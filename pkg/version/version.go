// Package version tells which build of ovnk is running.
package version

import "runtime/debug"

// Version is set at link time by the Makefile (-X …/pkg/version.Version=…). A binary
// built with plain `go build` or `go install` falls back to the module version.
var Version = ""

// String returns the build's version, "(devel)" for an untagged local build.
func String() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
