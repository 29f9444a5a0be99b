package controllers

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"platd/bolt"
)

// TestDecodeEach: values come back in order whether one goroutine or
// several decode them, and those that fail are skipped in order.
func TestDecodeEach(t *testing.T) {
	for _, n := range []int{0, 1, decodeMinPerWorker*2 - 1, decodeMinPerWorker * 2, 101} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var kvs []bolt.KV
			var want, wantSkipped []int
			for i := range n {
				kvs = append(kvs, bolt.KV{Key: fmt.Sprint(i), Value: []byte(strconv.Itoa(i))})
				if i%7 == 3 {
					wantSkipped = append(wantSkipped, i)
				} else {
					want = append(want, i)
				}
			}
			decode := func(b []byte) (int, error) {
				i, _ := strconv.Atoi(string(b))
				if i%7 == 3 {
					return 0, errors.New("bad")
				}
				return i, nil
			}
			var skipped []int
			got := decodeEach(kvs, decode, func(kv bolt.KV, err error) {
				i, _ := strconv.Atoi(kv.Key)
				skipped = append(skipped, i)
			})
			if !slices.Equal(got, want) || !slices.Equal(skipped, wantSkipped) {
				t.Errorf("decodeEach = %v, skipped %v; want %v, skipped %v", got, skipped, want, wantSkipped)
			}
		})
	}
}
