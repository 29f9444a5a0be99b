package codec

import (
	"net/url"
	"strconv"
	"strings"
)

// prettyAgents are User-Agent prefixes of terminals and browsers, which get
// indented JSON unless the query says otherwise.
var prettyAgents = []string{"curl", "Wget", "Mozilla/5.0"}

// WantPretty reports whether a JSON response is written indented. The
// negotiated Accept clause's parameter pretty=1 selects it outright.
// Otherwise a non-empty "pretty" query value decides alone
// (strconv.ParseBool; unparsable means compact), and without one the
// User-Agent decides: curl, Wget and browsers get pretty output.
func WantPretty(query url.Values, userAgent string, acceptParams map[string]string) bool {
	if acceptParams["pretty"] == "1" {
		return true
	}
	if v := query.Get("pretty"); v != "" {
		pretty, _ := strconv.ParseBool(v)
		return pretty
	}
	for _, p := range prettyAgents {
		if strings.HasPrefix(userAgent, p) {
			return true
		}
	}
	return false
}
