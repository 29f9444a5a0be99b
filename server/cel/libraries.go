package cel

import "github.com/google/cel-go/cel"

// Libraries returns the platform's function libraries (URLs, regex, lists,
// quantity, IP and CIDR, format) for environments built outside this
// package, such as the JWT authenticators' claims and user environments.
func Libraries() []cel.EnvOption {
	return []cel.EnvOption{urlsLib(), regexLib(), listsLib(), quantityLib(), netLib(), formatLib()}
}
