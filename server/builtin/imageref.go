package builtin

import (
	"strings"
)

// The grammar of a container image reference,
// [domain/]path[:tag][@digest], as container runtimes parse it.
const (
	refDomainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomain          = `(?:` + refDomainComponent + `(?:\.` + refDomainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
	refPathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refName            = `(?:` + refDomain + `/)?` + refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag             = `[\w][\w.-]{0,127}`
	refDigest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
)

var imageRefRe = lazyRegexp(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)

// maxImageNameLength bounds the repository part of a reference, as image
// registries do.
const maxImageNameLength = 255

// sha256HexLength is the length of a sha256 digest's hex part; such a
// digest of another length does not parse.
const sha256HexLength = 64

// defaultImageTag is the tag a reference without tag or digest means.
const defaultImageTag = "latest"

// imageTag returns the tag an image reference pulls: its tag, "latest" when
// it names neither tag nor digest, and "" when it names only a digest or
// does not parse.
func imageTag(image string) string {
	m := imageRefRe().FindStringSubmatch(image)
	if m == nil || len(m[1]) > maxImageNameLength {
		return ""
	}
	// A bare 64-hex-digit name would be an image ID, which is not a name.
	if isHex64(m[1]) {
		return ""
	}
	tag, digest := m[2], m[3]
	if alg, hex, ok := strings.Cut(digest, ":"); ok && alg == "sha256" && len(hex) != sha256HexLength {
		return ""
	}
	if tag == "" && digest == "" {
		return defaultImageTag
	}
	return tag
}

// pullsLatest reports whether an image reference pulls the "latest" tag
// (imageTag(image) == "latest"). A reference whose last path component
// holds a ':' names a tag or a digest, so unless it spells ":latest" it
// cannot: the common "repo:v1.2" is decided without the regexp.
func pullsLatest(image string) bool {
	last := image[strings.LastIndexByte(image, '/')+1:]
	if strings.IndexByte(last, ':') >= 0 && !strings.Contains(image, ":"+defaultImageTag) {
		return false
	}
	return imageTag(image) == defaultImageTag
}

func isHex64(s string) bool {
	if len(s) != sha256HexLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
