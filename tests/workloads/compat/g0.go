// g0.go - the Go kind's system-stack workload (tests/t1200): most of its
// CPU time runs on the g0 stacks of Go's threads, where Go switches from a
// goroutine's stack through runtime.systemstack (the garbage collector's
// marking, span allocation), runtime.mcall (the scheduler, after
// runtime.Gosched) and runtime.morestack (stack growth).  A profiler's
// unwinder must end those stacks where Go's own traceback does.
// Usage: go-g0 [SECONDS=2]
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

type node struct {
	next *node
	kids [6]*node
}

// build allocates a list of n nodes, every one pointing at earlier ones:
// the collector has pointers to mark.
func build(n int) *node {
	var head *node
	for i := 0; i < n; i++ {
		nd := &node{next: head}
		for k := range nd.kids {
			nd.kids[k] = head
		}
		head = nd
	}
	return head
}

// deep recurses with a frame big enough that a new goroutine's small
// stack is grown (and copied) several times.
//
//go:noinline
func deep(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[(n*7)%256])
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var live *node
	sum := 0
	for time.Now().Before(end) {
		live = build(20000)
		done := make(chan int)
		for g := 0; g < 4; g++ {
			go func() {
				s := 0
				for i := 0; i < 50; i++ {
					s += deep(60)
					runtime.Gosched()
				}
				done <- s
			}()
		}
		for g := 0; g < 4; g++ {
			sum += <-done
		}
	}
	fmt.Println("go-g0", sum&1, live != nil)
}
