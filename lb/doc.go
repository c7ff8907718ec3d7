// Package lb is load balancing: measurement of the load of array
// elements and PEs, load-balancing steps (AtSync, periodic, manual),
// strategies, and reports.
//
// Importing it adds the runtime flags -balancer, -lbperiod, -lbdebug,
// -lbcsv, -lbsvg, -lbcomm and -lbobjonly (chare.RegisterFlag) and turns measurement on
// in jobs that name a balancer. See manager.go for how a step runs, and
// distrun.go for the distributed strategy, which runs between the PEs
// without gathering the objects anywhere.
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
// Reports (report.go) are pure too: log lines, CSV, SVG and PNG charts.
package lb
