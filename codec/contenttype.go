package codec

import (
	"fmt"
	"mime"
)

// DefaultContentType is the media type assumed for a request body sent
// without a Content-Type header.
const DefaultContentType = "application/json"

// ParseContentType parses a request's Content-Type header into its
// lower-cased media type and parameters (the REST layer ignores parameters
// such as charset). An empty header means DefaultContentType with no
// parameters. An unparsable header yields an error wrapping ErrContentType;
// callers answer it with 415.
func ParseContentType(h string) (mediaType string, params map[string]string, err error) {
	if h == "" {
		return DefaultContentType, map[string]string{}, nil
	}
	mediaType, params, err = mime.ParseMediaType(h)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %q: %w", ErrContentType, h, err)
	}
	return mediaType, params, nil
}
