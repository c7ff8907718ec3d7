// Delegation shows that a delegated proxy stays delegated wherever it
// goes: the main chare delegates one proxy of an array to a TRAM delegate
// and another to a Comlib Streaming instance, and hands both to the
// elements in a broadcast. The elements are spread over every PE of every
// process (-nodes), and each sends -sends messages through each proxy to
// random elements. Every one of those sends, in every process, goes
// through its delegate: the program gathers each delegate's figures from
// the whole job and prints, per delegate,
//
//	tram: delegated=<n> direct=0 processes=<n0>,<n1>,...
//	comlib: delegated=<n> direct=0 processes=<n0>,<n1>,...
//
// where delegated counts the sends the delegate took (TRAM's Report,
// Comlib's Report; processes splits them by process) and direct the sends
// that went past it. Run it with
//
//	go run ./examples/delegation -p 4 -nodes 2
//
// The last line is "delegation: ok pes=4 nodes=2 elements=32 sends=... ...",
// or "delegation: FAILED ..." with a non-zero exit code.
package main

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/internal/exutil"
	"github.com/charmgo/charm/tram"
)

// out is where the program prints; the test replaces it.
var out io.Writer = os.Stdout

// Main is the main chare; its Start is threaded, so it waits for futures.
type Main struct {
	chare.Chare[Main]
	n, sends int
	// The figures the program found, for the test.
	viaTRAM, viaComlib int64
}

// Cell is an element of the array: it sends through the two delegated
// proxies it gets, and counts what it receives by way.
type Cell struct {
	array.Element[Cell, int]
	GotTRAM, GotComlib int
}

// GoMsg carries the two delegated proxies to every element.
type GoMsg struct {
	ViaTRAM, ViaComlib array.Proxy[Cell, int]
	N, Sends           int
}

func init() {
	// Register chare types in the same order in every process.
	chare.Register[Main](chare.Threaded((*Main).Start))
	chare.Register[Cell]()
}

func main() { os.Exit(chare.Main((*Main).Start)) }

// Start is the program's main function.
func (m *Main) Start(args []string) {
	fs := exutil.NewFlagSet("delegation")
	fs.IntVar(&m.n, "n", 32, "number of array elements")
	fs.IntVar(&m.sends, "sends", 100, "messages each element sends through each delegated proxy")
	if !exutil.Parse(out, m, fs, args) {
		return
	}
	if m.n < 1 || m.sends < 0 {
		m.fail(2, "bad arguments: -n %d -sends %d: want at least 1 element and sends ≥ 0", m.n, m.sends)
		return
	}
	if err := m.run(); err != nil {
		m.fail(1, "%v", err)
	}
}

func (m *Main) run() error {
	cells, err := array.New[Cell](m, array.Dims(m.n))
	if err != nil {
		return fmt.Errorf("creating the array: %w", err)
	}
	// The zero options: a 2-D grid of processes × PEs, 256 items per
	// peer, and the delegate's default flush period.
	d, err := tram.NewDelegate(m, tram.Options{})
	if err != nil {
		return fmt.Errorf("creating the TRAM delegate: %w", err)
	}
	inst, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 16}))
	if err != nil {
		return fmt.Errorf("creating the Comlib instance: %w", err)
	}
	if err := chare.Send(m, cells, (*Cell).Go, GoMsg{ViaTRAM: cells.Delegate(d), ViaComlib: cells.Delegate(inst), N: m.n, Sends: m.sends}); err != nil {
		return fmt.Errorf("broadcasting Go: %w", err)
	}
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	if _, err := qd.Get(m); err != nil {
		return err
	}
	got := chare.NewFuture[[]int](m)
	if err := chare.Send(m, cells, (*Cell).Totals, got.Callback()); err != nil {
		return err
	}
	totals, err := got.Get(m)
	if err != nil {
		return err
	}
	tf := chare.NewFuture[tram.DelegateReport](m)
	if err := d.Report(m, tf.Callback()); err != nil {
		return err
	}
	tr, err := tf.Get(m)
	if err != nil {
		return err
	}
	cf := chare.NewFuture[comlib.Report](m)
	if err := inst.Report(m, cf.Callback()); err != nil {
		return err
	}
	cr, err := cf.Get(m)
	if err != nil {
		return err
	}

	sent := int64(m.n * m.sends) // through each proxy
	var tp, cp []int64
	for _, p := range tr.Process {
		tp = append(tp, p.Items)
	}
	for _, p := range cr.Process {
		cp = append(cp, p.Messages)
	}
	m.viaTRAM, m.viaComlib = tr.Job.Items, cr.Job.Messages
	fmt.Fprintf(out, "tram: delegated=%d direct=%d processes=%s\n", m.viaTRAM, sent-m.viaTRAM, join(tp))
	fmt.Fprintf(out, "comlib: delegated=%d direct=%d processes=%s\n", m.viaComlib, sent-m.viaComlib, join(cp))
	switch {
	case totals[0] != int(sent) || totals[1] != int(sent):
		return fmt.Errorf("received %d messages through TRAM and %d through Comlib, want %d each", totals[0], totals[1], sent)
	case m.viaTRAM != sent || m.viaComlib != sent:
		return fmt.Errorf("the delegates took %d (TRAM) and %d (Comlib) of %d sends each: the others went past them", m.viaTRAM, m.viaComlib, sent)
	}
	rt := m.Here().Job().Runtime()
	fmt.Fprintf(out, "delegation: ok pes=%d nodes=%d elements=%d sends=%d tram=%d comlib=%d\n", m.NumPEs(), rt.NumNodes(), m.n, 2*sent, m.viaTRAM, m.viaComlib)
	m.Exit(0)
	return nil
}

func join(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// Go sends through both delegated proxies.
func (c *Cell) Go(m GoMsg) {
	r := rand.New(rand.NewSource(int64(c.ThisIndex())))
	n := m.N
	for i := 0; i < m.Sends; i++ {
		if err := chare.Send(c, m.ViaTRAM.At(r.Intn(n)), (*Cell).ByTRAM, c.ThisIndex()); err != nil {
			c.Abort(err)
			return
		}
		if err := chare.Send(c, m.ViaComlib.At(r.Intn(n)), (*Cell).ByComlib, c.ThisIndex()); err != nil {
			c.Abort(err)
			return
		}
	}
}

// ByTRAM receives a message sent through the TRAM delegate.
func (c *Cell) ByTRAM(from int) { c.GotTRAM++ }

// ByComlib receives a message sent through the Comlib instance.
func (c *Cell) ByComlib(from int) { c.GotComlib++ }

// Totals contributes what the element received.
func (c *Cell) Totals(cb chare.Callback) {
	if err := c.Contribute([]int{c.GotTRAM, c.GotComlib}, reducer.SumInt, cb); err != nil {
		c.Abort(err)
	}
}

// fail prints the final FAILED line and ends the job with code.
func (m *Main) fail(code int, format string, args ...any) {
	exutil.Fail(out, m, "delegation", code, format, args...)
}
