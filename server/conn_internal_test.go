package server

import (
	"math"
	"testing"
)

// The connection's HTTP/2 window is a frame per stream, never past
// HTTP/2's largest window.
func TestHTTP2Window(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ streams, want int }{
		{100, 100 * http2FrameSize},
		{8191, 8191 * http2FrameSize},
		{8192, math.MaxInt32},
		{1 << 20, math.MaxInt32},
	} {
		if got := http2Config(tc.streams).MaxReceiveBufferPerConnection; got != tc.want {
			t.Errorf("%d streams: window %d, want %d", tc.streams, got, tc.want)
		}
	}
}
