package registry

import (
	"crypto/rand"
	"fmt"
)

// nameSuffixAlphabet is what generateName suffixes are drawn from: no vowels
// and no look-alike characters, so generated names never spell words.
const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// maxGeneratedNameBase is how much of generateName is kept, leaving room for
// the five-character suffix within a 63-character label.
const maxGeneratedNameBase = 58

// GenerateName appends a random five-character suffix to base, keeping
// at most maxGeneratedNameBase characters of base, as upstream's name
// generator: the names of generateName and the names admission gives the
// volumes it adds.
func GenerateName(base string) string {
	if len(base) > maxGeneratedNameBase {
		base = base[:maxGeneratedNameBase]
	}
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	out := []byte(base)
	for _, x := range b {
		out = append(out, nameSuffixAlphabet[int(x)%len(nameSuffixAlphabet)])
	}
	return string(out)
}
