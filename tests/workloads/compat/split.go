// split.go - the Go kind of the compatibility matrix (tests/t1200): the
// known 60:30:10 split in a goroutine, so stacks must reach
// runtime.goexit; gamma is small enough for the Go compiler to inline,
// so its samples need the DWARF inline tree to be named.
// Truth (self): main.alpha 60%, main.beta 30%, main.gamma 10%.
// Usage: go-split [SECONDS=2]
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func alpha(n int) uint64 {
	x := uint64(0xa)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func beta(n int) uint64 {
	x := uint64(0xb)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func gamma(n int) uint64 {
	x := uint64(0xc)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan uint64)
	go func() {
		var sink uint64
		for time.Now().Before(end) {
			sink ^= alpha(600000)
			sink ^= beta(300000)
			sink ^= gamma(100000)
		}
		done <- sink
	}()
	fmt.Println("go-split", <-done&1)
}
