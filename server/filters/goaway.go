package filters

import (
	"math/rand/v2"
	"net/http"
)

// Goaway answers the given fraction of HTTP/2 requests with Connection:
// close, which makes Go's HTTP/2 server send GOAWAY: the client finishes
// its streams on the connection, watches included, and sends new
// requests over a new one, which a load balancer may give another
// server. HTTP/1 requests are left alone. A chance of 0 returns next.
func Goaway(next http.Handler, chance float64) http.Handler {
	return goaway(next, chance, rand.Float64)
}

// goaway is Goaway with the source of random numbers in [0, 1).
func goaway(next http.Handler, chance float64, random func() float64) http.Handler {
	if chance <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && random() < chance {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
