package audit

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"time"

	"platd/security"
	"platd/server/apierr"
)

// Event is one audit.<domain>/v1 Event line, its fields in upstream's
// order.
type Event struct {
	Kind                     string            `json:"kind"`
	APIVersion               string            `json:"apiVersion"`
	Level                    string            `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    string            `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     UserInfo          `json:"user"`
	ImpersonatedUser         *UserInfo         `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *ObjectReference  `json:"objectRef,omitempty"`
	ResponseStatus           *ResponseStatus   `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	ResponseObject           json.RawMessage   `json:"responseObject,omitempty"`
	RequestReceivedTimestamp MicroTime         `json:"requestReceivedTimestamp"`
	StageTimestamp           MicroTime         `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// UserInfo is a user as an Event records it.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

func userInfo(u *security.User) UserInfo {
	if u == nil {
		return UserInfo{}
	}
	return UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// ObjectReference is what a resource request addresses.
type ObjectReference struct {
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Subresource     string `json:"subresource,omitempty"`
}

// ResponseStatus is the bounded part of a response's Status: the code of
// every response, and for a Status body its status, message, reason and
// details.
type ResponseStatus struct {
	Metadata struct{}        `json:"metadata"`
	Status   string          `json:"status,omitempty"`
	Message  string          `json:"message,omitempty"`
	Reason   apierr.Reason   `json:"reason,omitempty"`
	Details  *apierr.Details `json:"details,omitempty"`
	Code     int32           `json:"code,omitempty"`
}

// MicroTime is a timestamp written with microseconds, as upstream's
// MicroTime.
type MicroTime time.Time

// microLayout is MicroTime's JSON layout.
const microLayout = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON writes the quoted UTC time.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(microLayout)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, microLayout)
	return append(b, '"'), nil
}

// maxUserAgent bounds the recorded User-Agent, as upstream's.
const maxUserAgent = 1024

func userAgent(r *http.Request) string {
	ua := r.UserAgent()
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent] + "...TRUNCATED"
	}
	return ua
}

// SourceIPs lists the client addresses of r as upstream does: those of
// X-Forwarded-For, then X-Real-Ip unless already listed, then the peer's
// address unless it is the last one listed.
func SourceIPs(r *http.Request) []string {
	var ips []net.IP
	if fwd := r.Header.Get("X-Forwarded-For"); fwd != "" {
		for _, part := range strings.Split(fwd, ",") {
			if ip := net.ParseIP(strings.TrimSpace(part)); ip != nil {
				ips = append(ips, ip)
			}
		}
	}
	if real := r.Header.Get("X-Real-Ip"); real != "" {
		if ip := net.ParseIP(real); ip != nil && !containsIP(ips, ip) {
			ips = append(ips, ip)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && (len(ips) == 0 || !ips[len(ips)-1].Equal(ip)) {
		ips = append(ips, ip)
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

func containsIP(ips []net.IP, ip net.IP) bool {
	for _, x := range ips {
		if x.Equal(ip) {
			return true
		}
	}
	return false
}
