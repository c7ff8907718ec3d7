// Package lb is load balancing: measurement of the load of array
// elements and PEs, load-balancing steps (AtSync, periodic, manual),
// strategies, and reports.
//
// Importing it (a blank import is enough) adds the runtime flags
// -balancer, -lbperiod, -lbdebug, -lbcsv, -lbsvg, -lbcomm and -lbobjonly
// (chare.ParseArgs takes them) and turns measurement on in jobs that name a
// balancer:
//
//	import _ "github.com/charmgo/charm/lb"
//
//	go run ./examples/lbtest -p 8 -balancer greedy,refine -lbdebug
//
// A step gathers the loads of the elements and PEs on PE 0, runs the
// strategy, and sends each PE its moves; the elements resume where they
// arrive. AtSync steps start once every element of an array with a
// ResumeFromSync method has called AtSync; periodic steps (-lbperiod) and
// manual ones (StartStep) cover every array and move elements wherever
// they are. The distributed strategy runs between the PEs without
// gathering the objects anywhere. Notify, NotifyEntry and NotifyFunc
// deliver each step's Report.
//
// Elements whose state would not survive migration (their type has
// fields that are not packed and not declared chare.Transient; see
// chare.Type.PackError) are not migratable: every strategy leaves them
// where they are, their load counts on their PE, and each step's Report
// counts them (Fixed) and names their types (Unmovable); the first step
// that meets such a type says so once on stderr.
//
// Strategies are pure functions from a Snapshot (objects with their load
// and PE, the PEs' background load, speed and availability, optionally the
// communication graph) to a Placement; they are tested without a runtime.
// Lookup finds one by name, Register adds one. A placement that Validate
// refuses is reported and nothing moves. Reports are pure too: log lines,
// CSV, SVG and PNG charts.
package lb
