package server

import (
	"runtime"
	"runtime/debug"

	"platd/server/discovery"
)

// apiGitVersion is the API version platd speaks; clients check it for skew.
const apiGitVersion = "v1.32.0"

// Info describes this build.
type Info struct {
	discovery.VersionInfo
	// Platd is the module version of this binary ("(devel)" from a source
	// build).
	Platd string
}

// Version returns the build information /version and `platd version` show.
func Version() Info {
	v := Info{Platd: "(devel)", VersionInfo: discovery.VersionInfo{
		GitVersion: apiGitVersion,
		GoVersion:  runtime.Version(),
		Compiler:   runtime.Compiler,
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Platd = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.GitCommit = s.Value
			case "vcs.time":
				v.BuildDate = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					v.GitTreeState = "dirty"
				}
			}
		}
	}
	return v
}
