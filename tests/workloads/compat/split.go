// split.go - the Go kind of the compatibility matrix (tests/t1200): the
// known 60:30:10 split in a goroutine, so stacks must reach
// runtime.goexit; gamma is small enough for the Go compiler to inline,
// so its samples need the DWARF inline tree to be named.
// Truth (self): main.alpha 60%, main.beta 30%, main.gamma 10%.
// Usage: go-split [CPU-SECONDS=2]
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// cpuTime is the process's CPU time, as ../wl.h's wl_cpu_now: the run is a
// budget of CPU time, so a loaded machine stretches it instead of starving
// it of samples (a 1 s wall-clock run got 130 samples at load 10).
func cpuTime() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

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
	end := cpuTime() + time.Duration(secs*float64(time.Second))
	done := make(chan uint64)
	go func() {
		var sink uint64
		// rounds of varying length (as wl_round_permille in ../wl.h):
		// a fixed-length round can alias with the sampling clock
		state := uint64(0x9e3779b97f4a7c15)
		for cpuTime() < end {
			state = state*6364136223846793005 + 1442695040888963407
			unit := int(100 * (500 + (state>>33)%1000))
			sink ^= alpha(6 * unit)
			sink ^= beta(3 * unit)
			sink ^= gamma(unit)
		}
		done <- sink
	}()
	fmt.Println("go-split", <-done&1)
}
