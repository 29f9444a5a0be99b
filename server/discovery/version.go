package discovery

import (
	"encoding/json"
	"net/http"
)

// VersionInfo is the body of /version. GitVersion must read as semver
// v1.32.x for kubectl's skew check; Major and Minor are derived from it when
// left empty.
type VersionInfo struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// defaultTreeState is reported when the build did not say.
const defaultTreeState = "clean"

// complete fills Major, Minor and GitTreeState from GitVersion when unset.
func (v VersionInfo) complete() VersionInfo {
	if v.Major == "" || v.Minor == "" {
		major, minor := splitSemver(v.GitVersion)
		if v.Major == "" {
			v.Major = major
		}
		if v.Minor == "" {
			v.Minor = minor
		}
	}
	if v.GitTreeState == "" {
		v.GitTreeState = defaultTreeState
	}
	return v
}

// splitSemver returns the major and minor numbers of "v1.32.0-extra".
func splitSemver(s string) (major, minor string) {
	if len(s) > 0 && s[0] == 'v' {
		s = s[1:]
	}
	digits := func(s string) (string, string) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return s[:i], s[i:]
	}
	major, rest := digits(s)
	if len(rest) > 0 && rest[0] == '.' {
		minor, _ = digits(rest[1:])
	}
	return major, minor
}

// serveVersion writes /version: always indented, without a trailing
// newline, whatever the client asked for.
func (h *Handler) serveVersion(w http.ResponseWriter) {
	body, err := json.MarshalIndent(h.opts.Version.complete(), "", "  ")
	if err != nil {
		writeStatus(w, errInternal(err))
		return
	}
	w.Header().Set(headerContentType, mediaJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
