package security

import (
	"fmt"
	"strings"
)

// htmlEscaper escapes the characters the upstream server escapes in the
// authorizer part of a 403 message.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// ForbiddenMessage returns the message of the 403 Status for a request the
// authorizers did not allow, in the upstream wording:
//
//	<resource>[.<group>][ "<name>"] is forbidden: User "<u>" cannot <verb> resource "<res>[/<sub>]" in API group "<group>" in the namespace "<ns>"
//	forbidden: User "<u>" cannot <verb> path "<path>"
//
// Cluster-scoped requests end in "at the cluster scope" instead; a non-empty
// reason is appended as ": <reason>". The part after "is forbidden: " has
// &, < and > HTML-escaped; the reason does not.
func ForbiddenMessage(a Attributes, reason string) string {
	msg := htmlEscaper.Replace(denialText(a))
	if reason != "" {
		msg += ": " + reason
	}
	return forbiddenPrefix(a) + msg
}

// denialText says who may not do what.
func denialText(a Attributes) string {
	user := ""
	if a.User != nil {
		user = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", user, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", user, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", user, a.Verb, res, a.APIGroup)
}

// forbiddenPrefix names the group-resource and object the way the Forbidden
// Status does: "forbidden: " when group and resource are empty,
// "<gr> is forbidden: " without a name and `<gr> "<name>" is forbidden: `
// with one, where <gr> is the resource, suffixed with ".<group>" when the
// group is not empty.
func forbiddenPrefix(a Attributes) string {
	if a.Resource == "" && a.APIGroup == "" {
		return "forbidden: "
	}
	gr := a.Resource
	if a.APIGroup != "" {
		gr += "." + a.APIGroup
	}
	if a.Name == "" {
		return gr + " is forbidden: "
	}
	return fmt.Sprintf("%s %q is forbidden: ", gr, a.Name)
}
