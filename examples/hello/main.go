// Hello is the smallest complete chare program: a main chare, a chare
// array, a broadcast and a reduction.
//
// The main chare creates an array of N elements and broadcasts SayHi to
// all of them. Each element prints where it runs and contributes its index
// to a sum reduction; the reduction's result arrives at the main chare's
// Done entry method as a typed int, and the main chare checks that it is
// 0+1+...+(N-1) = N(N-1)/2 before ending the job.
//
// Run it with
//
//	go run ./examples/hello -p 4
//	go run ./examples/hello -p 4 -n 100
//
// The runtime takes its flags (-p N) anywhere on the line, the program its own (-n).
// The last line is "hello: ok elements=16 pes=4 sum=120", or
// "hello: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/internal/exutil"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare: it lives on PE 0 and drives the program.
type Main struct {
	chare.Chare[Main]
	n   int // elements
	sum int // the reduction's result, once Done has run
}

// Hello is an element of the array, indexed 0..N-1.
type Hello struct {
	array.Element[Hello, int]
}

// HiMsg is broadcast to every element. It carries the callback of the sum
// reduction: callbacks are values and travel in messages.
type HiMsg struct {
	Done chare.Callback
}

func init() {
	// Register chare types in the same order in every process.
	chare.Register[Main]()
	chare.Register[Hello]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start is the program's main function. It runs on PE 0 with the
// arguments the runtime did not take.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("hello")
	fs.IntVar(&m.n, "n", 16, "number of array elements")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	if m.n < 1 {
		m.fail(2, "bad arguments: -n %d: want at least 1 element", m.n)
		return
	}
	hellos, err := array.New[Hello](m, array.Dims(m.n))
	if err != nil {
		m.fail(1, "creating the array: %v", err)
		return
	}
	// Sending through the array proxy broadcasts to every element.
	done := chare.EntryCallback(m.ThisProxy(), (*Main).Done)
	if err := chare.Send(m, hellos, (*Hello).SayHi, HiMsg{Done: done}); err != nil {
		m.fail(1, "broadcasting SayHi: %v", err)
	}
}

// SayHi greets and contributes the element's index to the sum.
func (h *Hello) SayHi(msg HiMsg) {
	fmt.Fprintf(out, "hello from element %d on PE %d\n", h.ThisIndex(), h.PE())
	if err := h.Contribute(h.ThisIndex(), reducer.SumInt, msg.Done); err != nil {
		h.Abort(err)
	}
}

// Done receives the sum of all indices.
func (m *Main) Done(sum int) {
	m.sum = sum
	if want := m.n * (m.n - 1) / 2; sum != want {
		m.fail(1, "sum of indices is %d, want %d", sum, want)
		return
	}
	fmt.Fprintf(out, "hello: ok elements=%d pes=%d sum=%d\n", m.n, m.NumPEs(), sum)
	m.Exit(0)
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "hello", code, format, args...)
}
